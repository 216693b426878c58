meta:
  id: placed_header
  endian: le
doc: |
  The shape of a lump archive: a header type with the number of lumps and the offset of
  the lump directory, a body, and the directory (fixed-size entries) at the header's
  offset. The writer places the directory and writes `head.ofs_dir` itself
  (codegen/tests/placed.rs).
seq:
  - id: head
    type: header
  - id: palette
    size: 16
instances:
  directory:
    pos: head.ofs_dir
    type: lump
    repeat: expr
    repeat-expr: head.num_lumps
types:
  header:
    seq:
      - id: magic
        contents: IWAD
      - id: num_lumps
        type: u4
      - id: ofs_dir
        type: u4
  lump:
    seq:
      - id: filepos
        type: u4
      - id: size
        type: u4
      - id: name
        size: 8
