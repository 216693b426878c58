meta:
  id: type_recursive
seq:
  - id: node
    type: node
types:
  node:
    seq:
      - id: value
        type: u1
      - id: next
        type: node
