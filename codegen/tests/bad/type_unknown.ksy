meta:
  id: type_unknown
seq:
  - id: a
    type: recording
types:
  record:
    seq:
      - id: x
        type: u1
