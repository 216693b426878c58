meta:
  id: case_key_other_enum
  endian: le
seq:
  - id: kind
    type: u1
    enum: shape
  - id: body
    type:
      switch-on: kind
      cases:
        shape::box: box
        colour::red: box
types:
  box:
    seq:
      - id: side
        type: u1
enums:
  shape:
    0: box
    1: ball
  colour:
    1: red
