meta:
  id: contents_not_byte
seq:
  - id: magic
    contents: [0x53, 0x4e, 256]
