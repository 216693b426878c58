meta:
  id: sum_of_element_float
seq:
  - id: total
    type: u4le
    -sp-sum-of: frames.dt
  - id: frames
    type: frame
    repeat: eos
types:
  frame:
    seq:
      - id: dt
        type: f4le
