meta:
  id: duplicate_case
  endian: le
seq:
  - id: tag
    type: u1
  - id: body
    type:
      switch-on: tag
      cases:
        1: small
        0x1: large
types:
  small:
    seq:
      - id: a
        type: u1
  large:
    seq:
      - id: a
        type: u2
