meta:
  id: rust_names_collide
seq:
  - id: a
    type: vec3
  - id: b
    type: vec_3
types:
  vec3:
    seq:
      - id: x
        type: u1
  vec_3:
    seq:
      - id: x
        type: u1
