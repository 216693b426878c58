meta:
  id: fstring_unclosed_brace
seq:
  - id: n
    type: u1
instances:
  label:
    value: 'f"n={n"'
