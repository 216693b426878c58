meta:
  id: io_of_with_io_size
seq:
  - id: sized
    size: 2
    type: block
instances:
  peek:
    io: sized._io
    pos: 0
    size: _io.size
types:
  block:
    seq:
      - id: a
        type: u1
