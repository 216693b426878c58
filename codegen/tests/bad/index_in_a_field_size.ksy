meta:
  id: index_in_a_field_size
seq:
  - id: lens
    type: u1
    repeat: expr
    repeat-expr: 2
  - id: body
    size: lens[1]
