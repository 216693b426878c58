meta:
  id: switch_on_bad_expression
seq:
  - id: kind
    type: u1
  - id: body
    type:
      switch-on: kind +
      cases:
        0: empty
types:
  empty:
    seq: []
