meta:
  id: contents_with_type
seq:
  - id: magic
    type: u4le
    contents: SNAP
