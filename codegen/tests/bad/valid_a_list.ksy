meta:
  id: valid_list
seq:
  - id: a
    type: u1
    valid: [1, 2]
