meta:
  id: bits_unaligned
  endian: le
  bit-endian: be
doc: |
  Under Kaitai Struct's rules (no `-sp-strict`) a type may end inside a byte: `nibble` is
  four bits, and what follows it goes on from the next bit.
seq:
  - id: first
    type: nibble
  - id: second
    type: nibble
types:
  nibble:
    seq:
      - id: flag
        type: b1
      - id: value
        type: b3
