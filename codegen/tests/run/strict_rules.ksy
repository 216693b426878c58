meta:
  id: strict_rules
  endian: le
  -sp-strict: true
seq:
  - id: len_body
    type: u1
  - id: body
    type: inner
    size: len_body
  - id: kind
    type: u1
    enum: animal
  - id: pick
    type: u1
  - id: choice
    type:
      switch-on: pick
      cases:
        1: inner
  - id: loose
    type: u1
    enum: bird
    -sp-strict: false
types:
  inner:
    seq:
      - id: a
        type: u1
enums:
  animal:
    1: cat
  bird:
    1: owl
