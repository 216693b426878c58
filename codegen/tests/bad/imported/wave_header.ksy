meta:
  id: wave_header
seq:
  - id: magic
    type: u1
