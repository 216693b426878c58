meta:
  id: self_type
seq:
  - id: me
    type: self
types:
  self:
    seq:
      - id: x
        type: u1
