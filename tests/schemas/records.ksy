meta:
  id: records
  -sp-strict: true
  endian: le
  encoding: ASCII
doc: Validated header fields, a conditional field, a sum, and entries with switch bodies.
seq:
  - id: magic
    contents: REC
  - id: version
    type: u1
    valid: 2
  - id: revision
    type: u2
    valid:
      eq: 0x0102
  - id: flags
    type: u1
    valid:
      expr: (_ & 0xf0) == 0 and _ % 16 != 15
  - id: level
    type: s2
    valid:
      min: -100
      max: 100
  - id: mode
    type: u1
    enum: mode
    valid:
      any-of: [mode::fast, mode::safe]
  - id: scale
    type: f4
    valid:
      min: 0
      max: 2.5
  - id: extra_ms
    type: u4
    if: (flags & 1) != 0
    -sp-units: ms
  - id: total_ms
    type: u4
    -sp-units: ms
    -sp-sum-of: entries.dt_ms
  - id: num_entries
    type: u1
  - id: entries
    type: entry
    repeat: expr
    repeat-expr: num_entries
  - id: len_header
    type: u1
  - id: header
    type: header
    size: len_header
  - id: shape_tag
    type: u1
  - id: shape
    type:
      switch-on: shape_tag
      cases:
        1: circle
        0x2: rect
        0b11: circle
  - id: packed
    type: u1
  - id: data
    size: "(packed >> 4) * 2 + ((packed & 0x8) != 0 ? 1 : 0) - (packed & 0x7) / 4"
types:
  entry:
    seq:
      - id: dt_ms
        type: u2
        -sp-units: ms
      - id: kind
        type: u1
        enum: kind
      - id: body
        type:
          switch-on: kind
          cases:
            kind::point: point
            kind::label: label
            kind::blob: blob
            _: blob
      - id: weight
        type: u1
        if: (kind.to_i << 1) >= 4
  point:
    seq:
      - id: x
        type: s2
      - id: y
        type: s2
  label:
    seq:
      - id: text
        type: strz
  blob:
    seq:
      - id: len_data
        type: u1
      - id: data
        size: len_data
  header:
    seq:
      - id: id
        type: u2
      - id: count
        type: u2be
  circle:
    seq:
      - id: radius
        type: u2
  rect:
    seq:
      - id: w
        type: u1
      - id: h
        type: u1
enums:
  mode:
    1: fast
    2: safe
    3: risky
  kind:
    0: point
    1:
      id: label
      doc: A zero-terminated text.
    2: blob
    3: heavy_blob
