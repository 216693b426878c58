meta:
  id: mixed_switch
  endian: le
doc: |
  A switch whose cases mix number types and user types, as in tagged value encodings (a
  tag byte, then a number or a structure): read, written back, and seen through the
  dynamic view.
seq:
  - id: values
    type: tagged
    repeat: eos
types:
  tagged:
    seq:
      - id: tag
        type: u1
      - id: body
        type:
          switch-on: tag
          cases:
            1: u4
            2: point
            3: f8
            4: s2be
            _: empty
  point:
    seq:
      - id: x
        type: s2
      - id: y
        type: s2
  empty:
    seq: []
