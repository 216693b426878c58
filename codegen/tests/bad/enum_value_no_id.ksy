meta:
  id: enum_value_no_id
seq:
  - id: a
    type: u1
    enum: kind
enums:
  kind:
    0: zero
    1:
      doc: The value one.
