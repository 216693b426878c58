meta:
  id: switch_str
  encoding: ASCII
seq:
  - id: tag
    type: str
    size: 2
  - id: body
    type:
      switch-on: tag
      cases:
        '"ab"': one
        '"cd"': two
types:
  one:
    seq:
      - id: x
        type: u1
  two:
    seq:
      - id: y
        type: u1
      - id: z
        type: u1
