meta:
  id: ordered_enum
seq:
  - id: kind
    type: u1
    enum: kind
  - id: extra
    type: u1
    if: kind > kind::zero
enums:
  kind:
    0: zero
    1: one
