meta:
  id: lazy_instances
  endian: le
doc: |
  A small file system image: a table of inodes, each a directory or a regular file whose
  data lies elsewhere in the image. Each inode offers two views of its data, `as_dir` (a
  listing) and `as_file` (text), and a reader asks for the one its mode names: the other
  view fails on those bytes (a file's text is not a listing, a listing is not text), which
  must not fail the image. Exercised by codegen/tests/lazy.rs.
seq:
  - id: num_inodes
    type: u1
  - id: inodes
    type: inode
    repeat: expr
    repeat-expr: num_inodes
types:
  inode:
    seq:
      - id: mode
        type: b4
        doc: 1 directory, 2 regular file.
      - id: len_data
        type: b12
      - id: ofs_data
        type: u1
    instances:
      as_dir:
        io: _root._io
        pos: ofs_data
        size: len_data
        type: dir
      as_file:
        io: _root._io
        pos: ofs_data
        size: len_data
        type: str
        encoding: UTF-8
  dir:
    seq:
      - id: num_entries
        type: u1
      - id: entries
        type: dir_entry
        repeat: expr
        repeat-expr: num_entries
  dir_entry:
    seq:
      - id: inode
        type: u1
      - id: name
        type: strz
        encoding: UTF-8
