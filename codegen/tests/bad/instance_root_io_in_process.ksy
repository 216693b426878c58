meta:
  id: root_io_in_process
  endian: le
seq:
  - id: len
    type: u1
  - id: chunk
    size: len
    process: xor(0x5a)
    type: chunk
types:
  chunk:
    seq:
      - id: ofs
        type: u1
    instances:
      at_ofs:
        pos: ofs
        type: u1
      first_byte:
        io: _root._io
        pos: 0
        type: u1
