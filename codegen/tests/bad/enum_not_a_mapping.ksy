meta:
  id: enum_not_mapping
seq:
  - id: a
    type: u1
    enum: kind
enums:
  kind: [zero, one]
