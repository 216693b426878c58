meta:
  id: context
  endian: le
doc: |
  `_parent`, `_root`, the `parent` key and params of user types and lists: every path is
  given to the type that uses it by the field that reads it.
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
  - id: mediator
    type: mediator
  - id: orphan
    type: orphan
    parent: false
  - id: holder
    type: holder(header, sizes)
types:
  header:
    seq:
      - id: count
        type: u1
      - id: name_len
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
  tagged:
    seq:
      - id: tag
        size: _parent.header.name_len
  plain:
    seq:
      - id: byte
        type: u1
  mediator:
    seq:
      - id: child
        type: sized_by_parent
        parent: _parent
  sized_by_parent:
    seq:
      - id: data
        size: _parent.sizes[0]
  orphan:
    seq:
      - id: byte
        type: u1
  holder:
    params:
      - id: head
        type: header
      - id: lens
        type: u1[]
    seq:
      - id: first
        size: lens[0]
    instances:
      total:
        value: head.count + lens[1]
