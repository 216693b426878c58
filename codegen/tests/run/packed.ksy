meta:
  id: packed
  endian: le
doc: |
  A table of typed columns packed after its directory: each entry's column goes on a
  multiple of 4 bytes, in directory order, and 2 zero bytes end the table. The writer
  places the columns and writes each entry's offset.
seq:
  - id: len_body
    type: u4
  - id: body
    size: len_body
    type: table
types:
  table:
    -sp-end-zeros: 2
    seq:
      - id: num_entries
        type: u2
      - id: entries
        type: entry
        repeat: expr
        repeat-expr: num_entries
  entry:
    seq:
      - id: kind
        type: u1
        doc: 1 bytes, 2 u16 words; another kind has no column.
      - id: ofs
        type: u2
        valid:
          max: 1000
        doc: Where the column is, from the start of the table.
      - id: count
        type: u2
    instances:
      bytes_v:
        pos: ofs
        size: count
        if: kind == 1
        -sp-align: 4
      words:
        pos: ofs
        type: u2
        repeat: expr
        repeat-expr: count
        if: kind == 2
        -sp-align: 4
        -sp-lazy: false
