meta:
  id: switch_without_on
seq:
  - id: kind
    type: u1
  - id: body
    type:
      cases:
        0: empty
types:
  empty:
    seq: []
