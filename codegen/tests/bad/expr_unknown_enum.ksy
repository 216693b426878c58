meta:
  id: expr_unknown_enum
seq:
  - id: kind
    type: u1
    enum: kind
  - id: extra
    type: u1
    if: kind == frame_kind::one
enums:
  kind:
    0: zero
    1: one
