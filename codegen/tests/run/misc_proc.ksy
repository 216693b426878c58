meta:
  id: misc_proc
seq:
  - id: padded
    size: 6
    pad-right: 0x40
    process: xor(0x15)
  - id: cut
    size: 6
    terminator: 0x40
    pad-right: 0x2b
    process: xor(0x15)
  - id: wrapped
    size: 5
    terminator: 0x40
    include: true
    process: rol(1)
    type: wrapper
types:
  wrapper:
    seq:
      - id: value
        size-eos: true
