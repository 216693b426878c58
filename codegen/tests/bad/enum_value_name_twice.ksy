meta:
  id: enum_value_name_twice
seq:
  - id: a
    type: u1
    enum: kind
enums:
  kind:
    0: zero
    1: zero
