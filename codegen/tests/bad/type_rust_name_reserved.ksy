meta:
  id: reserved_type
seq:
  - id: outcome
    type: result
types:
  result:
    seq:
      - id: code
        type: u1
