meta:
  id: repeat_bad
seq:
  - id: a
    type: u1
    repeat: 4
