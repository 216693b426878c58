meta: my_format
seq:
  - id: a
    type: u1
