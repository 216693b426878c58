meta:
  id: numbers_be
  -sp-strict: true
  title: Every number type, big-endian by default
  endian: be
doc: |
  Every integer width, signed and unsigned, and both float widths: first in the default
  byte order (`meta.endian: be`), then with an explicit `le` suffix.
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
    type: u2le
  - id: b_s2
    type: s2le
  - id: b_u4
    type: u4le
  - id: b_s4
    type: s4le
  - id: b_u8
    type: u8le
  - id: b_s8
    type: s8le
  - id: b_f4
    type: f4le
  - id: b_f8
    type: f8le
    -sp-units: m/s
