meta:
  id: seq_not_list
seq:
  id: a
  type: u1
