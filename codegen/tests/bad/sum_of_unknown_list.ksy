meta:
  id: sum_of_unknown_list
seq:
  - id: total
    type: u4le
    -sp-sum-of: frame.dt
  - id: frames
    type: frame
    repeat: eos
types:
  frame:
    seq:
      - id: dt
        type: u1
