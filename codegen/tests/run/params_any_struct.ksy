meta:
  id: params_any_struct
doc: |
  A `struct[]` param given a list literal of values of two user types, directly and
  through a value instance.
seq:
  - id: one
    type: foo
  - id: two
    type: bar
  - id: direct
    type: holder([one, two, one])
  - id: through
    type: holder(pair)
instances:
  pair:
    value: '[two, one]'
types:
  foo:
    seq:
      - id: f
        type: u1
  bar:
    seq:
      - id: b
        type: u1
  holder:
    params:
      - id: structs
        type: struct[]
    seq:
      - id: data
        size: structs.size
