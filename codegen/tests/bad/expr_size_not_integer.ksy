meta:
  id: size_not_integer
  encoding: UTF-8
seq:
  - id: name
    type: strz
  - id: data
    size: name
