meta:
  id: rply_v3
  -sp-strict: true
  title: RPLY v3 op-stream replay
  file-extension: rply
  endian: le
  encoding: UTF-8
doc: |
  An RPLY v3 replay: a 30-byte header, the string table, the keyframe index and the op
  stream. Positions are in studs, ticks count from the recording's start at `tick_rate`
  per second, little-endian throughout. Semantics (tick markers, delta chains, the
  player's state, seeking) live in src/formats/rply/; see docs/formats/rply.md.
seq:
  - id: head
    type: rply_head
    doc: The header, string table and keyframe index, readable without the op stream.
  - id: ops
    type: op_stream
    size: head.op_bytes
    doc: The op stream, to the end of the file.
types:
  rply_head:
    doc: |
      The 30-byte header, the string table and the keyframe index: everything before the op
      stream, so a player can open a replay and seek without reading its ops.
    seq:
      - id: magic
        contents: RPLY
        doc: The four bytes "RPLY" (the u32 0x594C5052 written little-endian).
      - id: version
        type: u1
        valid: 3
        doc: Format version; only 3 is read.
      - id: tick_rate
        type: u1
        -sp-units: ticks per second
        doc: Ticks per second of recorded time (15 by default).
      - id: place_version
        type: u4
        doc: The place version the replay was recorded in; a player for another version refuses it.
      - id: start_unix
        type: f8
        -sp-units: s since 1970-01-01 UTC
        doc: Wall-clock time of the recording's start.
      - id: tick_count
        type: u4
        doc: Number of the last tick recorded (ticks run from 0 to this value).
      - id: string_count
        type: u2
        doc: Number of strings in the table (derived on write).
      - id: keyframe_count
        type: u2
        doc: Number of keyframe index entries (derived on write).
      - id: op_bytes
        type: u4
        doc: |
          Length of the op stream in bytes, which is the rest of the file. Stored, not derived:
          the writer checks it against the op stream's encoded length.
      - id: strings
        type: str16
        repeat: expr
        repeat-expr: string_count
        doc: The string table; ops refer to entry i (1-based) by the id i, 0 means none.
      - id: keyframes
        type: keyframe
        repeat: expr
        repeat-expr: keyframe_count
        doc: |
          The keyframe index, in tick order (strictly increasing ticks, non-decreasing offsets:
          checked by the player, which reads the index on its own).
  str16:
    doc: A string with a u16 byte length in front.
    seq:
      - id: len_value
        type: u2
        doc: Length of `value` in bytes (derived on write).
      - id: value
        type: str
        size: len_value
  keyframe:
    doc: One keyframe index entry (8 bytes).
    seq:
      - id: tick
        type: u4
        valid:
          max: _parent.tick_count
        doc: The keyframe's tick, at most the header's `tick_count`; every live entity has a full XFORM in it.
      - id: offset
        type: u4
        valid:
          expr: _ <= _parent.op_bytes and (tick != 0 or _ == 0)
        doc: |
          Byte offset inside the op stream of the keyframe tick's marker: at most the header's
          `op_bytes`, and 0 for a keyframe at tick 0.
  op_stream:
    doc: Every op, until the end of the stream.
    seq:
      - id: ops
        type: op
        repeat: eos
  op:
    doc: One op, an opcode byte and its payload.
    seq:
      - id: opcode
        type: u1
        enum: opcode
        doc: What the op does. Other values are refused.
      - id: body
        type:
          switch-on: opcode
          cases:
            opcode::tick: op_tick
            opcode::spawn: op_spawn
            opcode::despawn: op_despawn
            opcode::xform: op_xform
            opcode::prop: op_prop
            opcode::anim_play: op_anim_play
            opcode::anim_stop: op_anim_stop
            opcode::anim_speed: op_anim_speed
            opcode::event: op_event
            opcode::custom: op_custom
            opcode::tick_next: op_tick_next
            opcode::xform_d: op_xform_d
            opcode::snapshot: op_snapshot
  op_tick:
    doc: TICK (0), an absolute tick marker.
    seq:
      - id: tick
        type: u4
        doc: The tick every following op belongs to.
  op_tick_next:
    doc: TICK_NEXT (10), one tick after the current one; no payload.
    seq: []
  op_spawn:
    doc: SPAWN (1), an entity appears.
    seq:
      - id: entity_id
        type: u2
        doc: The new entity's id (1-based).
      - id: descriptor_str
        type: u2
        doc: String id of the descriptor (`char:<userId>`, `part:<Shape>`, `model:<name>`, `sub:<path>`, `asset:<id>`).
      - id: parent_entity_id
        type: u2
        doc: Id of the entity it is carried by, or 0 for none.
  op_despawn:
    doc: DESPAWN (2), an entity goes away.
    seq:
      - id: entity_id
        type: u2
  op_xform:
    doc: XFORM (3), a full transform sample.
    seq:
      - id: entity_id
        type: u2
      - id: mask
        type: u1
        valid:
          expr: (_ & 0xf8) == 0 and (_ & 6) != 6
        doc: 1 = position follows, 2 = full rotation follows, 4 = yaw-only rotation follows (2 and 4 never together).
      - id: pos
        type: f4
        repeat: expr
        repeat-expr: 3
        if: (mask & 1) != 0
        -sp-units: stud
        doc: Position, raw f32.
      - id: rot
        type: s2
        repeat: expr
        repeat-expr: 3
        if: (mask & 2) != 0
        -sp-units: pi/32767 rad
        doc: Rotation as an axis-angle vector (axis times angle), scaled so that pi maps to 32767.
      - id: yaw
        type: s2
        if: (mask & 4) != 0
        -sp-units: pi/32767 rad
        doc: Rotation about world up, atan2(-look.x, -look.z), pi maps to 32767.
  op_prop:
    doc: PROP (4), a watched property changed.
    seq:
      - id: entity_id
        type: u2
      - id: name_str
        type: u2
        doc: String id of the property path (`Body/Exhaust/Enabled`, `@Attribute`, `Scale`).
      - id: type_tag
        type: u1
        enum: prop_type
      - id: value
        type:
          switch-on: type_tag
          cases:
            prop_type::bool: prop_bool
            prop_type::number: prop_number
            prop_type::string: prop_str_ref
            prop_type::color3: color3
            prop_type::vector3: vec3
            prop_type::enum: prop_str_ref
  prop_bool:
    doc: A boolean, 0 or 1.
    seq:
      - id: value
        type: u1
        valid:
          max: 1
  prop_number:
    doc: A number, f64.
    seq:
      - id: value
        type: f8
  prop_str_ref:
    doc: A string id (a string value or an enum item's name).
    seq:
      - id: str_id
        type: u2
  color3:
    doc: A colour as three bytes, 0..255 per channel.
    seq:
      - id: r
        type: u1
      - id: g
        type: u1
      - id: b
        type: u1
  vec3:
    doc: Three f32.
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
      - id: z
        type: f4
  op_anim_play:
    doc: ANIM_PLAY (5), an animation track starts.
    seq:
      - id: entity_id
        type: u2
      - id: anim_id_str
        type: u2
        doc: String id of the animation asset id.
      - id: handle
        type: u1
        doc: Track handle, 1..255, reused by ANIM_STOP and ANIM_SPEED.
      - id: fade
        type: u1
        -sp-units: 1/100 s
      - id: speed
        type: s2
        -sp-units: 1/256
        doc: Playback speed times 256.
  op_anim_stop:
    doc: ANIM_STOP (6), an animation track stops.
    seq:
      - id: entity_id
        type: u2
      - id: handle
        type: u1
      - id: fade
        type: u1
        -sp-units: 1/100 s
  op_anim_speed:
    doc: ANIM_SPEED (7), a track's speed changes.
    seq:
      - id: entity_id
        type: u2
      - id: handle
        type: u1
      - id: speed
        type: s2
        -sp-units: 1/256
  op_event:
    doc: EVENT (8), a gameplay event.
    seq:
      - id: name_str
        type: u2
      - id: payload_str
        type: u2
        doc: String id of the JSON payload.
  op_custom:
    doc: CUSTOM (9), bytes on a named channel.
    seq:
      - id: channel_str
        type: u2
      - id: byte_len
        type: u2
        doc: Length of `data` (derived on write).
      - id: data
        size: byte_len
  op_xform_d:
    doc: XFORM_D (11), a transform delta against the entity's last reconstructed transform.
    seq:
      - id: id_byte
        type: u1
        doc: The entity id when below 255; 255 means the id follows as a u16.
      - id: id_wide
        type: u2
        if: id_byte == 255
        doc: The entity id, when `id_byte` is 255.
      - id: mask
        type: u1
        valid:
          expr: (_ & 0xf0) == 0 and (_ & 3) != 3 and (_ & 12) != 12
        doc: 1 = 3 x i8 position delta, 2 = 3 x i16 position delta, 4 = i8 yaw delta, 8 = 3 x i8 rotation delta (1 and 2, 4 and 8 never together).
      - id: pos8
        type: s1
        repeat: expr
        repeat-expr: 3
        if: (mask & 1) != 0
        -sp-units: 1/32 stud
      - id: pos16
        type: s2
        repeat: expr
        repeat-expr: 3
        if: (mask & 2) != 0
        -sp-units: 1/32 stud
      - id: yaw
        type: s1
        if: (mask & 4) != 0
        -sp-units: 1/64 rad
      - id: rot
        type: s1
        repeat: expr
        repeat-expr: 3
        if: (mask & 8) != 0
        -sp-units: 1/128 rad
        doc: Axis-angle rotation applied in the entity's own frame (last rotation times this).
  op_snapshot:
    doc: SNAPSHOT (14), the entity's geometry.
    seq:
      - id: entity_id
        type: u2
      - id: byte_len
        type: u4
        doc: Length of `snapshot` (derived on write).
      - id: snapshot
        type: snapshot
        size: byte_len
        -sp-box: true
        doc: The snapshot, boxed so that the op type stays small.
  snapshot:
    doc: A geometry snapshot, version 10.
    seq:
      - id: version
        type: u1
        valid: 10
      - id: is_model
        type: u1
        valid:
          max: 1
        doc: 1 when the entity is a Model (a rig block follows), 0 for a single part.
      - id: name
        type: str16
      - id: source_key
        type: str16
        doc: Unique dotted path of the instance when recorded.
      - id: root_path
        type: str16
        doc: Slash path of the root part inside the entity.
      - id: union_count
        type: u2
      - id: union_keys
        type: str16
        repeat: expr
        repeat-expr: union_count
      - id: mesh_count
        type: u2
      - id: mesh_ids
        type: str16
        repeat: expr
        repeat-expr: mesh_count
      - id: rig
        type: rig
        if: is_model == 1
      - id: part_count
        type: u2
      - id: parts
        type: part
        repeat: expr
        repeat-expr: part_count
      - id: joint_count
        type: u2
      - id: joints
        type: joint
        repeat: expr
        repeat-expr: joint_count
  rig:
    doc: A model's rig block.
    seq:
      - id: has_humanoid
        type: u1
        valid:
          max: 1
      - id: humanoid
        type: humanoid
        if: has_humanoid == 1
  humanoid:
    doc: Humanoid rig type, clothing, body colours and character meshes.
    seq:
      - id: rig_type
        type: u1
        doc: Enum.HumanoidRigType value (0 R6, 1 R15).
      - id: shirt
        type: str16
      - id: pants
        type: str16
      - id: shirt_graphic
        type: str16
      - id: has_body_colors
        type: u1
        valid:
          max: 1
      - id: body_colors
        type: color3
        repeat: expr
        repeat-expr: 6
        if: has_body_colors == 1
        doc: Head, torso, left arm, right arm, left leg, right leg.
      - id: char_mesh_count
        type: u1
      - id: char_meshes
        type: character_mesh
        repeat: expr
        repeat-expr: char_mesh_count
  character_mesh:
    doc: One CharacterMesh.
    seq:
      - id: body_part
        type: u1
        doc: Enum.BodyPart value.
      - id: mesh_id
        type: f8
      - id: base_texture_id
        type: f8
      - id: overlay_texture_id
        type: f8
  part:
    doc: One BasePart of the snapshot; the root part comes first.
    seq:
      - id: kind
        type: u1
        enum: part_kind
      - id: union_key_index
        type: u2
        if: kind == part_kind::union
        doc: 1-based index into `union_keys`.
      - id: name
        type: str16
      - id: parent_path
        type: str16
        doc: Slash path of the wrappers between the entity and the part.
      - id: offset
        type: vec3
        -sp-units: stud
        doc: Position relative to the root part.
      - id: rot
        type: s2
        repeat: expr
        repeat-expr: 3
        -sp-units: pi/32767 rad
        doc: Rotation relative to the root part, axis-angle.
      - id: size
        type: vec3
        -sp-units: stud
      - id: color
        type: color3
      - id: material
        type: u2
        doc: Enum.Material value.
      - id: transparency
        type: u1
        -sp-units: 1/255
      - id: reflectance
        type: u1
        -sp-units: 1/255
      - id: shape
        type: u1
        doc: Enum.PartType value for parts, else 0.
      - id: surfaces
        type: u1
        repeat: expr
        repeat-expr: 6
        doc: Top, bottom, left, right, front, back Enum.SurfaceType values.
      - id: mesh
        type: mesh_part_info
        if: kind == part_kind::mesh_part
      - id: has_special_mesh
        type: u1
        valid:
          max: 1
      - id: special_mesh
        type: special_mesh
        if: has_special_mesh == 1
      - id: has_surface_appearance
        type: u1
        valid:
          max: 1
      - id: surface_appearance
        type: surface_appearance
        if: has_surface_appearance == 1
      - id: decal_count
        type: u1
      - id: decals
        type: decal
        repeat: expr
        repeat-expr: decal_count
      - id: effect_count
        type: u1
      - id: effects
        type: effect
        repeat: expr
        repeat-expr: effect_count
  mesh_part_info:
    doc: A MeshPart's mesh and texture.
    seq:
      - id: mesh_id
        type: str16
      - id: texture_id
        type: str16
      - id: mesh_size
        type: vec3
        -sp-units: stud
  special_mesh:
    doc: A SpecialMesh child (this project's layout, after the reference implementation).
    seq:
      - id: mesh_type
        type: u1
        doc: Enum.MeshType value.
      - id: mesh_id
        type: str16
      - id: texture_id
        type: str16
      - id: scale
        type: vec3
      - id: offset
        type: vec3
      - id: vertex_color
        type: vec3
  surface_appearance:
    doc: A SurfaceAppearance child (this project's layout, after the reference implementation).
    seq:
      - id: color_map
        type: str16
      - id: normal_map
        type: str16
      - id: metalness_map
        type: str16
      - id: roughness_map
        type: str16
      - id: alpha_mode
        type: u1
        doc: Enum.AlphaMode value.
      - id: color
        type: color3
  decal:
    doc: A Decal or Texture child (this project's layout, after the reference implementation).
    seq:
      - id: is_texture
        type: u1
        valid:
          max: 1
      - id: face
        type: u1
        doc: Enum.NormalId value.
      - id: texture
        type: str16
      - id: transparency
        type: u1
        -sp-units: 1/255
      - id: color
        type: color3
      - id: z_index
        type: u1
      - id: tiling
        type: f4
        repeat: expr
        repeat-expr: 4
        if: is_texture == 1
        doc: StudsPerTileU, StudsPerTileV, OffsetStudsU, OffsetStudsV.
  effect:
    doc: An attachment or effect on the part or on one of its attachments.
    seq:
      - id: class
        type: u1
        enum: effect_class
      - id: parent_index
        type: u1
        doc: 0 = the part, else the 1-based index of an earlier attachment in this list.
      - id: name
        type: str16
      - id: prop_count
        type: u1
      - id: props
        type: effect_prop
        repeat: expr
        repeat-expr: prop_count
  effect_prop:
    doc: One property of an effect.
    seq:
      - id: prop_index
        type: u1
        doc: 1-based index into the class's property list (docs/formats/rply.md).
      - id: tag
        type: u1
        enum: value_tag
      - id: value
        type:
          switch-on: tag
          cases:
            value_tag::bool: prop_bool
            value_tag::number: f32_value
            value_tag::string: str16
            value_tag::color3: color3
            value_tag::vector3: vec3
            value_tag::vector2: vec2
            value_tag::number_range: vec2
            value_tag::number_sequence: number_sequence
            value_tag::color_sequence: color_sequence
            value_tag::enum_name: str16
            value_tag::attachment_ref: str16
  f32_value:
    doc: A number, f32.
    seq:
      - id: value
        type: f4
  vec2:
    doc: Two f32 (a Vector2, or a NumberRange's min and max).
    seq:
      - id: x
        type: f4
      - id: y
        type: f4
  number_sequence:
    doc: A NumberSequence.
    seq:
      - id: count
        type: u1
      - id: keys
        type: number_key
        repeat: expr
        repeat-expr: count
  number_key:
    doc: One NumberSequence keypoint.
    seq:
      - id: time
        type: f4
      - id: value
        type: f4
      - id: envelope
        type: f4
  color_sequence:
    doc: A ColorSequence.
    seq:
      - id: count
        type: u1
      - id: keys
        type: color_key
        repeat: expr
        repeat-expr: count
  color_key:
    doc: One ColorSequence keypoint.
    seq:
      - id: time
        type: f4
      - id: color
        type: color3
  joint:
    doc: One joint between two parts of the snapshot.
    seq:
      - id: kind
        type: u1
        enum: joint_kind
      - id: name
        type: str16
      - id: holder_index
        type: u2
        doc: 1-based index of the part the joint is parented to.
      - id: body
        type:
          switch-on: kind
          cases:
            joint_kind::weld: joint_cframes
            joint_kind::motor6d: joint_cframes
            joint_kind::animation_constraint: joint_attachments
            joint_kind::rigid_constraint: joint_attachments
  joint_cframes:
    doc: Part indices and the C0/C1 offsets of a Weld or Motor6D.
    seq:
      - id: part0_index
        type: u2
      - id: part1_index
        type: u2
      - id: c0
        type: cframe
      - id: c1
        type: cframe
  joint_attachments:
    doc: Part indices and attachment names of an AnimationConstraint or RigidConstraint.
    seq:
      - id: part0_index
        type: u2
      - id: attachment0_name
        type: str16
      - id: part1_index
        type: u2
      - id: attachment1_name
        type: str16
  cframe:
    doc: A position (3 x f32) and an axis-angle rotation (3 x i16, pi maps to 32767).
    seq:
      - id: pos
        type: vec3
        -sp-units: stud
      - id: rot
        type: s2
        repeat: expr
        repeat-expr: 3
        -sp-units: pi/32767 rad
enums:
  opcode:
    0: tick
    1: spawn
    2: despawn
    3: xform
    4: prop
    5: anim_play
    6: anim_stop
    7: anim_speed
    8: event
    9: custom
    10: tick_next
    11: xform_d
    14: snapshot
  prop_type:
    0: bool
    1: number
    2: string
    3: color3
    4: vector3
    5: enum
  part_kind:
    0: part
    1: mesh_part
    2: wedge
    3: corner_wedge
    4: other
    5: union
  effect_class:
    1: attachment
    2: sound
    3: particle_emitter
    4: beam
    5: trail
    6: fire
    7: smoke
    8: sparkles
    9: point_light
    10: spot_light
    11: surface_light
  value_tag:
    0: bool
    1: number
    2: string
    3: color3
    4: vector3
    5: vector2
    6: number_range
    7: number_sequence
    8: color_sequence
    9: enum_name
    10: attachment_ref
  joint_kind:
    1: weld
    2: motor6d
    3: animation_constraint
    4: rigid_constraint
