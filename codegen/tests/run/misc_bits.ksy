meta:
  id: misc_bits
seq:
  - id: hi
    type: b3be
  - id: lo
    type: b5be
  - id: l1
    type: b4le
  - id: l2
    type: b4le
  - id: pet
    type: b1
    enum: animal
enums:
  animal:
    0: cat
    1: dog
    4: horse
