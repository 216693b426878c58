meta:
  id: adversarial
  endian: le
doc: |
  Data that steers the reader: a count of zero-size elements, a chain of positional
  instances whose offsets come from the data (they may point back at themselves), a
  recursive tree whose depth comes from the data, a zlib body whose size comes from the
  data, and a list read until a sentinel. Exercised by codegen/tests/adversarial.rs and
  by the fuzz target `kaitai_lang`.
seq:
  - id: count
    type: u4
  - id: empties
    type: empty
    repeat: expr
    repeat-expr: count
  - id: node_ofs
    type: u2
  - id: tree
    type: tree
  - id: body_len
    type: u1
  - id: body
    size: body_len
    process: zlib
  - id: until_zero
    type: u1
    repeat: until
    repeat-until: _ == 0
instances:
  node:
    pos: node_ofs
    type: node
    if: node_ofs != 0xffff
types:
  empty:
    seq: []
  node:
    seq:
      - id: next_ofs
        type: u2
      - id: value
        type: u1
    instances:
      next:
        pos: next_ofs
        type: node
        if: next_ofs != 0
  tree:
    seq:
      - id: kids
        type: u1
      - id: children
        type: tree
        repeat: expr
        repeat-expr: kids
