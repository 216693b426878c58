meta:
  id: lazy_budget
doc: |
  Many entries whose instances each read the whole input. Read on access, one after the
  other, they count against the input's budget of bytes read by positional instances, as
  they would while decoding. Exercised by codegen/tests/lazy.rs.
seq:
  - id: num_views
    type: u1
  - id: views
    type: view
    repeat: expr
    repeat-expr: num_views
  - id: rest
    size-eos: true
types:
  view:
    seq:
      - id: tag
        type: u1
    instances:
      whole:
        io: _root._io
        pos: 0
        size-eos: true
