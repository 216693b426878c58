meta:
  id: parent_io
  endian: le
doc: |
  `io: _parent._io` on positional instances (a font's table directory whose subtables point
  into the table that holds them) and `_root` / `_parent` paths in the `pos` of a nested
  type's positional instance.
seq:
  - id: base
    type: u1
  - id: len_table
    type: u1
  - id: table
    size: len_table
    type: table
  - id: tail
    type: u1
types:
  table:
    seq:
      - id: num
        type: u1
      - id: subs
        type: sub
        repeat: expr
        repeat-expr: num
    instances:
      first_of_input:
        doc: The table is read in a sized field of the root, so its parent's stream is the input.
        io: _parent._io
        pos: 0
        type: u1
  sub:
    seq:
      - id: ofs
        type: u1
    instances:
      body:
        doc: The sub shares the stream of the table that reads it, so this is the table's stream.
        io: _parent._io
        pos: ofs
        type: u1
      at_base:
        io: _root._io
        pos: _root.base + ofs
        type: u1
      after_subs:
        pos: _parent.num + 1
        type: u1
