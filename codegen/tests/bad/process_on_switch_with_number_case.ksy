meta:
  id: process_on_switch_with_number_case
  endian: le
seq:
  - id: kind
    type: u1
  - id: body
    size: 4
    process: xor(0x55)
    type:
      switch-on: kind
      cases:
        1: u4
        2: block
types:
  block:
    seq:
      - id: x
        type: u1
