meta:
  id: imports_main
  endian: le
  imports:
    - imported/imports_lib
seq:
  - id: head
    type: imports_lib
  - id: count
    type: u2
instances:
  is_large:
    value: head.kind == imports_lib::kind::large
