meta:
  id: read_so_far
seq:
  - id: items
    type: item
    repeat: expr
    repeat-expr: 3
types:
  item:
    seq:
      - id: data
        size: _parent.items.last.data.size
