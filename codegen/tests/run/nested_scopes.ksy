meta:
  id: nested_scopes
  endian: le
seq:
  - id: a
    type: outer
  - id: b
    type: item
types:
  outer:
    seq:
      - id: first
        type: item
      - id: kind
        type: u1
        enum: animal
      - id: is_cat
        type: u1
        if: kind == outer::animal::cat
    types:
      item:
        seq:
          - id: inner_value
            type: u2
    enums:
      animal:
        1: cat
        2: dog
  item:
    seq:
      - id: top_value
        type: u1
