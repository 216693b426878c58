meta:
  id: bits_offset_binary_on_b1
seq:
  - id: a
    type: b1
    -sp-offset-binary: true
  - id: b
    type: b7
