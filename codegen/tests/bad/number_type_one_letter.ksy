meta:
  id: one_letter_type
seq:
  - id: a
    type: u
