meta:
  id: valid_user
  endian: le
seq:
  - id: head
    type: header
    valid:
      expr: _.version == 2 and _.len <= 8
  - id: body
    size: head.len
  - id: items
    type: item
    repeat: expr
    repeat-expr: 2
    valid:
      expr: _.x != 0
types:
  header:
    seq:
      - id: version
        type: u1
      - id: len
        type: u1
  item:
    seq:
      - id: x
        type: u1
