meta:
  id: field_unknown
seq:
  - id: a
    type: u1
    checksum: crc32
