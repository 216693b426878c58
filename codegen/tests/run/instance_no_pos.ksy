# An instance without `pos` is read where the stream is when it is read: here after the
# `seq`, so `trailer` starts right after `body`.
meta:
  id: instance_no_pos
  endian: le
seq:
  - id: len_body
    type: u1
  - id: body
    size: len_body
instances:
  trailer:
    type: trailer
types:
  trailer:
    seq:
      - id: magic
        contents: END
      - id: crc
        type: u2
