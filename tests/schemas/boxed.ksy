meta:
  id: boxed
  -sp-strict: true
  endian: le
doc: A boxed member (`-sp-box`), alone, under `if` and inside a sized substream.
seq:
  - id: flags
    type: u1
  - id: always
    type: big
    -sp-box: true
  - id: maybe
    type: big
    if: (flags & 1) != 0
    -sp-box: true
  - id: len_sized
    type: u1
  - id: sized
    type: big
    size: len_sized
    -sp-box: true
types:
  big:
    seq:
      - id: a
        type: u4
      - id: b
        type: u2
        repeat: expr
        repeat-expr: 8
