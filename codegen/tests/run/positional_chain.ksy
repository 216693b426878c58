meta:
  id: positional_chain
seq:
  - id: head
    type: node
types:
  node:
    seq:
      - id: next_at
        type: u1
      - id: value
        type: u1
    instances:
      next:
        pos: next_at
        type: node
        if: next_at != 0
