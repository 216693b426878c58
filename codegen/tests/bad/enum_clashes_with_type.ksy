meta:
  id: enum_clash
seq:
  - id: kind
    type: u1
    enum: frame
  - id: body
    type: frame
types:
  frame:
    seq:
      - id: x
        type: u1
enums:
  frame:
    0: zero
