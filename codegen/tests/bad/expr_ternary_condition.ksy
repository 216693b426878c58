meta:
  id: ternary_condition
seq:
  - id: flags
    type: u1
  - id: data
    size: 'flags ? 4 : 0'
