meta:
  id: encoding_unsupported
  encoding: EBCDIC
seq:
  - id: a
    type: u1
