meta:
  id: instance_cycle
seq:
  - id: a
    type: u1
instances:
  x:
    value: y + 1
  y:
    value: x * 2
