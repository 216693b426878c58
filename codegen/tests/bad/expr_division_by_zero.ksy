meta:
  id: division_by_zero
seq:
  - id: total
    type: u1
  - id: data
    size: total % 0
