meta:
  id: encoding_unsupported
  encoding: UTF-16LE
seq:
  - id: a
    type: u1
