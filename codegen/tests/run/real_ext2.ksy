meta:
  id: real_ext2
  endian: le
doc: |
  The start of an ext2 file system, as its on-disk layout is documented: 1024 bytes of boot
  area, the superblock (1024 bytes at byte 1024), the block group descriptor table in the
  block after the superblock's, each group's inode table at `inode_table_block *
  block_size`, and the root directory (inode 2) read through its inode's first direct block:
  directory entries of an inode number, a record length, a name length, a file type and
  the name, each record padded up to its length. Only the fields these tests look at are
  broken out; the rest is kept as bytes. Read, edited and written back in
  codegen/tests/real_formats_b.rs.
seq:
  - id: boot
    size: 1024
  - id: sb
    type: superblock
    size: 1024
instances:
  block_size:
    value: 1024 << sb.log_block_size
  num_groups:
    value: (sb.blocks_count - sb.first_data_block + sb.blocks_per_group - 1) / sb.blocks_per_group
  group_descs:
    pos: (sb.first_data_block + 1) * block_size
    type: group_desc
    repeat: expr
    repeat-expr: num_groups
  inode_table:
    pos: group_descs[0].inode_table_block * block_size
    type: inode
    size: sb.inode_size
    repeat: expr
    repeat-expr: sb.inodes_per_group
    doc: The first group's inode table; inode `n` is element `n - 1`.
  root_dir:
    pos: inode_table[1].block[0] * block_size
    size: block_size
    type: dir_block
    doc: The first block of the root directory (inode 2).
types:
  superblock:
    seq:
      - id: inodes_count
        type: u4
      - id: blocks_count
        type: u4
      - id: r_blocks_count
        type: u4
      - id: free_blocks_count
        type: u4
      - id: free_inodes_count
        type: u4
      - id: first_data_block
        type: u4
      - id: log_block_size
        type: u4
      - id: log_frag_size
        type: u4
      - id: blocks_per_group
        type: u4
      - id: frags_per_group
        type: u4
      - id: inodes_per_group
        type: u4
      - id: mtime
        type: u4
      - id: wtime
        type: u4
      - id: mnt_count
        type: u2
      - id: max_mnt_count
        type: s2
      - id: magic
        contents: [0x53, 0xef]
      - id: state
        type: u2
      - id: errors
        type: u2
      - id: minor_rev_level
        type: u2
      - id: lastcheck
        type: u4
      - id: checkinterval
        type: u4
      - id: creator_os
        type: u4
      - id: rev_level
        type: u4
      - id: def_resuid
        type: u2
      - id: def_resgid
        type: u2
      - id: first_ino
        type: u4
      - id: inode_size
        type: u2
      - id: block_group_nr
        type: u2
      - id: feature_compat
        type: u4
      - id: feature_incompat
        type: u4
      - id: feature_ro_compat
        type: u4
      - id: uuid
        size: 16
      - id: volume_name
        type: strz
        size: 16
        encoding: ASCII
  group_desc:
    seq:
      - id: block_bitmap_block
        type: u4
      - id: inode_bitmap_block
        type: u4
      - id: inode_table_block
        type: u4
      - id: free_blocks_count
        type: u2
      - id: free_inodes_count
        type: u2
      - id: used_dirs_count
        type: u2
      - id: pad
        type: u2
      - id: reserved
        size: 12
  inode:
    seq:
      - id: mode
        type: u2
      - id: uid
        type: u2
      - id: size
        type: u4
      - id: atime
        type: u4
      - id: ctime
        type: u4
      - id: mtime
        type: u4
      - id: dtime
        type: u4
      - id: gid
        type: u2
      - id: links_count
        type: u2
      - id: blocks
        type: u4
        doc: 512-byte sectors held.
      - id: flags
        type: u4
      - id: osd1
        type: u4
      - id: block
        type: u4
        repeat: expr
        repeat-expr: 15
        doc: 12 direct blocks, then the single, double and triple indirect block.
    instances:
      block_size:
        value: 1024 << _root.sb.log_block_size
      first_block:
        io: _root._io
        pos: block[0] * block_size
        size: block_size
        if: links_count != 0 and block[0] != 0
        doc: The inode's first direct block, from the whole image.
  dir_block:
    seq:
      - id: entries
        type: dir_entry
        repeat: eos
  dir_entry:
    seq:
      - id: inode
        type: u4
      - id: rec_len
        type: u2
      - id: name_len
        type: u1
      - id: file_type
        type: u1
        enum: file_type
      - id: name
        type: str
        size: name_len
        encoding: UTF-8
      - id: padding
        size: rec_len - 8 - name_len
enums:
  file_type:
    0: unknown
    1: regular
    2: directory
    3: char_device
    4: block_device
    5: fifo
    6: socket
    7: symlink
