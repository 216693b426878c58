meta:
  id: complex_key
seq:
  - id: a
    ? [type]
    : u1
