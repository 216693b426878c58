meta:
  id: encoding_on_number
seq:
  - id: a
    type: u1
    encoding: UTF-8
