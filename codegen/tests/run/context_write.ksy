meta:
  id: context_write
  endian: le
doc: |
  `_parent` and `_root` paths at every depth, in a list, a switch case and a processed field,
  for values built in code: the writer gives each type the values of its paths.
seq:
  - id: header
    type: header
  - id: sizes
    type: u1
    repeat: expr
    repeat-expr: 2
  - id: index
    type: index
  - id: kind
    type: u1
  - id: body
    type:
      switch-on: kind
      cases:
        1: tagged
        2: plain
  - id: packed
    size: 3
    process: xor(0x55)
    type: tagged
types:
  header:
    seq:
      - id: count
        type: u1
      - id: name_len
        type: u1
      - id: flags
        type: u1
  index:
    seq:
      - id: entries
        type: entry
        repeat: expr
        repeat-expr: _parent.header.count
  entry:
    seq:
      - id: name
        type: str
        encoding: ASCII
        size: _parent._parent.header.name_len
      - id: extra
        size: _root.sizes[1]
      - id: deep
        type: deep
  deep:
    seq:
      - id: mark
        type: u1
        if: _root.header.flags == 1
  tagged:
    seq:
      - id: tag
        size: _parent.header.name_len
  plain:
    seq:
      - id: byte
        type: u1
