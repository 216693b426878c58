meta:
  id: bits_width_too_wide
seq:
  - id: huge
    type: b65
