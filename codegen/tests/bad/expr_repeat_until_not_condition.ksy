meta:
  id: until_not_condition
seq:
  - id: items
    type: u1
    repeat: until
    repeat-until: _
