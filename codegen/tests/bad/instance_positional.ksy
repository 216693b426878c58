meta:
  id: instance_positional
seq:
  - id: a
    type: u1
instances:
  at_four:
    pos: 4
    type: u1
