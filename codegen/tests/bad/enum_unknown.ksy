meta:
  id: enum_unknown
seq:
  - id: kind
    type: u1
    enum: frame_kind
enums:
  kind:
    0: zero
