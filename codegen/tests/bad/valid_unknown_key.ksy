meta:
  id: valid_unknown_key
seq:
  - id: a
    type: u1
    valid:
      anyof: [1, 2]
