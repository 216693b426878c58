meta:
  id: contents_mapping
seq:
  - id: magic
    contents:
      text: SNAP
