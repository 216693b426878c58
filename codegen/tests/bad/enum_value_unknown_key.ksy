meta:
  id: enum_value_unknown_key
seq:
  - id: a
    type: u1
    enum: kind
enums:
  kind:
    0:
      id: zero
      dco: Nothing.
