meta:
  id: field_id_missing
seq:
  - type: u1
