meta:
  id: opaque_arg_user_type
  ks-opaque-types: true
seq:
  - id: h
    type: head
  - id: x
    type: ext(h)
types:
  head:
    seq:
      - id: a
        type: u1
