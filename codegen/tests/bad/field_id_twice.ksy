meta:
  id: field_id_twice
seq:
  - id: a
    type: u1
  - id: a
    type: u1
