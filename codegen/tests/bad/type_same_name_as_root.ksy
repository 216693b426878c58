meta:
  id: header
seq:
  - id: a
    type: u1
types:
  header:
    seq:
      - id: x
        type: u1
