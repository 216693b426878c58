meta:
  id: field_include
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    include: true
