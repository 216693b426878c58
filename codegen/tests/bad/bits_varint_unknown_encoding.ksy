meta:
  id: bits_varint_unknown_encoding
seq:
  - id: n
    type: u1
    repeat: until
    repeat-until: _ < 128
    -sp-varint: zigzag
