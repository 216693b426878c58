meta:
  id: no_byte_order
seq:
  - id: count
    type: u2
