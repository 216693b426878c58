meta:
  id: default
doc: |
  A root type whose Rust name the generated code reserves (`Default`) becomes `DefaultType`;
  the root named by its `meta.id` inside itself is that type.
seq:
  - id: more
    type: u1
  - id: next
    type: default
    if: more != 0
