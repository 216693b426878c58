# An encoding the generator does not know is accepted with a warning (as Kaitai Struct's
# compiler does); the reader and the writer refuse the field when they meet it.
meta:
  id: unknown_encoding
  encoding: UTF-8
seq:
  - id: len_name
    type: u1
  - id: name
    type: str
    size: len_name
  - id: has_legacy
    type: u1
  - id: legacy
    type: str
    size: 2
    encoding: x-legacy-charset
    if: has_legacy != 0
