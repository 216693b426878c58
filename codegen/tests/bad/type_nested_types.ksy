meta:
  id: nested_types
seq:
  - id: a
    type: outer
types:
  outer:
    seq:
      - id: x
        type: u1
    types:
      inner:
        seq:
          - id: y
            type: u1
