meta:
  id: enum_name_bad
seq:
  - id: a
    type: u1
    enum: FrameKind
enums:
  FrameKind:
    0: zero
