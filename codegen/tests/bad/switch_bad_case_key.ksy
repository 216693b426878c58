meta:
  id: switch_bad_case_key
seq:
  - id: kind
    type: u1
  - id: body
    type:
      switch-on: kind
      cases:
        kind +: empty
types:
  empty:
    seq: []
