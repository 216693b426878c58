meta:
  id: meta_imports
  imports:
    - common
seq:
  - id: a
    type: u1
