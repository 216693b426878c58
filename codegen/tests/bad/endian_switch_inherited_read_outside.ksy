meta:
  id: endian_switch_inherited_read_outside
seq:
  - id: tag
    type: u1
  - id: first
    type: holder
  - id: stray
    type: holder::part
types:
  holder:
    meta:
      endian:
        switch-on: _parent.tag
        cases:
          1: le
          2: be
    seq:
      - id: part
        type: part
    types:
      part:
        seq:
          - id: word
            type: u2
