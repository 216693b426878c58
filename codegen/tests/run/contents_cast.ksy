meta:
  id: contents_cast
  endian: le
seq:
  - id: magic
    contents: [0x43, 0x43]
  - id: body
    size: 1
    if: magic.size == 2
  - id: given
    type: takes_list([7, 300].as<u2[]>)
types:
  takes_list:
    params:
      - id: nums
        type: u2[]
    seq:
      - id: first
        type: u1
        if: nums[1] == 300
