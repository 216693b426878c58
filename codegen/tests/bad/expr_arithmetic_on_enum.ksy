meta:
  id: arithmetic_on_enum
seq:
  - id: kind
    type: u1
    enum: kind
  - id: data
    size: kind * 2
enums:
  kind:
    0: zero
    1: one
