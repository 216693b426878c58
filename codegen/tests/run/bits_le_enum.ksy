meta:
  id: bits_le_enum
  bit-endian: le
seq:
  - id: mode
    type: b3
    enum: mode
  - id: level
    type: b5
  - id: after
    type: u1
  - id: inner
    type: be_bits
types:
  be_bits:
    meta:
      bit-endian: be
    seq:
      - id: hi
        type: b4
      - id: lo
        type: b4
enums:
  mode:
    1: idle
    5: run
