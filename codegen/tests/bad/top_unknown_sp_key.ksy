meta:
  id: top_sp
-sp-columns: true
seq:
  - id: a
    type: u1
