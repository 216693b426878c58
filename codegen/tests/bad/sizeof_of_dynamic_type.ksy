meta:
  id: sizeof_of_dynamic_type
seq:
  - id: len
    type: u1
  - id: body
    size: len
instances:
  whole:
    value: _sizeof
