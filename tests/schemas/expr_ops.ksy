meta:
  id: expr_ops
  endian: le
  encoding: UTF-8
doc: |
  Every operator, method and cast of the expression language over values read from the
  input, one value instance per operation, each evaluated only when `op` selects it. The
  test tests/expr_semantics.rs reads edge values through the Rust generated from this
  schema and through the interpreter and requires the same value or the same error. The
  instances hold the values (an instance that fails shows as null); the empty `eval_*`
  fields evaluate the same expressions in an `if`, so that an error fails the whole read.
seq:
  - id: op
    type: u1
  - id: a
    type: s8
  - id: b
    type: s8
  - id: u
    type: u8
  - id: x
    type: f8
  - id: y
    type: f8
  - id: len_s
    type: u1
  - id: s
    type: str
    size: len_s
  - id: len_t
    type: u1
  - id: t
    type: str
    size: len_t
  - id: len_p
    type: u1
  - id: p
    size: len_p
  - id: len_q
    type: u1
  - id: q
    size: len_q
  - id: eval_add
    doc: Evaluated so that an error in `add` fails the read.
    size: 0
    if: 'op == 0 and ((a + b) == (a + b))'
  - id: eval_sub
    doc: Evaluated so that an error in `sub` fails the read.
    size: 0
    if: 'op == 1 and ((a - b) == (a - b))'
  - id: eval_mul
    doc: Evaluated so that an error in `mul` fails the read.
    size: 0
    if: 'op == 2 and ((a * b) == (a * b))'
  - id: eval_div
    doc: Evaluated so that an error in `div` fails the read.
    size: 0
    if: 'op == 3 and ((a / b) == (a / b))'
  - id: eval_mod
    doc: Evaluated so that an error in `mod` fails the read.
    size: 0
    if: 'op == 4 and ((a % b) == (a % b))'
  - id: eval_shl
    doc: Evaluated so that an error in `shl` fails the read.
    size: 0
    if: 'op == 5 and ((a << b) == (a << b))'
  - id: eval_shr
    doc: Evaluated so that an error in `shr` fails the read.
    size: 0
    if: 'op == 6 and ((a >> b) == (a >> b))'
  - id: eval_bit_and
    doc: Evaluated so that an error in `bit_and` fails the read.
    size: 0
    if: 'op == 7 and ((a & b) == (a & b))'
  - id: eval_bit_or
    doc: Evaluated so that an error in `bit_or` fails the read.
    size: 0
    if: 'op == 8 and ((a | b) == (a | b))'
  - id: eval_bit_xor
    doc: Evaluated so that an error in `bit_xor` fails the read.
    size: 0
    if: 'op == 9 and ((a ^ b) == (a ^ b))'
  - id: eval_eq
    doc: Evaluated so that an error in `eq` fails the read.
    size: 0
    if: 'op == 10 and ((a == b) == (a == b))'
  - id: eval_ne
    doc: Evaluated so that an error in `ne` fails the read.
    size: 0
    if: 'op == 11 and ((a != b) == (a != b))'
  - id: eval_lt
    doc: Evaluated so that an error in `lt` fails the read.
    size: 0
    if: 'op == 12 and ((a < b) == (a < b))'
  - id: eval_le
    doc: Evaluated so that an error in `le` fails the read.
    size: 0
    if: 'op == 13 and ((a <= b) == (a <= b))'
  - id: eval_gt
    doc: Evaluated so that an error in `gt` fails the read.
    size: 0
    if: 'op == 14 and ((a > b) == (a > b))'
  - id: eval_ge
    doc: Evaluated so that an error in `ge` fails the read.
    size: 0
    if: 'op == 15 and ((a >= b) == (a >= b))'
  - id: eval_neg
    doc: Evaluated so that an error in `neg` fails the read.
    size: 0
    if: 'op == 16 and ((-a) == (-a))'
  - id: eval_bit_not
    doc: Evaluated so that an error in `bit_not` fails the read.
    size: 0
    if: 'op == 17 and ((~a) == (~a))'
  - id: eval_not_eq
    doc: Evaluated so that an error in `not_eq` fails the read.
    size: 0
    if: 'op == 18 and ((not (a == b)) == (not (a == b)))'
  - id: eval_and_or
    doc: Evaluated so that an error in `and_or` fails the read.
    size: 0
    if: 'op == 19 and ((a < b and (b > 0 or a == 0)) == (a < b and (b > 0 or a == 0)))'
  - id: eval_ternary
    doc: Evaluated so that an error in `ternary` fails the read.
    size: 0
    if: 'op == 20 and ((a < b ? a : b) == (a < b ? a : b))'
  - id: eval_u_add
    doc: Evaluated so that an error in `u_add` fails the read.
    size: 0
    if: 'op == 21 and ((u + a) == (u + a))'
  - id: eval_u_mul
    doc: Evaluated so that an error in `u_mul` fails the read.
    size: 0
    if: 'op == 22 and ((u * u) == (u * u))'
  - id: eval_u_div
    doc: Evaluated so that an error in `u_div` fails the read.
    size: 0
    if: 'op == 23 and ((u / a) == (u / a))'
  - id: eval_u_mod
    doc: Evaluated so that an error in `u_mod` fails the read.
    size: 0
    if: 'op == 24 and ((u % a) == (u % a))'
  - id: eval_u_shr
    doc: Evaluated so that an error in `u_shr` fails the read.
    size: 0
    if: 'op == 25 and ((u >> b) == (u >> b))'
  - id: eval_u_gt
    doc: Evaluated so that an error in `u_gt` fails the read.
    size: 0
    if: 'op == 26 and ((u > a) == (u > a))'
  - id: eval_f_add
    doc: Evaluated so that an error in `f_add` fails the read.
    size: 0
    if: 'op == 27 and ((x + y) == (x + y))'
  - id: eval_f_sub
    doc: Evaluated so that an error in `f_sub` fails the read.
    size: 0
    if: 'op == 28 and ((x - y) == (x - y))'
  - id: eval_f_mul
    doc: Evaluated so that an error in `f_mul` fails the read.
    size: 0
    if: 'op == 29 and ((x * y) == (x * y))'
  - id: eval_f_div
    doc: Evaluated so that an error in `f_div` fails the read.
    size: 0
    if: 'op == 30 and ((x / y) == (x / y))'
  - id: eval_f_mod
    doc: Evaluated so that an error in `f_mod` fails the read.
    size: 0
    if: 'op == 31 and ((x % y) == (x % y))'
  - id: eval_f_eq
    doc: Evaluated so that an error in `f_eq` fails the read.
    size: 0
    if: 'op == 32 and ((x == y) == (x == y))'
  - id: eval_f_lt
    doc: Evaluated so that an error in `f_lt` fails the read.
    size: 0
    if: 'op == 33 and ((x < y) == (x < y))'
  - id: eval_f_ge
    doc: Evaluated so that an error in `f_ge` fails the read.
    size: 0
    if: 'op == 34 and ((x >= y) == (x >= y))'
  - id: eval_f_neg
    doc: Evaluated so that an error in `f_neg` fails the read.
    size: 0
    if: 'op == 35 and ((-x) == (-x))'
  - id: eval_f_to_i
    doc: Evaluated so that an error in `f_to_i` fails the read.
    size: 0
    if: 'op == 36 and ((x.to_i) == (x.to_i))'
  - id: eval_mix_add
    doc: Evaluated so that an error in `mix_add` fails the read.
    size: 0
    if: 'op == 37 and ((a + x) == (a + x))'
  - id: eval_mix_div
    doc: Evaluated so that an error in `mix_div` fails the read.
    size: 0
    if: 'op == 38 and ((a / y) == (a / y))'
  - id: eval_mix_lt
    doc: Evaluated so that an error in `mix_lt` fails the read.
    size: 0
    if: 'op == 39 and ((a < x) == (a < x))'
  - id: eval_s_length
    doc: Evaluated so that an error in `s_length` fails the read.
    size: 0
    if: 'op == 40 and ((s.length) == (s.length))'
  - id: eval_s_reverse
    doc: Evaluated so that an error in `s_reverse` fails the read.
    size: 0
    if: 'op == 41 and ((s.reverse) == (s.reverse))'
  - id: eval_s_concat
    doc: Evaluated so that an error in `s_concat` fails the read.
    size: 0
    if: 'op == 42 and ((s + t) == (s + t))'
  - id: eval_s_eq
    doc: Evaluated so that an error in `s_eq` fails the read.
    size: 0
    if: 'op == 43 and ((s == t) == (s == t))'
  - id: eval_s_lt
    doc: Evaluated so that an error in `s_lt` fails the read.
    size: 0
    if: 'op == 44 and ((s < t) == (s < t))'
  - id: eval_s_substring
    doc: Evaluated so that an error in `s_substring` fails the read.
    size: 0
    if: 'op == 45 and ((s.substring(a, b)) == (s.substring(a, b)))'
  - id: eval_s_to_i
    doc: Evaluated so that an error in `s_to_i` fails the read.
    size: 0
    if: 'op == 46 and ((s.to_i) == (s.to_i))'
  - id: eval_s_to_i_16
    doc: Evaluated so that an error in `s_to_i_16` fails the read.
    size: 0
    if: 'op == 47 and ((s.to_i(16)) == (s.to_i(16)))'
  - id: eval_a_to_s
    doc: Evaluated so that an error in `a_to_s` fails the read.
    size: 0
    if: 'op == 48 and ((a.to_s) == (a.to_s))'
  - id: eval_p_size
    doc: Evaluated so that an error in `p_size` fails the read.
    size: 0
    if: 'op == 49 and ((p.size) == (p.size))'
  - id: eval_p_length
    doc: Evaluated so that an error in `p_length` fails the read.
    size: 0
    if: 'op == 50 and ((p.length) == (p.length))'
  - id: eval_p_first
    doc: Evaluated so that an error in `p_first` fails the read.
    size: 0
    if: 'op == 51 and ((p.first) == (p.first))'
  - id: eval_p_last
    doc: Evaluated so that an error in `p_last` fails the read.
    size: 0
    if: 'op == 52 and ((p.last) == (p.last))'
  - id: eval_p_min
    doc: Evaluated so that an error in `p_min` fails the read.
    size: 0
    if: 'op == 53 and ((p.min) == (p.min))'
  - id: eval_p_max
    doc: Evaluated so that an error in `p_max` fails the read.
    size: 0
    if: 'op == 54 and ((p.max) == (p.max))'
  - id: eval_p_index
    doc: Evaluated so that an error in `p_index` fails the read.
    size: 0
    if: 'op == 55 and ((p[a]) == (p[a]))'
  - id: eval_p_eq
    doc: Evaluated so that an error in `p_eq` fails the read.
    size: 0
    if: 'op == 56 and ((p == q) == (p == q))'
  - id: eval_p_lt
    doc: Evaluated so that an error in `p_lt` fails the read.
    size: 0
    if: 'op == 57 and ((p < q) == (p < q))'
  - id: eval_p_to_s
    doc: Evaluated so that an error in `p_to_s` fails the read.
    size: 0
    if: 'op == 58 and ((p.to_s("UTF-8")) == (p.to_s("UTF-8")))'
instances:
  add:
    value: 'a + b'
    if: op == 0
  sub:
    value: 'a - b'
    if: op == 1
  mul:
    value: 'a * b'
    if: op == 2
  div:
    value: 'a / b'
    if: op == 3
  mod:
    value: 'a % b'
    if: op == 4
  shl:
    value: 'a << b'
    if: op == 5
  shr:
    value: 'a >> b'
    if: op == 6
  bit_and:
    value: 'a & b'
    if: op == 7
  bit_or:
    value: 'a | b'
    if: op == 8
  bit_xor:
    value: 'a ^ b'
    if: op == 9
  eq:
    value: 'a == b'
    if: op == 10
  ne:
    value: 'a != b'
    if: op == 11
  lt:
    value: 'a < b'
    if: op == 12
  le:
    value: 'a <= b'
    if: op == 13
  gt:
    value: 'a > b'
    if: op == 14
  ge:
    value: 'a >= b'
    if: op == 15
  neg:
    value: '-a'
    if: op == 16
  bit_not:
    value: '~a'
    if: op == 17
  not_eq:
    value: 'not (a == b)'
    if: op == 18
  and_or:
    value: 'a < b and (b > 0 or a == 0)'
    if: op == 19
  ternary:
    value: 'a < b ? a : b'
    if: op == 20
  u_add:
    value: 'u + a'
    if: op == 21
  u_mul:
    value: 'u * u'
    if: op == 22
  u_div:
    value: 'u / a'
    if: op == 23
  u_mod:
    value: 'u % a'
    if: op == 24
  u_shr:
    value: 'u >> b'
    if: op == 25
  u_gt:
    value: 'u > a'
    if: op == 26
  f_add:
    value: 'x + y'
    if: op == 27
  f_sub:
    value: 'x - y'
    if: op == 28
  f_mul:
    value: 'x * y'
    if: op == 29
  f_div:
    value: 'x / y'
    if: op == 30
  f_mod:
    value: 'x % y'
    if: op == 31
  f_eq:
    value: 'x == y'
    if: op == 32
  f_lt:
    value: 'x < y'
    if: op == 33
  f_ge:
    value: 'x >= y'
    if: op == 34
  f_neg:
    value: '-x'
    if: op == 35
  f_to_i:
    value: 'x.to_i'
    if: op == 36
  mix_add:
    value: 'a + x'
    if: op == 37
  mix_div:
    value: 'a / y'
    if: op == 38
  mix_lt:
    value: 'a < x'
    if: op == 39
  s_length:
    value: 's.length'
    if: op == 40
  s_reverse:
    value: 's.reverse'
    if: op == 41
  s_concat:
    value: 's + t'
    if: op == 42
  s_eq:
    value: 's == t'
    if: op == 43
  s_lt:
    value: 's < t'
    if: op == 44
  s_substring:
    value: 's.substring(a, b)'
    if: op == 45
  s_to_i:
    value: 's.to_i'
    if: op == 46
  s_to_i_16:
    value: 's.to_i(16)'
    if: op == 47
  a_to_s:
    value: 'a.to_s'
    if: op == 48
  p_size:
    value: 'p.size'
    if: op == 49
  p_length:
    value: 'p.length'
    if: op == 50
  p_first:
    value: 'p.first'
    if: op == 51
  p_last:
    value: 'p.last'
    if: op == 52
  p_min:
    value: 'p.min'
    if: op == 53
  p_max:
    value: 'p.max'
    if: op == 54
  p_index:
    value: 'p[a]'
    if: op == 55
  p_eq:
    value: 'p == q'
    if: op == 56
  p_lt:
    value: 'p < q'
    if: op == 57
  p_to_s:
    value: 'p.to_s("UTF-8")'
    if: op == 58
