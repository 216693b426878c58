meta:
  id: misc_lang
  endian: le
  encoding: ASCII
  ks-version: '0.11'
seq:
  - id: magic
    size: 2
    valid: '[0x50, 0x4b]'
  - id: tag
    size: 2
    valid:
      min: '[0x41]'
      max: '[0x41, 0x5a]'
  - id: name
    type: str
    size: 3
    valid:
      min: '"AAA"'
      max: '"ZZZ"'
  - id: kind
    type: u1
    enum: animal
    valid:
      in-enum: true
  - id: recs
    type: rec
    repeat: until
    repeat-until: _.marker == 0xaa
  - id: chunks
    terminator: 0x2c
    consume: false
    repeat: until
    repeat-until: _.size == 0
  - id: comma
    contents: ','
types:
  rec:
    seq:
      - id: marker
        type: u1
      - id: body
        size: 2
    instances:
      rec_size:
        value: _sizeof
      body_size:
        value: body._sizeof
enums:
  animal:
    1: cat
    2: dog
instances:
  name_after_m:
    value: name > "M"
  name_backwards:
    value: name.reverse
  label:
    value: 'f"{name}#{kind.to_i}"'
  pair:
    value: '[kind.to_i, 0xff].as<bytes>'
  all_recs:
    value: recs
  first_marker:
    value: all_recs.first.marker
  marker_size:
    value: recs[0].marker._sizeof
