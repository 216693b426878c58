meta:
  id: positional_align_not_placed
  endian: le
seq:
  - id: ofs
    type: u4
  - id: len
    type: u4
instances:
  body:
    pos: ofs + len
    size: 4
    -sp-align: 4
