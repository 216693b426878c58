meta:
  id: placed
  endian: le
doc: |
  A small archive in the shape of many game and resource packs: a header with the number
  of entries, the offset of the index and the block of a data blob, then a title; the
  index (fixed-size entries) lies at `ofs_index`, the blob on a 16-byte block
  (`blob_block * 16`). The writer places both: a decoded file keeps its layout, a value
  built by hand gets the index and the blob after the header, and the header's numbers
  are derived (codegen/tests/placed.rs).
seq:
  - id: magic
    contents: PAK1
  - id: num_entries
    type: u2
  - id: ofs_index
    type: u4
  - id: blob_block
    type: u2be
  - id: len_blob
    type: u4
  - id: len_title
    type: u1
  - id: title
    type: str
    size: len_title
    encoding: UTF-8
instances:
  index:
    pos: ofs_index
    type: entry
    repeat: expr
    repeat-expr: num_entries
  blob:
    pos: blob_block * 16
    size: len_blob
types:
  entry:
    seq:
      - id: id
        type: u4
      - id: len_name
        type: u1
      - id: name
        type: str
        size: len_name
        encoding: UTF-8
