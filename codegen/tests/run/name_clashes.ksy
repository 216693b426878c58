meta:
  id: name_clashes
  endian: le
doc: |
  Names that would clash in Rust get distinct names: types `vec3` and `vec_3`, a type and an
  enum both `frame`, types named like items of the generated code (`result`, `self`), enum
  values `x1` and `x_1`, `self`, and `unlisted` in an open enum.
seq:
  - id: a
    type: vec3
  - id: b
    type: vec_3
  - id: f
    type: frame
  - id: r
    type: result
  - id: s
    type: self
  - id: axis
    type: u1
    enum: axis
  - id: kind
    type: u1
    enum: frame
types:
  vec3:
    seq:
      - id: x
        type: u1
  vec_3:
    seq:
      - id: x
        type: u2
  frame:
    seq:
      - id: tick
        type: u1
  result:
    seq:
      - id: code
        type: u1
  self:
    seq:
      - id: me
        type: u1
instances:
  is_x_1:
    value: axis == axis::x_1
  is_unlisted:
    value: axis == axis::unlisted
enums:
  axis:
    0: x1
    1: x_1
    2: self
    3: unlisted
  frame:
    0: key
    1: delta
