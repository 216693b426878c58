meta:
  id: recursion
doc: |
  A root type that holds itself: through a switch (`tag` 1 holds another `recursion`,
  0 ends), and through `_root` / `_parent` paths that reach the top level; `tree` holds a
  list of itself.
seq:
  - id: tag
    type: u1
  - id: next
    type:
      switch-on: tag
      cases:
        1: recursion
        0: leaf
instances:
  top_tag:
    value: _root.tag
  parent_tag:
    value: _parent.tag
    if: tag == 0
types:
  leaf:
    seq:
      - id: end
        type: u1
      - id: tree
        type: tree
  tree:
    seq:
      - id: count
        type: u1
      - id: children
        type: tree
        repeat: expr
        repeat-expr: count
