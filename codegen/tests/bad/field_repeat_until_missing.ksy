meta:
  id: repeat_until_missing
seq:
  - id: a
    type: u1
    repeat: until
