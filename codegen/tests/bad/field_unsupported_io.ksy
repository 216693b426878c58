meta:
  id: field_io
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    io: _root._io
