meta:
  id: sum_of_malformed
seq:
  - id: total
    type: u4le
    -sp-sum-of: frames
  - id: frames
    type: frame
    repeat: eos
types:
  frame:
    seq:
      - id: dt
        type: u1
