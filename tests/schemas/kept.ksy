meta:
  id: kept
  endian: le
  bit-endian: be
doc: |
  A type whose reader keeps bytes for writing back that the schema's members do not hold:
  the padding bits after two bit fields, and the stored bytes of a zlib body. A value built
  with `..Default::default()` leaves them empty; equality ignores them.
seq:
  - id: flags
    type: b3
  - id: mode
    type: b4
    doc: Seven bits in all; the eighth is padding.
  - id: count
    type: u1
  - id: body
    size-eos: true
    process: zlib
    type: payload
types:
  payload:
    seq:
      - id: values
        type: u2
        repeat: eos
