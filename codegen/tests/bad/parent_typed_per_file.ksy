# The importer's root has `len_body`, but `_parent` of the imported `body` is typed in the
# file that defines it, where no field reads `body`.
meta:
  id: parent_typed_per_file
  imports:
    - parent_typed_per_file_lib
seq:
  - id: len_body
    type: u1
  - id: body
    type: parent_typed_per_file_lib::body
