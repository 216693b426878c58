meta:
  id: field_encoding
seq:
  - id: name
    type: strz
    encoding: Latin-1
