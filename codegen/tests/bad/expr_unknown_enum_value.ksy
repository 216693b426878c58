meta:
  id: unknown_enum_value
seq:
  - id: kind
    type: u1
    enum: kind
  - id: extra
    type: u1
    if: kind == kind::two
enums:
  kind:
    0: zero
    1: one
