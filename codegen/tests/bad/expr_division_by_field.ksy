meta:
  id: division_by_field
seq:
  - id: total
    type: u1
  - id: parts
    type: u1
  - id: data
    size: total / parts
