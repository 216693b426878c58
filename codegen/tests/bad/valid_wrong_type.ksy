meta:
  id: valid_wrong_type
seq:
  - id: kind
    type: u1
    enum: kind
    valid: 1
enums:
  kind:
    0: zero
    1: one
