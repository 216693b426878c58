meta:
  id: sum_of_enum
seq:
  - id: total
    type: u1
    enum: kind
    -sp-sum-of: frames.dt
  - id: frames
    type: frame
    repeat: eos
types:
  frame:
    seq:
      - id: dt
        type: u1
enums:
  kind:
    0: zero
