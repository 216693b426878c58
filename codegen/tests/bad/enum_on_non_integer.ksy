meta:
  id: enum_on_string
  encoding: UTF-8
seq:
  - id: name
    type: strz
    enum: kind
enums:
  kind:
    0: zero
