meta:
  id: positional
  endian: le
seq:
  - id: ofs_name
    type: u1
  - id: numbers
    type: u1
    repeat: expr
    repeat-expr: header.count
  - id: block
    size: 6
    type: block
instances:
  header:
    pos: 12
    type: header_obj
  name:
    pos: ofs_name
    type: strz
    encoding: ASCII
  tail_word:
    pos: _io.size - 2
    type: u2
  block_io:
    value: 'block._io.pos * 100 + block._io.size + (block._io.eof ? 1000 : 0)'
  never:
    pos: 100000
    type: u1
    if: ofs_name == 0xff
types:
  header_obj:
    seq:
      - id: count
        type: u1
  block:
    seq:
      - id: a
        type: u1
      - id: rest_len
        type: u1
        if: _io.pos < 2
      - id: at_end
        type: u1
        if: not _io.eof
    instances:
      inner:
        pos: 4
        type: u2
