meta:
  id: sum_of_derived_element_field
  endian: le
seq:
  - id: total
    type: u4
    -sp-sum-of: parts.len_name
  - id: num_parts
    type: u1
  - id: parts
    type: part
    repeat: expr
    repeat-expr: num_parts
types:
  part:
    seq:
      - id: len_name
        type: u1
      - id: name
        type: str
        size: len_name
        encoding: UTF-8
