meta:
  id: switch_str_case_without_size
  encoding: ASCII
seq:
  - id: kind
    type: u1
  - id: name
    type:
      switch-on: kind
      cases:
        1: str
        2: strz
