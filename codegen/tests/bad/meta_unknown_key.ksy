meta:
  id: meta_unknown_key
  endianness: le
seq:
  - id: a
    type: u1
