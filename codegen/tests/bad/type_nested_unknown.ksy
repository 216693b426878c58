meta:
  id: type_nested_unknown
seq:
  - id: a
    type: outer
  - id: b
    type: inner
types:
  outer:
    seq:
      - id: x
        type: inner
    types:
      inner:
        seq:
          - id: y
            type: u1
