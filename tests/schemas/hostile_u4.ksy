meta:
  id: hostile_u4
  -sp-strict: true
  endian: le
  encoding: UTF-8
doc: |
  Lengths and counts stored as u4, so a hostile file can claim 4 GiB of anything:
  raw bytes, text, a list of small elements, a list of sized elements and a sized
  substream with its own u4 count (used by tests/hostile_alloc.rs).
seq:
  - id: len_blob
    type: u4
  - id: blob
    size: len_blob
  - id: len_text
    type: u4
  - id: text
    type: str
    size: len_text
  - id: num_bytes
    type: u4
  - id: bytes
    type: u1
    repeat: expr
    repeat-expr: num_bytes
  - id: num_items
    type: u4
  - id: items
    type: item
    repeat: expr
    repeat-expr: num_items
  - id: len_body
    type: u4
  - id: body
    type: body
    size: len_body
types:
  item:
    seq:
      - id: len_name
        type: u4
      - id: name
        size: len_name
  body:
    seq:
      - id: num_words
        type: u4
      - id: words
        type: u2
        repeat: expr
        repeat-expr: num_words
