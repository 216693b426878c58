meta:
  id: switch_builtin
  endian: le
doc: |
  Switches whose cases are `str`, `strz` and number types, sized and not, as chunked
  formats use them (a tag, a length, then text or a number in that many bytes): read,
  written back byte for byte, and read by the interpreter to the same values.
seq:
  - id: code
    type: u1
  - id: len_body
    type: u1
  - id: body
    size: len_body
    encoding: ASCII
    type:
      switch-on: code
      cases:
        1: strz
        2: str
        3: u2
        4: point
  - id: label
    encoding: UTF-8
    type:
      switch-on: code
      cases:
        1: strz
        _: u1
  - id: num
    size: 4
    type:
      switch-on: code
      cases:
        1: u1
        2: u2be
        _: s4
  - id: words
    size: 3
    repeat: expr
    repeat-expr: 2
    encoding: ASCII
    type:
      switch-on: code
      cases:
        1: u2
        _: strz
types:
  point:
    seq:
      - id: x
        type: u1
instances:
  body_number:
    value: body.as<u2> + 1
