meta:
  id: name_paths
  endian: le
doc: |
  More names that would clash in Rust and get distinct ones: types `gsm610` and `gsm_610`, an
  enum `gsm610`, a type named like the root, a switch whose cases' enum would take the name
  of a nested type, and a column set named like a type.
seq:
  - id: a
    type: gsm610
  - id: b
    type: gsm_610
  - id: codec
    type: u1
    enum: gsm610
  - id: chunk
    type: chunk
  - id: inner
    type: name_paths
  - id: cols
    type: samples_columns
types:
  gsm610:
    seq:
      - id: x
        type: u1
  gsm_610:
    seq:
      - id: y
        type: u2
  chunk:
    seq:
      - id: tag
        type: u1
      - id: body
        type:
          switch-on: tag
          cases:
            1: body
            2: gsm610
    types:
      body:
        seq:
          - id: z
            type: u2
  name_paths:
    seq:
      - id: w
        type: u1
  samples_columns:
    seq:
      - id: n
        type: u1
enums:
  gsm610:
    49: full_rate
    50: half_rate
-sp-column-sets:
  samples:
    columns:
      - id: level
        column: 1
        type: u2
