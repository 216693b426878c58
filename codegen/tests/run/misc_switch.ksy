meta:
  id: misc_switch
  endian: le
seq:
  - id: items
    type: item
    repeat: eos
types:
  item:
    seq:
      - id: code
        size: 1
      - id: body
        type:
          switch-on: code
          cases:
            '[0x49]': int_val
            '[0x53]': str_val
  int_val:
    seq:
      - id: value
        type: u1
  str_val:
    seq:
      - id: value
        type: strz
        encoding: ASCII
