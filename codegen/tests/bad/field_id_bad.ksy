meta:
  id: field_id_bad
seq:
  - id: numFrames
    type: u1
