meta:
  id: switch_number_case_without_endian
seq:
  - id: code
    type: u1
  - id: body
    type:
      switch-on: code
      cases:
        1: u1
        2: u2
