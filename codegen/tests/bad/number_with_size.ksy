meta:
  id: number_with_size
seq:
  - id: a
    type: u1
    size: 2
