meta:
  id: My-Format
seq:
  - id: a
    type: u1
