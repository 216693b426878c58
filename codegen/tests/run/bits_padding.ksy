meta:
  id: bits_padding
seq:
  - id: flags
    type: b3
  - id: byte
    type: u1
  - id: inner
    type: three_bits
    size: 1
  - id: last
    type: b2
types:
  three_bits:
    seq:
      - id: v
        type: b3
