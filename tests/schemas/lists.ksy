meta:
  id: lists
  -sp-strict: true
  endian: le
seq:
  - id: num_items
    type: u1
  - id: items
    doc: Its count `num_items` is derived on write.
    type: u2
    repeat: expr
    repeat-expr: num_items
  - id: vec3
    type: f4
    repeat: expr
    repeat-expr: 3
  - id: num_pairs
    type: u1
  - id: pairs
    doc: The count is an expression, so it is checked on write, not derived.
    type: s1
    repeat: expr
    repeat-expr: num_pairs * 2
  - id: mirror
    type: u1
    repeat: expr
    repeat-expr: items.size
  - id: until_zero
    type: u2be
    repeat: until
    repeat-until: _ == 0
  - id: ops
    type: u1
    enum: op
    repeat: until
    repeat-until: _ == op::stop
  - id: names
    type: strz
    encoding: ASCII
    repeat: until
    repeat-until: _.length == 0
  - id: len_chunked
    type: u1
  - id: chunked
    type: chunked
    size: len_chunked
  - id: tail
    type: u2
    repeat: eos
types:
  chunked:
    seq:
      - id: chunk_len
        type: u1
      - id: chunks
        size: chunk_len
        repeat: eos
enums:
  op:
    0: stop
    1: push
    0x10:
      id: pop
      doc: Removes the top value.
