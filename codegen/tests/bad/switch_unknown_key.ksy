meta:
  id: switch_unknown_key
seq:
  - id: kind
    type: u1
  - id: body
    type:
      switch-on: kind
      case:
        0: empty
types:
  empty:
    seq: []
