# The imported schema is the type `wave_header`, and so is a type of this schema: a reference
# to `wave_header` could mean either.
meta:
  id: imported_id_names_a_type
  imports:
    - imported/wave_header
seq:
  - id: h
    type: wave_header
types:
  wave_header:
    seq:
      - id: x
        type: u1
