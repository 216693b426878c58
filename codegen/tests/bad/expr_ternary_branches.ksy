meta:
  id: ternary_branches
seq:
  - id: flags
    type: u1
  - id: data
    size: "flags > 0 ? 4 : false"
