meta:
  id: typo
seq:
  - id: a
    type: u1
enum:
  kind:
    0: zero
