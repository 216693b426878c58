meta:
  id: io_sized
seq:
  - id: pad
    type: u1
  - id: inner
    size: 2
    type: two
  - id: rest
    type: u1
    if: not _io.eof
types:
  two:
    seq:
      - id: a
        type: u1
      - id: b
        type: u1
        if: _io.pos == 1
