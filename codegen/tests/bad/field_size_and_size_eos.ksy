meta:
  id: size_and_size_eos
seq:
  - id: a
    size: 4
    size-eos: true
