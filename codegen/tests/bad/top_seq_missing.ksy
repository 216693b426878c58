meta:
  id: no_seq
types:
  a:
    seq:
      - id: x
        type: u1
