meta:
  id: shift_by_field
seq:
  - id: shift
    type: u1
  - id: data
    size: 1 << shift
