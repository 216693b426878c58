meta:
  id: positional_align_zero
  endian: le
seq:
  - id: ofs
    type: u4
instances:
  body:
    pos: ofs
    size: 4
    -sp-align: 0
