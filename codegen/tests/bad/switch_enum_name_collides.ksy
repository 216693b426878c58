meta:
  id: switch_collides
seq:
  - id: frame
    type: frame
types:
  frame:
    seq:
      - id: kind
        type: u1
      - id: body
        type:
          switch-on: kind
          cases:
            0: frame_body
  frame_body:
    seq:
      - id: x
        type: u1
