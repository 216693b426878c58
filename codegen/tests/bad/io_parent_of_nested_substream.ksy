meta:
  id: io_parent_of_nested_substream
seq:
  - id: outer
    size: 4
    type: outer
types:
  outer:
    seq:
      - id: inner
        size: 2
        type: inner
  inner:
    seq:
      - id: a
        type: u1
    instances:
      b:
        io: _parent._io
        pos: 3
        type: u1
