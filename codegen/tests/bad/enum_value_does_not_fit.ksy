meta:
  id: enum_does_not_fit
  -sp-strict: true
seq:
  - id: kind
    type: u1
    enum: kind
enums:
  kind:
    0: zero
    256: big
