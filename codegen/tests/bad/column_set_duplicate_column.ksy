meta:
  id: column_set_duplicate_column
seq:
  - id: a
    type: u1
-sp-column-sets:
  things:
    columns:
      - id: first
        column: 7
        type: u2
      - id: second
        column: 7
        type: s2
