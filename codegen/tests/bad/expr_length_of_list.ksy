meta:
  id: length_of_list
seq:
  - id: num_items
    type: u1
  - id: items
    type: u1
    repeat: expr
    repeat-expr: num_items
  - id: mirror
    type: u1
    repeat: expr
    repeat-expr: items.length
