meta:
  id: str_without_size
  encoding: UTF-8
seq:
  - id: name
    type: str
