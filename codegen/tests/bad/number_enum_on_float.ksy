meta:
  id: enum_on_float
  endian: le
seq:
  - id: a
    type: f4
    enum: kind
enums:
  kind:
    0: zero
