meta:
  id: opaque
  ks-opaque-types: true
doc: |
  `ks-opaque-types`: `pair_of_bytes` is not defined here; it is the external Rust type
  `super::PairOfBytes`.
seq:
  - id: len
    type: u1
  - id: pair
    type: pair_of_bytes
  - id: sized_pair
    size: 2
    type: pair_of_bytes
