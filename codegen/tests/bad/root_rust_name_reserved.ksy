meta:
  id: default
seq:
  - id: a
    type: u1
