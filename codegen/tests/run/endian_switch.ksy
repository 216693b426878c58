meta:
  id: endian_switch
seq:
  - id: docs
    type: doc
    repeat: eos
types:
  doc:
    seq:
      - id: indicator
        size: 2
      - id: body
        type: body
    types:
      body:
        meta:
          endian:
            switch-on: _parent.indicator
            cases:
              '[0x49, 0x49]': le
              '[0x4d, 0x4d]': be
        seq:
          - id: len
            type: u2
          - id: fixed_be
            type: u2be
          - id: inner
            type: inner
        instances:
          at_two:
            pos: 2
            type: u2
        types:
          inner:
            seq:
              - id: value
                type: s4
              - id: ratio
                type: f4
  flagged:
    meta:
      endian:
        switch-on: flag
        cases:
          1: be
          _: le
    params:
      - id: flag
        type: u1
    seq:
      - id: word
        type: u2
