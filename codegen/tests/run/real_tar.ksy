meta:
  id: real_tar
  title: POSIX ustar archive
  encoding: ASCII
doc: |
  A ustar (POSIX.1-1988) tar stream, written from the format's description: 512-byte header
  blocks, each followed by the member's data padded with zeros to a multiple of 512 bytes,
  and at least two zero blocks at the end. Numbers in the header are ASCII octal strings
  ending in a zero byte; the data's size is the `size` field read as octal. The checksum is
  the sum of the header's bytes with the checksum field taken as eight spaces
  (codegen/tests/real_formats_a.rs).
seq:
  - id: members
    type: member
    repeat: until
    repeat-until: _.is_end
  - id: end_blocks
    size-eos: true
    doc: The rest of the end-of-archive zero blocks, after the first one.
types:
  member:
    seq:
      - id: header
        type: header
        size: 512
      - id: data
        size: header.len_data
      - id: padding
        size: (512 - header.len_data % 512) % 512
    instances:
      is_end:
        value: header.name == ""
        doc: A zero block (no name) ends the archive.
  header:
    seq:
      - id: name
        type: strz
        size: 100
      - id: mode
        type: strz
        size: 8
      - id: uid
        type: strz
        size: 8
      - id: gid
        type: strz
        size: 8
      - id: size_octal
        type: strz
        size: 12
      - id: mtime
        type: strz
        size: 12
      - id: checksum
        type: strz
        size: 8
      - id: type_flag
        type: u1
      - id: link_name
        type: strz
        size: 100
      - id: magic
        type: strz
        size: 6
      - id: version
        size: 2
      - id: user_name
        type: strz
        size: 32
      - id: group_name
        type: strz
        size: 32
      - id: dev_major
        type: strz
        size: 8
      - id: dev_minor
        type: strz
        size: 8
      - id: prefix
        type: strz
        size: 155
      - id: reserved
        size: 12
    instances:
      len_data:
        value: 'size_octal == "" ? 0 : size_octal.to_i(8)'
        doc: The member's data size in bytes (0 in the end-of-archive block).
