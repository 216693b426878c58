meta:
  id: switch_without_cases
seq:
  - id: kind
    type: u1
  - id: body
    type:
      switch-on: kind
