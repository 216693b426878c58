meta:
  id: lists_valid
seq:
  - type: u1
  - id: small
    type: u1
    repeat: expr
    repeat-expr: 3
    valid:
      max: 9
