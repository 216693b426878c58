meta:
  id: switch_case_args_differ
seq:
  - id: kind
    type: u1
  - id: body
    type:
      switch-on: kind
      cases:
        1: block(1)
        2: block(2)
types:
  block:
    params:
      - id: n
        type: u1
    seq:
      - id: data
        size: n
