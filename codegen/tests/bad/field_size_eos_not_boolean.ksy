meta:
  id: size_eos_yes
seq:
  - id: a
    size-eos: yes
