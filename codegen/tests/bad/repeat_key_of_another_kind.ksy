meta:
  id: repeat_key_of_another_kind
seq:
  - id: items
    type: u1
    repeat: eos
    repeat-expr: 4
