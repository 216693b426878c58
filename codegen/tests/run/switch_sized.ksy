meta:
  id: switch_sized
seq:
  - id: code
    type: u1
  - id: len_body
    type: u1
  - id: body
    size: len_body
    type:
      switch-on: code
      cases:
        1: one
  - id: tail
    type: u1
types:
  one:
    seq:
      - id: x
        type: u1
