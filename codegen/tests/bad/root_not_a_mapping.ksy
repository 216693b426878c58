- id: a
  type: u1
