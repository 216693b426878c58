meta:
  id: shift_too_far
seq:
  - id: len
    type: u1
  - id: data
    size: len << 64
