meta:
  id: bad_attribute
seq:
  - id: count
    type: u1
  - id: items
    type: u1
    repeat: expr
    repeat-expr: count.length
