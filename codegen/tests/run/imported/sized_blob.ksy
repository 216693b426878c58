meta:
  id: sized_blob
params:
  - id: len
    type: u2
seq:
  - id: data
    size: len
