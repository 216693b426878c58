meta:
  id: repeat_until_without_repeat
seq:
  - id: a
    type: u1
    repeat-until: _ == 0
