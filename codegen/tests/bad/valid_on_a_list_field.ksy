meta:
  id: valid_on_list
seq:
  - id: a
    type: u1
    repeat: expr
    repeat-expr: 2
    valid: 1
