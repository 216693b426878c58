meta:
  id: bits_enum_too_narrow
seq:
  - id: a
    type: b2
    enum: e
    -sp-strict: true
  - id: pad
    type: b6
enums:
  e:
    1: one
    9: nine
