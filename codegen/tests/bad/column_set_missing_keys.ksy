meta:
  id: column_set_missing_keys
seq:
  - id: a
    type: u1
-sp-column-sets:
  things:
    doc: No type given.
    columns:
      - id: half
        column: 1
  empty:
    doc: No columns at all.
