meta:
  id: misc_root_params
params:
  - id: len
    type: u1
  - id: has_trailer
    type: bool
seq:
  - id: body
    size: len
  - id: trailer
    type: u1
    if: has_trailer
