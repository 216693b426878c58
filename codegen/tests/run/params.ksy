meta:
  id: params
  endian: le
seq:
  - id: len
    type: u1
  - id: kind
    type: u1
    enum: animal
  - id: body
    type: chunk(len, kind, "tag")
  - id: pairs
    type: chunk(2, animal::dog, "p")
    repeat: expr
    repeat-expr: 2
types:
  chunk:
    params:
      - id: size
        type: u4
      - id: who
        type: u1
        enum: animal
      - id: label
        type: str
    seq:
      - id: data
        size: size
    instances:
      is_dog:
        value: who == animal::dog
      twice:
        value: size * 2
      named:
        value: label + "!"
enums:
  animal:
    1: cat
    2: dog
