meta:
  id: io_of_unsized_type
seq:
  - id: head
    type: block
  - id: sized
    size: 2
    type: block
instances:
  peek:
    io: sized._io
    pos: 1
    type: u1
types:
  block:
    seq:
      - id: a
        type: u1
