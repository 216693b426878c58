meta:
  id: context_whole
  endian: le
doc: |
  `_root` given whole as the argument of a user-type param (the type receives the paths it
  uses of it), and the list being read seen from inside its own elements (`.size` counts
  the elements read before the current one).
seq:
  - id: count
    type: u1
  - id: kind
    type: u1
    enum: kind
  - id: parts
    type: part
    repeat: expr
    repeat-expr: count
  - id: check
    type: checker(_root)
enums:
  kind:
    1: small
    2: large
types:
  part:
    seq:
      - id: data
        size: _parent.count - _parent.parts.size
  checker:
    params:
      - id: top
        type: context_whole
    seq:
      - id: tail
        size: top.count
    instances:
      is_large:
        value: top.kind == kind::large
      last_len:
        value: top.parts.last.data.size
