meta:
  id: sp_box_on_list
  endian: le
seq:
  - id: n
    type: u1
  - id: items
    type: item
    repeat: expr
    repeat-expr: n
    -sp-box: true
  - id: x
    type: u2
    -sp-box: true
types:
  item:
    seq:
      - id: a
        type: u1
