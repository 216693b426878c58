meta:
  id: processed_positional
  endian: le
doc: |
  A positional instance inside a type read through `process`: `at_ofs` reads from the
  processed (xor-ed) substream; on write it is laid out in that substream before it is
  processed again (codegen/tests/processed_positional.rs). An instance of the whole input
  (`io: _root._io`) there is refused (codegen/tests/bad/instance_root_io_in_process.ksy).
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
