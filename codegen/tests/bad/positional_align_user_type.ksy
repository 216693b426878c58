meta:
  id: positional_align_user_type
  endian: le
seq:
  - id: ofs
    type: u4
instances:
  body:
    pos: ofs
    type: point
    -sp-align: 4
types:
  point:
    seq:
      - id: x
        type: u2
