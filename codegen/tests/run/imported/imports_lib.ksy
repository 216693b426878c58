meta:
  id: imports_lib
  endian: be
seq:
  - id: kind
    type: u1
    enum: kind
  - id: value
    type: u2
  - id: extra
    type: more
types:
  more:
    seq:
      - id: flag
        type: u1
enums:
  kind:
    1: small
    2: large
