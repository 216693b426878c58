meta:
  id: cbtrack_v1
  -sp-strict: true
  title: CBTK v1 columnar replay track
  file-extension: cbtrack
  endian: le
doc: |
  A CBTK v1 replay track: a 96-byte header (or longer: the stated header size is a
  minimum), the window index, then the chunk area. Every chunk is a zlib stream that starts
  on a 64-byte block (block number x 64 is its file offset), read here through positional
  instances: the info and features chunks, and each window's main chunk and terrain chunk.
  A decompressed chunk is a column directory whose entries point at typed columns. Bytes
  between chunks (zero padding) are kept and written back. Positions are in position steps,
  frames are simulation frames; see docs/formats/cbtrack.md. No stored integer exceeds
  16,777,215 in magnitude (the engine's Lua numbers are 32-bit floats): every u4 and s4
  says so with a `valid` range, but for the two counts derived on write (`num_windows`,
  `num_columns`), which the reader bounds by the bytes their lists take; so the schema
  passes the Lua 5.1 backend's 32-bit-float profile (docs/lua.md).
seq:
  - id: head
    type: cbtk_head
    doc: Header and window index.
instances:
  info:
    pos: head.info_block * 64
    size: head.info_len
    process: zlib
    type: chunk_body
    -sp-strict: false
    doc: The info chunk (names, teams, the map), at block `head.info_block`.
  features:
    pos: head.features_block * 64
    size: head.features_len
    process: zlib
    type: chunk_body
    -sp-strict: false
    doc: The features chunk, at block `head.features_block`.
  windows:
    pos: 0
    type: window(head.index[_index])
    repeat: expr
    repeat-expr: head.num_windows
    # Read with the header (not on first use), as the column values below: a decode checks
    # every chunk, and its traced structure (inspect, decode --offsets) holds them all.
    -sp-lazy: false
    doc: One entry per window of the index, holding the window's main and terrain chunk.
types:
  cbtk_head:
    doc: |
      The 96-byte header (or longer: the stated header size is a minimum) and the window
      index: everything a reader needs before it touches a chunk.
    seq:
      - id: magic
        contents: CBTK
        doc: Magic. Any other four bytes are refused and named in the error.
      - id: format_version
        type: u2
        valid: 1
        doc: Format version; only 1 is known.
      - id: header_size
        type: u2
        valid:
          min: 96
        -sp-units: byte
        doc: Header size in bytes, at least 96; the index starts here.
      - id: recorder_version
        type: u2
        doc: Recorder version (what a reader depends on; see the spec's table).
      - id: frames_per_second
        type: u2
        doc: Simulation frames per second (the engine's GAME_SPEED is 30).
      - id: first_frame
        type: u4
        valid:
          max: 16777215
        doc: First frame recorded.
      - id: last_frame
        type: u4
        valid:
          max: 16777215
        doc: Last frame recorded.
      - id: window_length
        type: u4
        valid:
          min: 1
          max: 65535
        -sp-units: frame
        doc: Window length in frames, 1 to 65,535.
      - id: num_windows
        type: u4
        doc: Number of windows (derived from `index` on write).
      - id: tolerance
        type: f4
        -sp-units: elmo
        doc: Tolerance in elmos that every recorded sample is within.
      - id: position_shift
        type: u1
        doc: The position step is 1 / 2^position_shift elmo.
      - id: velocity_shift
        type: u1
        doc: The velocity step is 1 / 2^velocity_shift elmo per frame.
      - id: rotation_bits
        type: u1
        valid:
          min: 8
          max: 16
        doc: Rotation bits, 8 to 16.
      - id: sample_interval
        type: u1
        -sp-units: frame
        doc: Frames between the recorder's unit samples; for information only.
      - id: info_block
        type: u4
        valid:
          max: 16777215
        doc: Block number of the info chunk.
      - id: info_len
        type: u4
        valid:
          max: 16777215
        -sp-units: byte
        doc: Length of the info chunk in bytes.
      - id: features_block
        type: u4
        valid:
          max: 16777215
        doc: Block number of the features chunk.
      - id: features_len
        type: u4
        valid:
          max: 16777215
        -sp-units: byte
        doc: Length of the features chunk in bytes.
      - id: num_units
        type: u4
        valid:
          max: 16777215
        doc: Number of units in the match.
      - id: num_projectiles
        type: u4
        valid:
          max: 16777215
        doc: Number of projectiles in the match.
      - id: num_features
        type: u4
        valid:
          max: 16777215
        doc: Number of features in the match.
      - id: game_id
        size: 16
        doc: The replay's game id, copied from the replay header.
      - id: resource_tolerance
        type: f4
        doc: Resource tolerance (0 before recorder version 4).
      - id: resource_fraction
        type: f4
        doc: Resource fraction (0 before recorder version 4).
      - id: reserved
        size: 8
        doc: Reserved, zero when written.
      - id: header_extra
        size: header_size - 96
        doc: Header fields after byte 96 that a later writer may add; kept as bytes.
      - id: index
        type: window_entry
        repeat: expr
        repeat-expr: num_windows
        doc: One entry per window, in order.
  window_entry:
    doc: Where one window's chunks are.
    seq:
      - id: main_block
        type: u4
        valid:
          max: 16777215
        doc: Block number of the main chunk.
      - id: main_len
        type: u4
        valid:
          max: 16777215
        -sp-units: byte
        doc: Length of the main chunk in bytes.
      - id: terrain_block
        type: u4
        valid:
          max: 16777215
        doc: Block number of the terrain chunk, or 0.
      - id: terrain_len
        type: u4
        valid:
          max: 16777215
        -sp-units: byte
        doc: Length of the terrain chunk in bytes, 0 when no terrain changed.
  window:
    doc: |
      One window's chunks, found through its entry of the index (a zero-length type: it
      only holds the two positional instances).
    params:
      - id: entry
        type: window_entry
        doc: The window's entry of the index (a copy).
    instances:
      main:
        io: _root._io
        pos: entry.main_block * 64
        size: entry.main_len
        process: zlib
        type: chunk_body
        -sp-strict: false
        doc: The main chunk (units, keys, projectiles, team numbers).
      terrain:
        io: _root._io
        pos: entry.terrain_block * 64
        size: entry.terrain_len
        process: zlib
        type: chunk_body
        -sp-strict: false
        if: entry.terrain_len != 0
        doc: The terrain chunk, absent when no height changed in the window.
  chunk_body:
    doc: |
      A chunk after decompression: the column directory, whose entries read their columns
      (offsets from the start of the decompressed chunk), then 4 zero bytes. The writer
      places the columns after the directory in directory order, each on a multiple of 4
      bytes with zero bytes up to the next one, and writes each entry's offset; the reader
      checks that the chunk is laid out so, and keeps nothing beside the columns' values.
    -sp-end-zeros: 4
    seq:
      - id: directory
        type: column_directory
  column_directory:
    doc: The column count and one 12-byte entry per column, in rising order of id.
    seq:
      - id: num_columns
        type: u4
        doc: Number of columns (derived from `columns` on write).
      - id: columns
        type: column_entry
        repeat: expr
        repeat-expr: num_columns
  column_entry:
    doc: One directory entry.
    seq:
      - id: id
        type: u2
        doc: Column id.
      - id: type_code
        type: u2
        doc: 1 u8, 2 u16, 3 s16, 4 u32, 5 s32, 6 f32; a reader skips other codes.
      - id: offset
        type: u4
        valid:
          max: 16777215
        -sp-units: byte
        doc: |
          Offset of the column's data from the start of the decompressed chunk (chosen by
          the writer for a column of a known type code; kept as it is for another).
      - id: count
        type: u4
        valid:
          max: 16777215
        doc: Number of values.
    instances:
      u1_values:
        pos: offset
        type: u1
        repeat: expr
        repeat-expr: count
        if: type_code == 1
        doc: The column's values when its type code is 1 (u8).
        -sp-lazy: false
        -sp-align: 4
      u2_values:
        pos: offset
        type: u2
        repeat: expr
        repeat-expr: count
        if: type_code == 2
        doc: The column's values when its type code is 2 (u16).
        -sp-lazy: false
        -sp-align: 4
      s2_values:
        pos: offset
        type: s2
        repeat: expr
        repeat-expr: count
        if: type_code == 3
        doc: The column's values when its type code is 3 (s16).
        -sp-lazy: false
        -sp-align: 4
      u4_values:
        pos: offset
        type: u4
        valid:
          max: 16777215
        repeat: expr
        repeat-expr: count
        if: type_code == 4
        doc: The column's values when its type code is 4 (u32).
        -sp-lazy: false
        -sp-align: 4
      s4_values:
        pos: offset
        type: s4
        valid:
          min: -16777215
          max: 16777215
        repeat: expr
        repeat-expr: count
        if: type_code == 5
        doc: The column's values when its type code is 5 (s32).
        -sp-lazy: false
        -sp-align: 4
      f4_values:
        pos: offset
        type: f4
        repeat: expr
        repeat-expr: count
        if: type_code == 6
        doc: The column's values when its type code is 6 (f32).
        -sp-lazy: false
        -sp-align: 4
-sp-column-sets:
  info:
    doc: "Info chunk: names, teams and the map (read once)."
    columns:
      - id: text_lens
        column: 160
        type: u2
        doc: "Track text lengths in bytes: engine version, game, map, writing program."
      - id: text_bytes
        column: 161
        type: u1
        doc: "Track text bytes, end to end (UTF-8)."
      - id: unit_def_lens
        column: 162
        type: u2
        doc: "Unit definition name lengths."
      - id: unit_def_bytes
        column: 163
        type: u1
        doc: "Unit definition names, end to end."
      - id: weapon_def_lens
        column: 164
        type: u2
        doc: "Weapon definition name lengths."
      - id: weapon_def_bytes
        column: 165
        type: u1
        doc: "Weapon definition names, end to end."
      - id: feature_def_lens
        column: 166
        type: u2
        doc: "Feature definition name lengths."
      - id: feature_def_bytes
        column: 167
        type: u1
        doc: "Feature definition names, end to end."
      - id: posed_defs
        column: 168
        type: u2
        doc: "For each unit definition with posed pieces, its index in the unit definition names."
      - id: posed_counts
        column: 169
        type: u2
        doc: "For each of those, how many posed piece names it has."
      - id: piece_lens
        column: 170
        type: u2
        doc: "Posed piece name lengths, grouped in the order of column 168."
      - id: piece_bytes
        column: 171
        type: u1
        doc: "Posed piece names, end to end."
      - id: team_ids
        column: 172
        type: u1
        doc: "Team id."
      - id: team_allies
        column: 173
        type: u1
        doc: "Ally team of each team."
      - id: team_flags
        column: 174
        type: u1
        doc: "Team flags; bit 0 set for an AI team."
      - id: team_colours
        column: 175
        type: u1
        doc: "Red, green, blue of each team."
      - id: side_lens
        column: 176
        type: u2
        doc: "Side name lengths."
      - id: side_bytes
        column: 177
        type: u1
        doc: "Side names, end to end."
      - id: leader_lens
        column: 178
        type: u2
        doc: "Leader name lengths."
      - id: leader_bytes
        column: 179
        type: u1
        doc: "Leader names, end to end."
      - id: map_size
        column: 180
        type: u4
        doc: "Two values: the map size along x and z in elmos."
      - id: footprint_x
        column: 181
        type: u2
        doc: "For each unit definition, footprint across the unit in elmos."
      - id: footprint_z
        column: 182
        type: u2
        doc: "For each unit definition, footprint along the facing in elmos."
      - id: team_param_lens
        column: 183
        type: u2
        doc: "Team rules parameter name lengths."
      - id: team_param_bytes
        column: 184
        type: u1
        doc: "Team rules parameter names, end to end."
      - id: game_param_lens
        column: 185
        type: u2
        doc: "Game rules parameter name lengths."
      - id: game_param_bytes
        column: 186
        type: u1
        doc: "Game rules parameter names, end to end."
  features:
    doc: "Features chunk: one entry per feature of the match."
    columns:
      - id: feature_id
        column: 128
        type: u2
        doc: "The engine's feature id."
      - id: def
        column: 129
        type: u2
        doc: "Feature definition (index in the info chunk)."
      - id: team
        column: 130
        type: u1
        doc: "Team, 255 for none."
      - id: flags
        column: 131
        type: u1
        doc: "Bit 0: there before the first frame. Bit 1: still there after the last."
      - id: first_frame
        column: 132
        type: u4
        doc: "First frame it exists."
      - id: last_frame
        column: 133
        type: u4
        doc: "Last frame it exists."
      - id: x
        column: 134
        type: s4
        doc: "Position x in position steps, plain."
      - id: y
        column: 135
        type: s4
        doc: "Position y in position steps, plain."
      - id: z
        column: 136
        type: s4
        doc: "Position z in position steps, plain."
      - id: rot_dropped
        column: 137
        type: u1
        doc: "Rotation: dropped component, 0 to 3 for x, y, z, w."
      - id: rot_a
        column: 138
        type: u2
        doc: "Rotation: first kept component, two's complement of n, plain."
      - id: rot_b
        column: 139
        type: u2
        doc: "Rotation: second kept component, plain."
      - id: rot_c
        column: 140
        type: u2
        doc: "Rotation: third kept component, plain."
  units:
    doc: "Main chunk: one entry per unit that exists at any frame of the window."
    columns:
      - id: unit_id
        column: 1
        type: u2
        doc: "The engine's unit id."
      - id: serial
        column: 2
        type: u4
        doc: "Serial number, from 0 in order of first appearance in the match."
      - id: def
        column: 3
        type: u2
        doc: "Unit definition."
      - id: team
        column: 4
        type: u1
        doc: "Team."
      - id: flags
        column: 5
        type: u1
        doc: "Bit 0: existed before this window. Bit 1: exists after it."
      - id: first
        column: 6
        type: u2
        doc: "Offset of the first frame in the window at which it exists."
      - id: last
        column: 7
        type: u2
        doc: "Offset of the last frame in the window at which it exists."
      - id: transform_count
        column: 8
        type: u2
        doc: "Number of transform keys."
      - id: status_count
        column: 9
        type: u2
        doc: "Number of status keys."
      - id: target_track_count
        column: 10
        type: u1
        doc: "Number of target tracks."
      - id: pose_track_count
        column: 11
        type: u2
        doc: "Number of pose tracks."
      - id: queue_count
        column: 12
        type: u2
        doc: "Number of build queue keys."
  transform_keys:
    doc: "Main chunk: every unit's transform keys, unit after unit, in time order."
    columns:
      - id: time
        column: 16
        type: u2
        doc: "Frames since the previous key of the unit (the first: since the window start)."
      - id: x
        column: 17
        type: s2
        doc: "Position x, difference with an escape (position steps)."
      - id: y
        column: 18
        type: s2
        doc: "Position y, difference with an escape."
      - id: z
        column: 19
        type: s2
        doc: "Position z, difference with an escape."
      - id: x_wide
        column: 20
        type: s4
        doc: "Wide values of x."
      - id: y_wide
        column: 21
        type: s4
        doc: "Wide values of y."
      - id: z_wide
        column: 22
        type: s4
        doc: "Wide values of z."
      - id: rot_dropped
        column: 23
        type: u1
        doc: "Rotation: dropped component, 0 to 3 for x, y, z, w."
      - id: rot_a
        column: 24
        type: u2
        doc: "Rotation: first kept component, wrapping difference, signed."
      - id: rot_b
        column: 25
        type: u2
        doc: "Rotation: second kept component, wrapping difference, signed."
      - id: rot_c
        column: 26
        type: u2
        doc: "Rotation: third kept component, wrapping difference, signed."
  status_keys:
    doc: "Main chunk: every unit's status keys."
    columns:
      - id: time
        column: 32
        type: u2
        doc: "Frames since the previous status key of the unit."
      - id: health
        column: 33
        type: u2
        doc: "Health fraction, 65,535 for full; wrapping difference."
      - id: build
        column: 34
        type: u2
        doc: "Build progress, 65,535 for complete; wrapping difference."
      - id: flags
        column: 35
        type: u1
        doc: "Flags, plain; bit 0: switched on."
  target_tracks:
    doc: "Main chunk: target tracks and their keys."
    columns:
      - id: weapon
        column: 40
        type: u1
        doc: "For each track, the weapon number from 1, 0 for builder work."
      - id: key_count
        column: 41
        type: u2
        doc: "For each track, its number of keys."
      - id: time
        column: 42
        type: u2
        doc: "Frames since the previous key of the track."
      - id: kind
        column: 43
        type: u1
        doc: "Kind of target."
      - id: reference
        column: 44
        type: u4
        doc: "Reference, 0 when the kind has none."
      - id: power
        column: 45
        type: u1
        doc: "Build power in use, 255 for full; 0 for a weapon."
      - id: x
        column: 46
        type: s4
        doc: "Position x in position steps, plain; one per key of kind 128 or more."
      - id: y
        column: 47
        type: s4
        doc: "Position y."
      - id: z
        column: 48
        type: s4
        doc: "Position z."
  pose_tracks:
    doc: "Main chunk: pose tracks (one aiming piece of one unit) and their keys."
    columns:
      - id: piece
        column: 56
        type: u2
        doc: "For each track, the piece: index into the posed piece names of the unit's definition."
      - id: key_count
        column: 57
        type: u2
        doc: "For each track, its number of keys."
      - id: time
        column: 58
        type: u2
        doc: "Frames since the previous key of the track."
      - id: ax
        column: 59
        type: s2
        doc: "Angle about x in 65,536ths of a turn, difference with an escape."
      - id: ay
        column: 60
        type: s2
        doc: "Angle about y, difference with an escape."
      - id: az
        column: 61
        type: s2
        doc: "Angle about z, difference with an escape."
      - id: ax_wide
        column: 62
        type: s4
        doc: "Wide values of the angle about x."
      - id: ay_wide
        column: 63
        type: s4
        doc: "Wide values of the angle about y."
      - id: az_wide
        column: 64
        type: s4
        doc: "Wide values of the angle about z."
      - id: ox
        column: 65
        type: s2
        doc: "Offset x from the rest position in position steps, difference with an escape."
      - id: oy
        column: 66
        type: s2
        doc: "Offset y, difference with an escape."
      - id: oz
        column: 67
        type: s2
        doc: "Offset z, difference with an escape."
      - id: ox_wide
        column: 68
        type: s4
        doc: "Wide values of offset x."
      - id: oy_wide
        column: 69
        type: s4
        doc: "Wide values of offset y."
      - id: oz_wide
        column: 70
        type: s4
        doc: "Wide values of offset z."
  build_queue:
    doc: "Main chunk: build queue keys and their items."
    columns:
      - id: time
        column: 72
        type: u2
        doc: "Frames since the previous queue key of the unit."
      - id: item_count
        column: 73
        type: u1
        doc: "For each key, the number of items in the queue."
      - id: def
        column: 74
        type: u2
        doc: "For each item, the unit definition."
      - id: x
        column: 75
        type: s4
        doc: "For each item, position x in position steps, plain."
      - id: z
        column: 76
        type: s4
        doc: "For each item, position z in position steps, plain."
      - id: facing
        column: 77
        type: u1
        doc: "For each item, the facing, 0 to 3."
  projectiles:
    doc: "Main chunk: one entry per projectile that exists in the window, then its keys."
    columns:
      - id: serial
        column: 80
        type: u4
        doc: "Serial number, from 0 in order of first appearance in the match."
      - id: weapon
        column: 81
        type: u2
        doc: "Weapon definition, 65,535 for none (debris)."
      - id: team
        column: 82
        type: u1
        doc: "Team, 255 for none."
      - id: flags
        column: 83
        type: u1
        doc: "Bit 0: existed before this window. Bit 1: exists after it."
      - id: owner
        column: 84
        type: u2
        doc: "The unit that fired it, index in this window's units, or 65,535."
      - id: first
        column: 85
        type: u2
        doc: "Offset of the first frame in the window at which it exists."
      - id: last
        column: 86
        type: u2
        doc: "Offset of the last frame in the window at which it exists."
      - id: key_count
        column: 87
        type: u2
        doc: "Number of keys."
      - id: time
        column: 88
        type: u2
        doc: "Frames since the previous key of the projectile."
      - id: x
        column: 89
        type: s2
        doc: "Position x, difference with an escape (position steps)."
      - id: y
        column: 90
        type: s2
        doc: "Position y, difference with an escape."
      - id: z
        column: 91
        type: s2
        doc: "Position z, difference with an escape."
      - id: x_wide
        column: 92
        type: s4
        doc: "Wide values of x."
      - id: y_wide
        column: 93
        type: s4
        doc: "Wide values of y."
      - id: z_wide
        column: 94
        type: s4
        doc: "Wide values of z."
      - id: vx
        column: 95
        type: s2
        doc: "Velocity x, difference with an escape (velocity steps)."
      - id: vy
        column: 96
        type: s2
        doc: "Velocity y, difference with an escape."
      - id: vz
        column: 97
        type: s2
        doc: "Velocity z, difference with an escape."
      - id: vx_wide
        column: 98
        type: s4
        doc: "Wide values of velocity x."
      - id: vy_wide
        column: 99
        type: s4
        doc: "Wide values of velocity y."
      - id: vz_wide
        column: 100
        type: s4
        doc: "Wide values of velocity z."
  team_numbers:
    doc: "Main chunk: team number tracks (resources, economy, rules parameters)."
    columns:
      - id: team
        column: 104
        type: u1
        doc: "For each track, the team id, 255 for the game's own."
      - id: code
        column: 105
        type: u2
        doc: "For each track, the code of the number."
      - id: key_count
        column: 106
        type: u2
        doc: "For each track, its number of keys."
      - id: time
        column: 107
        type: u2
        doc: "Frames since the previous key of the track."
      - id: value
        column: 108
        type: f4
        doc: "Value, plain f32."
  terrain_rows:
    doc: "Terrain chunk: one row per height change, by frame, then z, then x."
    columns:
      - id: time
        column: 112
        type: u2
        doc: "Frames since the previous row (the first: since the window start)."
      - id: x
        column: 113
        type: u2
        doc: "Heightmap x, wrapping difference from the previous row."
      - id: z
        column: 114
        type: u2
        doc: "Heightmap z, wrapping difference from the previous row."
      - id: before
        column: 115
        type: s4
        doc: "Height before in position steps, difference from the previous row's height before."
      - id: change
        column: 116
        type: s4
        doc: "Height after minus height before; never 0."
