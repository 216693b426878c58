# `_root` in this schema's types is this schema's root, also when another schema imports it.
meta:
  id: root_lib
  endian: le
seq:
  - id: num_items
    type: u1
  - id: width
    type: u1
  - id: items
    type: item
    repeat: expr
    repeat-expr: num_items
types:
  item:
    seq:
      - id: data
        size: _root.width
