meta:
  id: bits_bit_endian_le
  bit-endian: le
seq:
  - id: a
    type: b8
