meta:
  id: bits_varint_not_leb128_groups
seq:
  - id: n
    type: b8
    repeat: until
    repeat-until: _ < 64
    -sp-varint: leb128
