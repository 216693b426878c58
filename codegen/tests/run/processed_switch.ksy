meta:
  id: processed_switch
  endian: le
seq:
  - id: kind
    type: u1
  - id: body
    size: 4
    process: xor(0x5a)
    type:
      switch-on: kind
      cases:
        1: pair
        2: word
  - id: packed
    terminator: 0xff
    process: zlib
    type: text
  - id: last
    type: u1
types:
  pair:
    seq:
      - id: a
        type: u2
      - id: b
        type: u2
  word:
    seq:
      - id: w
        type: u4
  text:
    seq:
      - id: s
        size-eos: true
        type: str
        encoding: ASCII
