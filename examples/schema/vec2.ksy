meta:
  id: vec2
  endian: le
doc: A position on the map, in metres from its south-west corner.
seq:
  - id: x
    type: f4
    doc: East, in metres.
  - id: y
    type: f4
    doc: North, in metres.
