meta:
  id: struct_param_cast_to_two_types
params:
  - id: p
    type: struct
instances:
  first:
    value: p.as<pair>.a
  other_c:
    value: p.as<other>.c
types:
  pair:
    seq:
      - id: a
        type: u1
  other:
    seq:
      - id: c
        type: u1
