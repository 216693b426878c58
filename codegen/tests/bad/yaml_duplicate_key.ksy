meta:
  id: duplicate_key
seq:
  - id: a
    type: u1
    type: u2
