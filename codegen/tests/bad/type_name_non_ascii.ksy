meta:
  id: non_ascii_type
seq:
  - id: a
    type: ébe
