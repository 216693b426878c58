meta:
  id: if_bad_expression
seq:
  - id: flags
    type: u1
  - id: a
    type: u1
    if: flags & 1 ==
