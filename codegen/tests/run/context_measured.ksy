meta:
  id: context_measured
  endian: le
doc: |
  A type measured by writing (a kept terminator) whose layout depends on `_parent`, in a
  field whose size the parent derives from its length (`body`), and in one whose size is
  an expression the writer checks (`tail`).
seq:
  - id: n
    type: u1
  - id: len
    type: u1
  - id: body
    size: len
    type: body
  - id: tail_len
    type: u1
  - id: tail
    size: tail_len - 1
    type: body
types:
  body:
    seq:
      - id: name
        type: strz
        encoding: ISO-8859-1
      - id: data
        size: _parent.n
