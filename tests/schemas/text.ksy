meta:
  id: text
  -sp-strict: true
  endian: be
  encoding: UTF-8
doc: Strings, raw bytes, fixed contents and sized substreams.
seq:
  - id: magic
    contents: TXT!
  - id: tag
    contents: [0xca, 0xfe, "ok", 0]
  - id: len_title
    type: u1
  - id: title
    doc: UTF-8 (the schema default); its length is derived.
    type: str
    size: len_title
  - id: code
    type: str
    size: 3
    encoding: ASCII
    valid:
      any-of: ['"abc"', '"xyz"']
  - id: label
    type: strz
  - id: ascii_label
    type: strz
    encoding: ascii
  - id: len_blob
    type: u2
  - id: blob
    size: len_blob
  - id: pad
    size: 2
  - id: len_note
    type: u1
  - id: note
    type: note
    size: len_note
  - id: rest
    type: rest
    size-eos: true
types:
  note:
    seq:
      - id: lang
        type: str
        size: 2
        encoding: ASCII
        valid:
          eq: '"en"'
      - id: body
        type: str
        size-eos: true
  rest:
    seq:
      - id: check
        type: u2
      - id: data
        size-eos: true
