meta:
  id: any_of_not_list
seq:
  - id: a
    type: u1
    valid:
      any-of: 1
