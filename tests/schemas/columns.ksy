meta:
  id: columns
  -sp-strict: true
  endian: le
doc: A column chunk body with two column sets, every column type among them.
seq:
  - id: num_columns
    type: u4
  - id: entries
    type: entry
    repeat: expr
    repeat-expr: num_columns
  - id: data
    size-eos: true
types:
  entry:
    seq:
      - id: id
        type: u2
      - id: type_code
        type: u2
      - id: offset
        type: u4
      - id: count
        type: u4
-sp-column-sets:
  things:
    doc: One entry per thing.
    columns:
      - id: small
        column: 3
        type: u1
      - id: half
        column: 1
        type: u2
        doc: Written first but listed by id.
      - id: signed_half
        column: 2
        type: s2
  readings:
    columns:
      - id: big
        column: 0x100
        type: u4
      - id: signed_big
        column: 257
        type: s4
      - id: value
        column: 65535
        type: f4
