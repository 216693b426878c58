meta:
  id: yaml_alias
  endian: le
seq:
  - id: a
    type: &t u2
  - id: b
    type: *t
