meta:
  id: not_ks_type
seq:
  - id: a
    type: u3
