meta:
  id: column_set_name_clash
seq:
  - id: a
    type: things_columns
types:
  things_columns:
    seq:
      - id: b
        type: u1
-sp-column-sets:
  things:
    columns:
      - id: half
        column: 1
        type: u2
