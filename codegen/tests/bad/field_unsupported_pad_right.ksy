meta:
  id: field_pad_right
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    pad-right: 0x20
