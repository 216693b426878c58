meta:
  id: no_type
seq:
  - id: a
    doc: Forgot the type.
