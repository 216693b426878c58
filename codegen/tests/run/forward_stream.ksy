meta:
  id: forward_stream
  endian: le
doc: |
  Records before the pool of labels they point into: each record's `label` is read from
  the pool's substream (`io: _root.pool._io`), which the root reads after the records.
seq:
  - id: num_records
    type: u1
  - id: records
    type: record
    repeat: expr
    repeat-expr: num_records
  - id: pool
    type: pool
    size-eos: true
types:
  record:
    seq:
      - id: ofs_label
        type: u1
    instances:
      label:
        io: _root.pool._io
        pos: ofs_label
        type: strz
        encoding: ASCII
  pool:
    seq:
      - id: body
        size-eos: true
