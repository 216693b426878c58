meta:
  id: yaml_syntax
seq:
  - id: a
    type: "u1
