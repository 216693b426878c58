meta:
  id: described
  endian: be
doc: |
  `to-string` on the root and on nested types: an IPv4 address in dotted decimal, a port, a
  list of names, and one whose expression fails at run time (an index past the list).
seq:
  - id: addr
    type: ipv4_addr
  - id: port
    type: u2
  - id: count
    type: u1
  - id: names
    type: name
    repeat: expr
    repeat-expr: count
to-string: "'port ' + port.to_s + ', ' + count.to_s + ' names'"
types:
  ipv4_addr:
    seq:
      - id: octets
        type: u1
        repeat: expr
        repeat-expr: 4
    to-string: >-
      octets[0].to_s + '.' + octets[1].to_s + '.'
      + octets[2].to_s + '.' + octets[3].to_s
  name:
    seq:
      - id: text
        type: strz
        encoding: ASCII
      - id: kind
        type: u1
        enum: kind
    instances:
      is_user:
        value: kind == kind::user
    to-string: "(is_user ? 'user ' : 'group ') + text + ' ' + text.substring(0, 9).length.to_s"
enums:
  kind:
    1: user
    2: group
