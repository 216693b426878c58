meta:
  id: enum_key_not_integer
seq:
  - id: a
    type: u1
    enum: kind
enums:
  kind:
    0: zero
    one: 1
