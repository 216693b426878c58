meta:
  id: real_zip
  title: ZIP archive, read from its central directory
  endian: le
  encoding: UTF-8
doc: |
  A ZIP archive as a reader that starts at the end finds it, written from the format's
  description (PKWARE's application note): the end-of-central-directory record is the
  last 22 bytes (an archive without a comment), it gives the central directory's offset and
  size, and each central directory entry gives the offset of its member's local header,
  which is followed by the member's data (stored entries: the data as is). No ZIP64 and
  no data descriptors (codegen/tests/real_formats_a.rs).
instances:
  end_of_central_dir:
    pos: _io.size - 22
    type: end_of_central_dir
types:
  end_of_central_dir:
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x05, 0x06]
      - id: disk_number
        type: u2
      - id: disk_of_central_dir
        type: u2
      - id: num_entries_on_disk
        type: u2
      - id: num_entries
        type: u2
      - id: len_central_dir
        type: u4
      - id: ofs_central_dir
        type: u4
      - id: len_comment
        type: u2
      - id: comment
        size: len_comment
    instances:
      central_dir:
        pos: ofs_central_dir
        size: len_central_dir
        type: central_dir
  central_dir:
    seq:
      - id: entries
        type: central_dir_entry
        repeat: eos
  central_dir_entry:
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x01, 0x02]
      - id: version_made_by
        type: u2
      - id: version_needed
        type: u2
      - id: flags
        type: u2
      - id: compression
        type: u2
      - id: mod_time
        type: u2
      - id: mod_date
        type: u2
      - id: crc32
        type: u4
      - id: len_compressed
        type: u4
      - id: len_uncompressed
        type: u4
      - id: len_name
        type: u2
      - id: len_extra
        type: u2
      - id: len_comment
        type: u2
      - id: disk_number_start
        type: u2
      - id: internal_attrs
        type: u2
      - id: external_attrs
        type: u4
      - id: ofs_local_header
        type: u4
      - id: name
        type: str
        size: len_name
      - id: extra
        size: len_extra
      - id: comment
        size: len_comment
    instances:
      local_file:
        io: _root._io
        pos: ofs_local_header
        type: local_file
  local_file:
    seq:
      - id: magic
        contents: [0x50, 0x4b, 0x03, 0x04]
      - id: version_needed
        type: u2
      - id: flags
        type: u2
      - id: compression
        type: u2
      - id: mod_time
        type: u2
      - id: mod_date
        type: u2
      - id: crc32
        type: u4
      - id: len_compressed
        type: u4
      - id: len_uncompressed
        type: u4
      - id: len_name
        type: u2
      - id: len_extra
        type: u2
      - id: name
        type: str
        size: len_name
      - id: extra
        size: len_extra
      - id: data
        size: len_compressed
