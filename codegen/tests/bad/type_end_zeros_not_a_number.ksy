meta:
  id: type_end_zeros_not_a_number
seq:
  - id: a
    size: 16
    type: blob
types:
  blob:
    -sp-end-zeros: four
    seq:
      - id: data
        type: u1
