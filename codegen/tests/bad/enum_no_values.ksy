meta:
  id: enum_no_values
seq:
  - id: a
    type: u1
    enum: kind
enums:
  kind: {}
