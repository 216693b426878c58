meta:
  id: lazy_self
seq:
  - id: code
    type: u1
instances:
  again:
    pos: 1
    type: lazy_self
  again_code:
    value: again.code
