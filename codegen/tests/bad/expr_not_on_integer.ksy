meta:
  id: not_on_integer
seq:
  - id: flags
    type: u1
  - id: extra
    type: u1
    if: not flags
