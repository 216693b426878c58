meta:
  id: strz_with_size
  encoding: UTF-8
seq:
  - id: name
    type: strz
    size: 8
