meta:
  id: io_other
  endian: le
seq:
  - id: blocks
    size: 3
    process: xor(_io.pos)
    type: block
    repeat: expr
    repeat-expr: 2
  - id: peek
    type: peeker
types:
  block:
    seq:
      - id: a
        type: u2
  peeker:
    seq:
      - id: tag
        type: u1
    instances:
      first_rest:
        io: _parent.blocks[0]._io
        pos: 2
        type: u1
      second_a:
        io: _parent.blocks[1]._io
        pos: 0
        type: u2
