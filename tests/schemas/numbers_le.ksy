meta:
  id: numbers_le
  -sp-strict: true
  title: Every number type, little-endian by default
  endian: le
doc: |
  Every integer width, signed and unsigned, and both float widths: first in the default
  byte order (`meta.endian: le`), then with an explicit `be` suffix.
seq:
  - id: a_u1
    type: u1
  - id: a_s1
    type: s1
  - id: a_u2
    type: u2
  - id: a_s2
    type: s2
  - id: a_u4
    type: u4
  - id: a_s4
    type: s4
  - id: a_u8
    type: u8
  - id: a_s8
    type: s8
  - id: a_f4
    type: f4
  - id: a_f8
    type: f8
  - id: b_u2
    type: u2be
  - id: b_s2
    type: s2be
  - id: b_u4
    type: u4be
  - id: b_s4
    type: s4be
  - id: b_u8
    type: u8be
  - id: b_s8
    type: s8be
  - id: b_f4
    type: f4be
  - id: b_f8
    type: f8be
    -sp-units: m/s
