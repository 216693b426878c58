meta:
  id: later_field
seq:
  - id: data
    size: len
  - id: len
    type: u1
