meta:
  id: whole_alone
seq:
  - id: len
    type: u1
  - id: item
    type: item(_root)
types:
  item:
    params:
      - id: top
        type: whole_alone
    instances:
      same:
        value: top
