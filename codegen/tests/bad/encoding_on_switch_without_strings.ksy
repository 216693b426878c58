meta:
  id: encoding_on_switch_without_strings
  endian: le
seq:
  - id: kind
    type: u1
  - id: value
    encoding: UTF-8
    type:
      switch-on: kind
      cases:
        1: u2
        2: u4
