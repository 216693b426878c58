meta:
  id: column_sets_not_a_mapping
seq:
  - id: a
    type: u1
-sp-column-sets:
  - things
