meta:
  id: tree
seq:
  - id: count
    type: u1
  - id: children
    type: tree
    repeat: expr
    repeat-expr: count
