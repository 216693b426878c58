meta:
  id: value_instances
  endian: le
seq:
  - id: n
    type: u1
  - id: items
    type: u1
    repeat: expr
    repeat-expr: count
  - id: name
    type: str
    size: 2
    encoding: ASCII
instances:
  count:
    value: n - 1
  double_count:
    value: count * 2
  greeting:
    value: name + "!"
  big:
    value: n > 2
  kind:
    value: 'n > 2 ? 2 : 1'
    enum: animal
  maybe:
    value: n * 10
    if: n > 100
enums:
  animal:
    1: cat
    2: dog
