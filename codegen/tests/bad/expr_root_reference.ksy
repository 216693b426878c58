meta:
  id: root_reference
seq:
  - id: len
    type: u1
  - id: item
    type: item
types:
  item:
    seq:
      - id: data
        size: _root.len
