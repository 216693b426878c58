meta:
  id: sizeof_variable_type
seq:
  - id: a
    type: block
instances:
  v:
    value: sizeof<block>
types:
  block:
    seq:
      - id: n
        type: u1
      - id: data
        size: n
