meta:
  id: nested_zlib
  endian: le
doc: |
  A zlib stream holding a record whose body is a zlib stream again: the shape of a
  compressed archive of compressed entries. The readers of both streams share one
  processed-bytes budget for the whole file, so nesting cannot multiply it.
seq:
  - id: len_outer
    type: u4
  - id: outer
    size: len_outer
    process: zlib
    type: record
types:
  record:
    seq:
      - id: len_body
        type: u4
      - id: body
        size: len_body
        process: zlib
