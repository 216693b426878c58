meta:
  id: misc_num_switch
  endian: le
seq:
  - id: code
    type: u1
  - id: len
    type:
      switch-on: code
      cases:
        1: u1
        2: u2
        4: s4be
  - id: body
    size: len
  - id: checked
    type:
      switch-on: code
      cases:
        1: u1
        _: u2be
    valid:
      max: 0x1000
instances:
  len_plus:
    value: len + 1
