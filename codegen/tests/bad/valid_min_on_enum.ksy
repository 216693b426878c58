meta:
  id: valid_min_on_enum
seq:
  - id: kind
    type: u1
    enum: kind
    valid:
      min: kind::one
enums:
  kind:
    0: zero
    1: one
