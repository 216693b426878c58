meta:
  id: switch_string_case_without_encoding
seq:
  - id: kind
    type: u1
  - id: name
    type:
      switch-on: kind
      cases:
        1: strz
