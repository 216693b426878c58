meta:
  id: data_operands
  endian: le
doc: |
  Divisors and shift amounts read from the data: `/` and `%` round as Kaitai Struct does,
  a zero divisor or a shift outside 0..63 is an error where the expression is evaluated.
seq:
  - id: total
    type: s4
  - id: parts
    type: u1
  - id: shift
    type: u1
  - id: piece
    size: total / parts
instances:
  quotient:
    value: total / parts
  remainder:
    value: total % parts
  shifted_left:
    value: total << shift
  shifted_right:
    value: total >> shift
