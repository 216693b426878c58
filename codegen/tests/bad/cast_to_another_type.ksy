meta:
  id: cast_to_another_type
seq:
  - id: a
    type: one
instances:
  v:
    value: a.as<two>.x
types:
  one:
    seq:
      - id: x
        type: u1
  two:
    seq:
      - id: x
        type: u1
