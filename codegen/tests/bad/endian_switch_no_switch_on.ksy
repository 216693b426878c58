meta:
  id: endian_switch_no_switch_on
  endian:
    cases:
      1: le
seq:
  - id: word
    type: u2
