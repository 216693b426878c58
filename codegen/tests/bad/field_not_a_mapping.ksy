meta:
  id: field_not_mapping
seq:
  - a
