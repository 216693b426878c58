meta:
  id: column_set_unknown_key
seq:
  - id: a
    type: u1
-sp-column-sets:
  things:
    colums:
      - id: half
        column: 1
        type: u2
