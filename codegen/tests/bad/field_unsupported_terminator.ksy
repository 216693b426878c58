meta:
  id: field_terminator
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    terminator: 0
