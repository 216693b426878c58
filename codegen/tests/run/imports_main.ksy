meta:
  id: imports_main
  endian: le
  imports:
    - imported/imports_lib
    - imported/sized_blob
seq:
  - id: head
    type: imports_lib
  - id: count
    type: u2
  - id: blob
    type: sized_blob(count - 1)
instances:
  is_large:
    value: head.kind == imports_lib::kind::large
