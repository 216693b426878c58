meta:
  id: root_reference
seq:
  - id: item
    type: item
  - id: len
    type: u1
types:
  item:
    seq:
      - id: data
        size: _root.len
