meta:
  id: enum_value_unquoted_null
enums:
  kind:
    0: zero
    1: ~
