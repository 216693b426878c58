meta:
  id: field_value
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    value: a * 2
