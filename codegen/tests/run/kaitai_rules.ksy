meta:
  id: kaitai_rules
  endian: le
  -orig-tool: ignored, as Kaitai Struct ignores every key starting with `-`
seq:
  - id: neg
    type: s4
  - id: floors
    type: u1
    if: neg / 13 == -4073 and neg % 13 == 2 and 7 / -2 == -4
  - id: len_body
    type: u1
  - id: body
    type: u3
    size: len_body
  - id: kind
    type: u1
    enum: animal
  - id: pick
    type: u1
  - id: choice
    type:
      switch-on: pick
      cases:
        1: u3
  - id: tail
    type: u1
types:
  u3:
    seq:
      - id: a
        type: u1
enums:
  animal:
    -note: ignored
    1: cat
    2:
      id: dog
      -orig-id: DOG
