meta:
  id: bit_sized
  -sp-strict: true
seq:
  - id: flag
    type: b1
