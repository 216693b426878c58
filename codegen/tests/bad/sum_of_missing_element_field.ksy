meta:
  id: sum_of_missing_field
seq:
  - id: total
    type: u4le
    -sp-sum-of: frames.dt_ms
  - id: frames
    type: frame
    repeat: eos
types:
  frame:
    seq:
      - id: dt
        type: u1
