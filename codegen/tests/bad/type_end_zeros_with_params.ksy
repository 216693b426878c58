meta:
  id: type_end_zeros_with_params
  endian: le
seq:
  - id: a
    size: 16
    type: blob(2)
types:
  blob:
    -sp-end-zeros: 4
    params:
      - id: k
        type: u1
    seq:
      - id: data
        type: u1
