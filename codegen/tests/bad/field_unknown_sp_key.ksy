meta:
  id: field_unknown_sp
seq:
  - id: a
    type: u1
    -sp-unit: ms
