meta:
  id: fat_dir_entry
  endian: le
  bit-endian: le
doc: |
  One 32-byte short-name entry of a FAT12/16/32 directory, laid out after Microsoft's
  published FAT specification: an 8.3 name, an attribute byte whose flags are packed from
  the lowest bit up, and DOS times and dates packed into little-endian 16-bit words
  (seconds / 2 in bits 0-4, minutes in bits 5-10, hours in bits 11-15; day in bits 0-4,
  month in bits 5-8, years since 1980 in bits 9-15). The attribute byte, the times and the
  dates are runs of least-significant-bit-first bit fields that fill whole bytes, so each
  also has a modular-bitfield view.
seq:
  - id: name
    type: str
    size: 8
    encoding: ASCII
    doc: Base name, padded with spaces.
  - id: ext
    type: str
    size: 3
    encoding: ASCII
    doc: Extension, padded with spaces.
  - id: attr
    type: attributes
  - id: case_info
    type: u1
  - id: create_time_fine
    type: u1
    doc: Creation time in 10 ms units past the even second, 0-199.
  - id: create_time
    type: dos_time
  - id: create_date
    type: dos_date
  - id: access_date
    type: dos_date
  - id: cluster_hi
    type: u2
  - id: write_time
    type: dos_time
  - id: write_date
    type: dos_date
  - id: cluster_lo
    type: u2
  - id: file_size
    type: u4
    doc: Bytes.
types:
  attributes:
    seq:
      - id: read_only
        type: b1
      - id: hidden
        type: b1
      - id: system
        type: b1
      - id: volume_label
        type: b1
      - id: subdirectory
        type: b1
      - id: archive
        type: b1
      - id: device
        type: b1
      - id: reserved
        type: b1
  dos_time:
    seq:
      - id: second_halves
        type: b5
        doc: Seconds / 2, 0-29.
        valid:
          max: 29
      - id: minutes
        type: b6
        valid:
          max: 59
      - id: hours
        type: b5
        valid:
          max: 23
  dos_date:
    seq:
      - id: day
        type: b5
        valid:
          min: 1
      - id: month
        type: b4
        enum: month
      - id: years_since_1980
        type: b7
enums:
  month:
    1: january
    2: february
    3: march
    4: april
    5: may
    6: june
    7: july
    8: august
    9: september
    10: october
    11: november
    12: december
