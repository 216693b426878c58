meta:
  id: bit_sized
seq:
  - id: flag
    type: b1
