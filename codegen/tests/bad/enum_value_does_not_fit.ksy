meta:
  id: enum_does_not_fit
seq:
  - id: kind
    type: u1
    enum: kind
enums:
  kind:
    0: zero
    256: big
