meta:
  id: forward_paths
  endian: le
doc: |
  Entries whose sizes come from a table of names that lies after them (`_root.names`), and
  a child whose count comes from its parent's trailer (`_parent.trailer`): positional
  instances named by a path from a type read before them. Kaitai Struct reads such an
  instance on that first use; so does statepack, since its position uses only fields read
  before it. Exercised by codegen/tests/lazy.rs.
seq:
  - id: ofs_names
    type: u1
  - id: entries
    type: entry
    repeat: expr
    repeat-expr: 2
  - id: box
    type: holder
instances:
  names:
    pos: ofs_names
    type: strz
    encoding: ASCII
    repeat: expr
    repeat-expr: 2
types:
  entry:
    seq:
      - id: name_idx
        type: u1
      - id: body
        size: _root.names[name_idx].length
  holder:
    seq:
      - id: ofs
        type: u1
      - id: child
        type: counted
    instances:
      trailer:
        pos: ofs
        type: u1
  counted:
    seq:
      - id: items
        type: u1
        repeat: expr
        repeat-expr: _parent.trailer
