meta:
  id: and_on_integers
seq:
  - id: a
    type: u1
  - id: b
    type: u1
  - id: extra
    type: u1
    if: a and b
