meta:
  id: switch_with_size
seq:
  - id: kind
    type: u1
  - id: body
    size: 4
    type:
      switch-on: kind
      cases:
        0: empty
types:
  empty:
    seq: []
