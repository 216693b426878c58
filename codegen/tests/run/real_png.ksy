meta:
  id: real_png
  title: PNG image, as a list of chunks
  endian: be
doc: |
  A PNG file as its chunk list, written from the PNG specification: the 8-byte signature,
  then chunks of a 4-byte big-endian data length, a 4-byte type, the data and a CRC-32 of
  the type and data, up to and including `IEND`. The header (`IHDR`) and text (`tEXt`)
  chunks are read as types, any other chunk as raw bytes. The writer derives each chunk's
  length from its data; the CRC is a stored member (codegen/tests/real_formats_a.rs).
seq:
  - id: signature
    contents: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  - id: chunks
    type: chunk
    repeat: until
    repeat-until: _.chunk_type == "IEND"
types:
  chunk:
    seq:
      - id: len_data
        type: u4
      - id: chunk_type
        type: str
        size: 4
        encoding: ASCII
      - id: data
        size: len_data
        type:
          switch-on: chunk_type
          cases:
            '"IHDR"': header
            '"tEXt"': text
      - id: crc
        type: u4
        doc: CRC-32 (ISO 3309, as zlib's) of the type and data bytes.
  header:
    seq:
      - id: width
        type: u4
      - id: height
        type: u4
      - id: bit_depth
        type: u1
      - id: color_type
        type: u1
      - id: compression_method
        type: u1
      - id: filter_method
        type: u1
      - id: interlace_method
        type: u1
  text:
    seq:
      - id: keyword
        type: strz
        encoding: ISO-8859-1
      - id: text
        type: str
        size-eos: true
        encoding: ISO-8859-1
