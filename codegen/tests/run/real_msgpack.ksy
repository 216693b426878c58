meta:
  id: real_msgpack
  endian: be
doc: |
  One MessagePack value, as the MessagePack specification lays it out: a type byte whose
  range says what follows. 0x00-0x7f and 0xe0-0xff are integers held in the byte itself
  (positive and negative fixint); 0x80-0x8f, 0x90-0x9f and 0xa0-0xbf are a map, an array and a
  string whose length (pairs, elements, bytes) is the byte's low bits; the other bytes name one
  form each: nil, false, true, bin 8, float 32 and 64, unsigned and signed integers of 8 to
  64 bits, str 8 and 16, array 16 and map 16 (whose length comes after the type byte, and
  which the writer derives). Numbers are big-endian. The type byte's range becomes a switch
  over `kind` that mixes number types (the integers and floats that follow the byte) and
  user types. Read, edited and written back in codegen/tests/real_formats_b.rs.
seq:
  - id: value
    type: msg
types:
  msg:
    seq:
      - id: b
        type: u1
        doc: The type byte.
      - id: body
        type:
          switch-on: kind
          cases:
            0x00: empty
            0xe0: empty
            0xc0: empty
            0xc2: empty
            0xc3: empty
            0x80: fixmap(b & 0x0f)
            0x90: fixarray(b & 0x0f)
            0xa0: fixstr(b & 0x1f)
            0xc4: bin8
            0xca: f4
            0xcb: f8
            0xcc: u1
            0xcd: u2
            0xce: u4
            0xcf: u8
            0xd0: s1
            0xd1: s2
            0xd2: s4
            0xd3: s8
            0xd9: str8
            0xda: str16
            0xdc: array16
            0xde: map16
    instances:
      kind:
        value: 'b <= 0x7f ? 0x00 : b <= 0x8f ? 0x80 : b <= 0x9f ? 0x90 : b <= 0xbf ? 0xa0 : b >= 0xe0 ? 0xe0 : b'
        doc: The type byte's range (its first byte), or the byte itself for a one-form byte.
      fixint:
        value: 'b <= 0x7f ? b : b - 0x100'
        doc: The integer a positive or negative fixint holds.
  empty:
    doc: Nothing follows the type byte (fixint, nil, false, true).
    seq: []
  fixmap:
    params:
      - id: num_pairs
        type: u1
    seq:
      - id: pairs
        type: pair
        repeat: expr
        repeat-expr: num_pairs
  fixarray:
    params:
      - id: num_elems
        type: u1
    seq:
      - id: elems
        type: msg
        repeat: expr
        repeat-expr: num_elems
  fixstr:
    params:
      - id: len
        type: u1
    seq:
      - id: text
        type: str
        size: len
        encoding: UTF-8
  bin8:
    seq:
      - id: len
        type: u1
      - id: data
        size: len
  str8:
    seq:
      - id: len
        type: u1
      - id: text
        type: str
        size: len
        encoding: UTF-8
  str16:
    seq:
      - id: len
        type: u2
      - id: text
        type: str
        size: len
        encoding: UTF-8
  array16:
    seq:
      - id: num_elems
        type: u2
      - id: elems
        type: msg
        repeat: expr
        repeat-expr: num_elems
  map16:
    seq:
      - id: num_pairs
        type: u2
      - id: pairs
        type: pair
        repeat: expr
        repeat-expr: num_pairs
  pair:
    seq:
      - id: key
        type: msg
      - id: value
        type: msg
