meta:
  id: top_instances
seq:
  - id: a
    type: u1
instances:
  double_a:
    value: a * 2
