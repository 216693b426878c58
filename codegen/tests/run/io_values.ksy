meta:
  id: io_values
  endian: le
doc: |
  Streams as values: `io` and `io[]` params, `value._io` and `_io` passed on, a choice
  between values of two user types used for its `_io`, and a positional instance reading
  from a chosen value's stream, sized by the type's own `_io.pos`.
seq:
  - id: o1
    size: 2
    type: t1
  - id: o2
    size: 3
    type: t1
  - id: o3
    size: 1
    type: t2
  - id: h
    type: 'holder([o1._io, o2._io, _io])'
  - id: one
    type: 'single(o1.a == 0 ? o1._io : _io)'
instances:
  any:
    value: 'o1.a == 0 ? o1 : o3'
  any_io:
    value: 'any._io'
  any_size:
    value: '(o1.a == 0 ? o1 : o3)._io.size'
  peek:
    io: 'o1.a == 0 ? o1._io : o2._io'
    pos: 1
    size: '_io.pos == _io.size ? 1 : 0'
types:
  t1:
    seq:
      - id: a
        type: u1
  t2:
    seq:
      - id: b
        type: u1
  holder:
    params:
      - id: ss
        type: io[]
    seq:
      - id: buf
        size: 'ss[2].size - ss[2].pos - 1'
    instances:
      first_eof:
        value: ss.first.eof
  single:
    params:
      - id: s
        type: io
    seq:
      - id: rest
        size: s.size - s.pos
