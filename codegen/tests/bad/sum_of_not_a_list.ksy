meta:
  id: sum_of_not_list
seq:
  - id: total
    type: u4le
    -sp-sum-of: frame.dt
  - id: frame
    type: frame
types:
  frame:
    seq:
      - id: dt
        type: u1
