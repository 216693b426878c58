meta:
  id: opaque_args
  ks-opaque-types: true
doc: |
  Arguments to an opaque type: `tagged_run` is the external Rust type `super::TaggedRun`,
  read with `OpaqueType::read_with_args`: `len` bytes, then a tail byte when the second
  argument holds.
seq:
  - id: len
    type: u1
  - id: run
    type: tagged_run(len, len > 1)
  - id: sized_run
    size: 3
    type: tagged_run(2, true)
