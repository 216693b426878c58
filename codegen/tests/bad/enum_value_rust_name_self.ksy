meta:
  id: enum_value_self
seq:
  - id: a
    type: u1
    enum: owner
enums:
  owner:
    0: self
    1: other
