meta:
  id: world_snapshot
  -sp-strict: true
  title: MsgWorldSnapshot (quantized, bit-packed world snapshot)
  file-extension: wsnap
  endian: le
  bit-endian: be
doc: |
  One MsgWorldSnapshot: a 24-byte header, then the body: the origin table (grid origins as
  three f8 each), the stitched record stream (bit-packed entity records, each padded to a
  byte) and the TLV block. When bit 0 of `flags` is set the body is one zstd frame instead,
  whose decompressed bytes are exactly the raw body. Metres, m/s, rad/s, kg; little-endian
  header and origins, bit fields most significant bit first. Quantization and assembly live
  in src/formats/world_snapshot.rs; see docs/formats/world_snapshot.md.
seq:
  - id: msg_type
    contents: [0x57]
    doc: Message type 0x57 (`W`), world snapshot.
  - id: flags
    type: u1
    valid:
      max: 1
    doc: Bit 0 set = the body is a zstd frame. Other bits are reserved and must be zero.
  - id: origin_count
    type: u2
    doc: Number of grid origins in the origin table.
  - id: tick
    type: u4
    doc: Server simulation tick of the snapshot.
  - id: record_count
    type: u4
    doc: Number of entity records in the record stream.
  - id: bitstream_bytes
    type: u4
    -sp-units: bytes
    doc: Length of the record stream.
  - id: tlv_bytes
    type: u4
    -sp-units: bytes
    doc: Length of the TLV block.
  - id: uncompressed_bytes
    type: u4
    -sp-units: bytes
    doc: Length of the raw body (origin table + record stream + TLV block), compressed or not.
  - id: origins
    type: origin
    repeat: expr
    repeat-expr: origin_count
    if: flags == 0
    doc: Distinct grid origins the records refer to (raw body only).
  - id: records
    type: record_stream
    size: bitstream_bytes
    if: flags == 0
    doc: The stitched record stream (raw body only).
  - id: tlvs
    type: tlv_block
    size: tlv_bytes
    if: flags == 0
    doc: The TLV block (raw body only).
  - id: zstd_body
    size-eos: true
    if: flags == 1
    doc: The body as one zstd frame (compressed body only).
types:
  origin:
    doc: A grid origin, the floor of a position onto the 65 536 m grid.
    seq:
      - id: x
        type: f8
        -sp-units: m
      - id: y
        type: f8
        -sp-units: m
      - id: z
        type: f8
        -sp-units: m
  record_stream:
    doc: Entity records back to back, each starting on a byte.
    seq:
      - id: records
        type: entity_record
        repeat: eos
  entity_record:
    doc: |
      One stitched entity record: the origin-index varint written at stitch time, then the
      blob encoded once per tick and copied as it is into every peer's stream.
    seq:
      - id: origin_index
        type: u1
        repeat: until
        repeat-until: _ < 128
        -sp-varint: leb128
        doc: Index into the origin table (byte-aligned LEB128).
      - id: blob
        type: entity_blob
        doc: The rest of the record (starts and ends on a byte).
  entity_blob:
    doc: |
      The part of a record that does not depend on the receiving peer's origin table: entity
      index, flags, optional generation / type / faction, position, orientation, velocity,
      optional omega and loadout, status fields, zero padding to the next byte.
    seq:
      - id: entity_index
        type: u1
        repeat: until
        repeat-until: _ < 128
        -sp-varint: leb128
        doc: Absolute entity index (byte-aligned LEB128), the same for every peer.
      - id: full
        type: b1
        doc: Full record (type index, faction index and generation on the wire) or delta.
      - id: gen_present
        type: b1
        doc: The generation is on the wire (else the client keeps its cached one).
      - id: omega_present
        type: b1
        doc: Angular rates and the loadout block follow (the receiving peer's own entity).
      - id: generation
        type: b16
        if: gen_present
        doc: Entity generation (slot reuse counter).
      - id: type_index
        type: b8
        repeat: until
        repeat-until: _ < 128
        -sp-varint: leb128
        if: full
        doc: Entity type index (bit-aligned LEB128), full records only.
      - id: faction_index
        type: b16
        if: full
        doc: Faction registry index, full records only.
      - id: pos_x
        type: b22
        -sp-offset-binary: true
        -sp-units: 0.125 m
        doc: Position offset from the record's grid origin, in 0.125 m steps.
      - id: pos_y
        type: b22
        -sp-offset-binary: true
        -sp-units: 0.125 m
      - id: pos_z
        type: b22
        -sp-offset-binary: true
        -sp-units: 0.125 m
      - id: rot_dropped
        type: b2
        doc: Index (x, y, z, w) of the dropped largest quaternion component.
      - id: rot_a
        type: b10
        doc: First kept component, code 0..1023 over -1/sqrt(2) .. 1/sqrt(2).
      - id: rot_b
        type: b10
      - id: rot_c
        type: b10
      - id: vel_x
        type: b18
        -sp-offset-binary: true
        doc: Velocity, code = round(v / 2000 m/s * 131071).
      - id: vel_y
        type: b18
        -sp-offset-binary: true
      - id: vel_z
        type: b18
        -sp-offset-binary: true
      - id: omega_x
        type: b12
        -sp-offset-binary: true
        if: omega_present
        doc: Body angular rate, code = round(w / 20 rad/s * 2047).
      - id: omega_y
        type: b12
        -sp-offset-binary: true
        if: omega_present
      - id: omega_z
        type: b12
        -sp-offset-binary: true
        if: omega_present
      - id: selected_station
        type: b8
        if: omega_present
      - id: station_rounds
        type: b16
        if: omega_present
      - id: weapon_flags
        type: b8
        if: omega_present
        doc: Bit 0 = seeker locked.
      - id: payload_mass_kg
        type: b16
        if: omega_present
        -sp-units: kg
      - id: payload_cd0
        type: b16
        if: omega_present
        -sp-units: 1e-5
      - id: damage_level
        type: b3
      - id: engine_fail_flags
        type: b5
      - id: throttle_pct
        type: b7
        -sp-units: percent
      - id: fuel_pct
        type: b7
        -sp-units: percent
      - id: ab_engaged
        type: b1
      - id: player_owned
        type: b1
      - id: align
        size: 0
        doc: Zero padding to the next byte.
  tlv_block:
    doc: TLV entries back to back.
    seq:
      - id: entries
        type: tlv
        repeat: eos
  tlv:
    doc: One TLV entry; type 1 is a despawn list, other types are kept as bytes.
    seq:
      - id: tlv_type
        type: u1
      - id: len
        type: u2
        -sp-units: bytes
      - id: despawn
        type: despawn
        size: len
        if: tlv_type == 1
      - id: value
        size: len
        if: tlv_type != 1
  despawn:
    doc: Entities the client should drop (no longer relevant or gone).
    seq:
      - id: entities
        type: entity_ref
        repeat: eos
  entity_ref:
    seq:
      - id: entity_index
        type: u1
        repeat: until
        repeat-until: _ < 128
        -sp-varint: leb128
