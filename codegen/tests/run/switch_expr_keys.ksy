meta:
  id: switch_expr_keys
  endian: le
doc: |
  Case keys that are expressions, as Kaitai Struct allows: a field of the root type read
  before the switch and a constant sum, tested in order (the first key equal to the switch
  value selects its case).
seq:
  - id: kind_a
    type: u1
  - id: recs
    type: rec
    repeat: expr
    repeat-expr: 2
types:
  rec:
    seq:
      - id: tag
        type: u1
      - id: body
        type:
          switch-on: tag
          cases:
            _root.kind_a: u2
            1 + 2: s1
            7: pt
            _: u1
  pt:
    seq:
      - id: x
        type: u1
