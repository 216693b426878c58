meta:
  id: switch_case_unknown
seq:
  - id: kind
    type: u1
  - id: body
    type:
      switch-on: kind
      cases:
        0: empty
        _: rest
types:
  empty:
    seq: []
