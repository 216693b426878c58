meta:
  id: param_clashes_with_field
types:
  block:
    params:
      - id: len
        type: u1
    seq:
      - id: len
        type: u1
