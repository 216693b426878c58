meta:
  id: field_consume
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    consume: false
