meta:
  id: root_params
params:
  - id: len
    type: u1
seq:
  - id: data
    size: len
