meta:
  id: params_argument_type
seq:
  - id: a
    type: blob("three")
types:
  blob:
    params:
      - id: len
        type: u4
    seq:
      - id: data
        size: len
