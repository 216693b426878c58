meta:
  id: tree
seq:
  - id: count
    type: u1
  - id: child
    type: tree
