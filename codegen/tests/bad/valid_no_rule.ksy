meta:
  id: valid_no_rule
seq:
  - id: a
    type: u1
    valid: {}
