meta:
  id: column_set_bad_type
seq:
  - id: a
    type: u1
-sp-column-sets:
  things:
    columns:
      - id: wide
        column: 1
        type: u8
