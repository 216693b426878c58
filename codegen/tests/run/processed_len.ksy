meta:
  id: processed_len
  endian: be
doc: |
  Sizes of processed fields given with an offset: `len_chunk` counts the compressed body
  and the 4-byte check after it (`size: len_chunk - 4`), `len_tail` two bytes fewer than
  the stored tail (`size: len_tail + 2`). The writer derives both from the bytes it
  produces (codegen/tests/semantics.rs).
seq:
  - id: len_chunk
    type: u2
  - id: body
    size: len_chunk - 4
    process: zlib
  - id: check
    type: u4
  - id: len_tail
    type: u1
  - id: tail
    size: len_tail + 2
    process: xor(0x55)
