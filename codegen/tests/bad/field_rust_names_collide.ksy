meta:
  id: field_names_collide
seq:
  - id: self
    type: u1
  - id: self_
    type: u1
