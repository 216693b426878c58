meta:
  id: term_not_a_byte
seq:
  - id: a
    type: str
    encoding: UTF-8
    terminator: 300
