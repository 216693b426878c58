meta:
  id: terminators
  encoding: UTF-8
seq:
  - id: name
    type: str
    terminator: 0x7c
  - id: padded
    type: str
    size: 6
    pad-right: 0x20
  - id: fixed
    type: str
    size: 6
    terminator: 0
  - id: words
    type: strz
    repeat: expr
    repeat-expr: 2
  - id: kept
    terminator: 0x2e
    include: true
  - id: framed
    type: pair
    terminator: 0x3b
  - id: rest
    terminator: 0x2e
    eos-error: false
types:
  pair:
    seq:
      - id: a
        type: u1
