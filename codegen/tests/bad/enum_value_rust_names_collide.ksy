meta:
  id: enum_values_collide
seq:
  - id: a
    type: u1
    enum: axis
enums:
  axis:
    0: x1
    1: x_1
