meta:
  id: field_process
  encoding: ASCII
seq:
  - id: a
    type: str
    size: 4
    process: zlib
