meta:
  id: type_not_mapping
seq:
  - id: a
    type: header
types:
  header: u1
