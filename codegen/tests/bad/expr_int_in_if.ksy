meta:
  id: int_in_if
seq:
  - id: flags
    type: u1
  - id: extra
    type: u1
    if: flags & 1
