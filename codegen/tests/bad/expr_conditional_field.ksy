meta:
  id: conditional_field
seq:
  - id: flags
    type: u1
  - id: len
    type: u1
    if: flags != 0
  - id: data
    size: len
