meta:
  id: bits
  -sp-strict: true
  endian: le
  bit-endian: be
doc: Bit fields, offset binary, alignment to the byte and LEB128 varints in both positions.
seq:
  - id: flags
    type: b3
  - id: has_extra
    type: b1
    doc: A one-bit field is a boolean.
  - id: small
    type: b12
    -sp-offset-binary: true
    doc: Signed, stored as value + 2048.
  - id: count
    type: b4
  - id: codes
    type: b5
    repeat: expr
    repeat-expr: count
  - id: extra
    type: b20
    if: has_extra
  - id: tail_byte
    type: u1
    doc: A byte-aligned field after bits starts on the next byte.
  - id: lead
    type: b3
  - id: bit_varint
    type: b8
    repeat: until
    repeat-until: _ < 128
    -sp-varint: leb128
    doc: A LEB128 varint continuing the bit stream.
  - id: byte_varint
    type: u1
    repeat: until
    repeat-until: _ < 128
    -sp-varint: leb128
    doc: A LEB128 varint on a byte boundary.
  - id: items
    type: item
    repeat: expr
    repeat-expr: 2
  - id: wide
    type: b32
types:
  item:
    seq:
      - id: sign
        type: b1
      - id: mag
        type: b10
      - id: align
        size: 0
        doc: Pads the item to the next byte.
