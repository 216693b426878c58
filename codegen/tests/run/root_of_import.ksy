# The importing root has a `width` of its own; the imported schema's `_root.width` is its
# own root's.
meta:
  id: root_of_import
  imports:
    - imported/root_lib
seq:
  - id: width
    type: u1
  - id: lib
    type: root_lib
