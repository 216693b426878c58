meta:
  id: processed
  endian: le
seq:
  - id: len_packed
    type: u1
  - id: packed
    size: len_packed
    process: zlib
  - id: key
    type: u1
  - id: hidden
    type: point
    size: 4
    process: xor(key)
  - id: spun
    size: 2
    process: rol(3)
types:
  point:
    seq:
      - id: x
        type: u2
      - id: y
        type: u2
