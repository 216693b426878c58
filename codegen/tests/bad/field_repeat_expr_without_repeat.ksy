meta:
  id: repeat_expr_without_repeat
seq:
  - id: a
    type: u1
    repeat-expr: 4
