meta:
  id: field_pos
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    pos: 16
