meta:
  id: type_params
seq:
  - id: a
    type: blob
types:
  blob:
    params:
      - id: len
        type: u4
    seq:
      - id: data
        size: len
