meta:
  id: term_on_number
seq:
  - id: a
    type: u1
    terminator: 0
