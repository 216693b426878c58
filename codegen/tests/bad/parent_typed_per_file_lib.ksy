# A type whose `_parent` nothing in this file reads: its parent is unknown here.
meta:
  id: parent_typed_per_file_lib
types:
  body:
    seq:
      - id: data
        size: _parent.len_body
