meta:
  id: switch_on_string
seq:
  - id: tag
    type: strz
    encoding: ASCII
  - id: body
    type:
      switch-on: tag
      cases:
        0: empty
types:
  empty:
    seq: []
