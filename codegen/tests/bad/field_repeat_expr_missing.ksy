meta:
  id: repeat_expr_missing
seq:
  - id: a
    type: u1
    repeat: expr
