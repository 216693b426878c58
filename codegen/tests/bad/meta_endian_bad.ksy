meta:
  id: endian_bad
  endian: little
seq:
  - id: a
    type: u2
