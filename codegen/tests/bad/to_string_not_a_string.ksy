meta:
  id: to_string_not_a_string
seq:
  - id: n
    type: u1
to-string: n + 1
