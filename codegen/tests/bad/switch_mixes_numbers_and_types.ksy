meta:
  id: switch_mixes_numbers_and_types
  endian: le
seq:
  - id: code
    type: u1
  - id: body
    type:
      switch-on: code
      cases:
        1: u1
        2: block
types:
  block:
    seq:
      - id: a
        type: u1
