meta:
  id: bit_endian_bad
  bit-endian: msb
seq:
  - id: a
    type: u1
