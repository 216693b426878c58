meta:
  id: expr_null_in_schema
seq:
  - id: a
    type: u1
instances:
  nothing:
    value: a == null
