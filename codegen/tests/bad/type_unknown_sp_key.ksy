meta:
  id: type_unknown_sp_key
seq:
  - id: a
    type: blob
types:
  blob:
    -sp-codec: cframe
    seq:
      - id: data
        type: u1
