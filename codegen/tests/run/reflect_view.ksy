meta:
  id: reflect_view
  endian: le
seq:
  - id: magic
    contents: [0x52, 0x56]
  - id: n
    type: u1
  - id: items
    type: item
    repeat: expr
    repeat-expr: n
  - id: kind
    type: u1
    enum: kind
  - id: body
    type:
      switch-on: kind
      cases:
        'kind::point': point
  - id: extra
    type: u2
    if: n > 1
  - id: raw
    type: u1
    repeat: expr
    repeat-expr: 2
types:
  item:
    seq:
      - id: flag
        type: b1
      - id: rest
        type: b7
  point:
    seq:
      - id: x
        type: s2
enums:
  kind:
    1: point
    2: other
