meta:
  id: type_name_bad
seq:
  - id: a
    type: Header
types:
  Header:
    seq:
      - id: x
        type: u1
