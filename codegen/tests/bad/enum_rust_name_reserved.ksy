meta:
  id: reserved_enum
seq:
  - id: a
    type: u1
    enum: default
enums:
  default:
    0: zero
