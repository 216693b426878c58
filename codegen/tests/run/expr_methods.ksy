meta:
  id: expr_methods
  endian: le
seq:
  - id: n
    type: u1
  - id: words
    type: u2
    repeat: expr
    repeat-expr: n
  - id: raw
    size: 3
  - id: digits
    type: str
    size: 4
    encoding: ASCII
  - id: blocks
    type: block
    repeat: expr
    repeat-expr: 2
  - id: ops
    type: op
    repeat: expr
    repeat-expr: 2
  - id: tail
    type: u1
    if: n > 1
  - id: tail_block
    type: block
    if: n > 1
types:
  op:
    seq:
      - id: code
        type: u1
      - id: body
        type:
          switch-on: code
          cases:
            1: block
            2: word
    types:
      word:
        seq:
          - id: w
            type: u2
  block:
    seq:
      - id: a
        type: u1
      - id: b
        type: u2
    instances:
      whole:
        value: _sizeof
instances:
  magic:
    value: '[0x41, 0x42, 0x43]'
  raw_is_magic:
    value: raw == magic
  raw_before_magic:
    value: raw < [0x41, 0x42, 0x44]
  second_word:
    value: words[1]
  first_word:
    value: words.first
  last_word:
    value: words.last
  min_word:
    value: words.min
  max_word:
    value: words.max
  raw_max:
    value: raw.max
  raw_at:
    value: raw[n - 1]
  raw_text:
    value: raw.to_s("ASCII")
  middle:
    value: digits.substring(1, 3)
  as_hex:
    value: digits.to_i(16)
  as_dec:
    value: digits.to_i
  list:
    value: '[10, 20, 1000]'
  list_pick:
    value: list[n]
  names:
    value: '["un", "deux"]'
  block_size:
    value: sizeof<block>
  word_size:
    value: sizeof<u2>
  block_b:
    value: blocks[1].as<block>.b
  block_whole:
    value: blocks[0].whole
  first_op_block:
    value: ops[0].body.as<block>
  first_op_a:
    value: ops[0].body.as<block>.a
  second_op_w:
    value: ops[1].body.as<op::word>.w
  wrong_cast:
    value: ops[1].body.as<block>.a
  pick_bytes:
    value: 'n > 5 ? raw : [0x5a, 0x5b]'
  pick_text:
    value: 'n > 1 ? digits : "none"'
  big_n:
    value: n * 100
    if: n > 1
  big_n_plus:
    value: big_n + 1
  tail_plus:
    value: tail + 1
  tail_block_b:
    value: tail_block.b
  pick_words:
    value: 'n > 1 ? words : [1000, 2000]'
  pick_words_last:
    value: pick_words.last
