meta:
  id: valid_in_enum_without_enum
seq:
  - id: kind
    type: u1
    valid:
      in-enum: true
