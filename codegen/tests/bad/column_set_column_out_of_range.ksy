meta:
  id: column_set_column_out_of_range
seq:
  - id: a
    type: u1
-sp-column-sets:
  things:
    columns:
      - id: zero
        column: 0
        type: u2
      - id: big
        column: 65536
        type: u2
