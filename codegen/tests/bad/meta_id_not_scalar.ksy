meta:
  id: [a, b]
seq:
  - id: a
    type: u1
