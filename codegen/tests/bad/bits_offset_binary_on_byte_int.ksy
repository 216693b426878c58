meta:
  id: bits_offset_binary_on_byte_int
seq:
  - id: a
    type: u1
    -sp-offset-binary: true
