meta:
  id: sizeof_of_dynamic_field
seq:
  - id: len
    type: u1
  - id: body
    size: len
instances:
  body_size:
    value: body._sizeof
