meta:
  id: type_unknown_key
seq:
  - id: a
    type: blob
types:
  blob:
    sq:
      - id: data
        type: u1
