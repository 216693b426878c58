meta:
  id: instance_positional
seq:
  - id: a
    size: 4
instances:
  at_four:
    io: a._io
    pos: 4
    type: u1
