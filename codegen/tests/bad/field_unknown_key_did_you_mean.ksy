meta:
  id: field_typo
seq:
  - id: a
    type: u1
    repeat-exp: 2
