meta:
  id: str_no_encoding
seq:
  - id: name
    type: strz
