meta:
  id: unknown_top
seq:
  - id: a
    type: u1
structures:
  b:
    seq: []
