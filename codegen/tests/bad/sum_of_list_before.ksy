meta:
  id: sum_of_list_before
seq:
  - id: frames
    type: frame
    repeat: expr
    repeat-expr: 2
  - id: total
    type: u2le
    -sp-sum-of: frames.dt
types:
  frame:
    seq:
      - id: dt
        type: u1
