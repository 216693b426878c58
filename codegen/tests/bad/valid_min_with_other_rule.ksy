meta:
  id: min_with_eq
seq:
  - id: a
    type: u1
    valid:
      min: 1
      eq: 2
