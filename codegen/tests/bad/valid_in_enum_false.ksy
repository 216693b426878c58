meta:
  id: valid_in_enum_false
seq:
  - id: kind
    type: u1
    enum: animal
    valid:
      in-enum: false
enums:
  animal:
    1: cat
