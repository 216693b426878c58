meta:
  id: enum_vs_int
seq:
  - id: kind
    type: u1
    enum: kind
  - id: extra
    type: u1
    if: kind == 1
enums:
  kind:
    0: zero
    1: one
