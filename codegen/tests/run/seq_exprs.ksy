meta:
  id: seq_exprs
  endian: le
seq:
  - id: n
    type: u1
  - id: lens
    type: u1
    repeat: expr
    repeat-expr: n
  - id: body
    size: lens[1]
  - id: flag
    type: u1
  - id: opt
    type: u1
    if: flag == 1
  - id: tail
    size: opt
  - id: items
    type: u1
    repeat: until
    repeat-until: _ == lens.last
  - id: chunks
    size: lens[_index]
    repeat: expr
    repeat-expr: n
