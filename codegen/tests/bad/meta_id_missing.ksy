meta:
  title: No id
seq:
  - id: a
    type: u1
