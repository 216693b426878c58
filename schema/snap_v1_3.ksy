meta:
  id: snap_v1_3
  -sp-strict: true
  title: SNAP v1.3 snapshot recording
  file-extension: snap
  endian: le
  encoding: UTF-8
doc: |
  A SNAP v1.3 file: an 8-byte version header, a recording count, then the recordings.
  Positions are in studs, times in milliseconds, little-endian throughout.
  Semantics (CFrame compression, delta frames) live in statepack-runtime; see
  docs/formats/snap.md.
seq:
  - id: version
    contents: SNAPV1.3
    doc: Version header. Any other header is refused and named in the error.
  - id: num_recordings
    type: u1
    doc: Number of recordings that follow (derived from `recordings` on write).
  - id: recordings
    type: recording
    repeat: expr
    repeat-expr: num_recordings
types:
  recording:
    doc: One recording (one tracked object), with its frames in time order.
    seq:
      - id: len_map_name
        type: u1
        doc: Length of `map_name` in bytes (derived on write).
      - id: map_name
        type: str
        size: len_map_name
        doc: Name of the map (or track) the recording belongs to, without a terminator.
      - id: num_frames
        type: u2
        doc: Number of frames (derived on write).
      - id: total_duration_ms
        type: u4
        -sp-units: ms
        -sp-sum-of: frames.dt_ms
        doc: Playback length, equal to the sum of every frame's `dt_ms` (derived on write, checked on read).
      - id: frames
        type: frame
        repeat: expr
        repeat-expr: num_frames
  frame:
    doc: |
      One frame: an absolute frame (21 bytes) or a delta frame (3, 9 or 15 bytes)
      depending on `kind`.
    seq:
      - id: kind
        type: u1
        enum: frame_kind
        doc: Shape of the frame. Values outside `frame_kind` are refused.
      - id: dt_ms
        type: u2
        -sp-units: ms
        doc: Time since the previous frame.
      - id: cframe
        type: cframe
        if: kind == frame_kind::absolute
        doc: Full position and orientation of an absolute frame.
      - id: pos_delta
        type: s2
        repeat: expr
        repeat-expr: 3
        if: kind != frame_kind::absolute and (kind.to_i & 0b001) != 0
        -sp-units: 1/4096 stud
        doc: Position change since the previous frame, per axis, in 1/4096 stud.
      - id: rot_delta
        type: s2
        repeat: expr
        repeat-expr: 3
        if: kind != frame_kind::absolute and (kind.to_i & 0b010) != 0
        -sp-units: 0.2/32767 rad
        doc: |
          Rotation since the previous frame as an axis-angle vector (axis times angle),
          in units of 0.2/32767 radian, in the previous frame's object space.
  cframe:
    doc: |
      A compressed CFrame (18 bytes): position as three f32 (Z with the dropped
      quaternion component's index in its two least-significant bits) and the three
      kept quaternion components (smallest-three, scaled by 32767).
    seq:
      - id: x
        type: f4
        -sp-units: stud
      - id: y
        type: f4
        -sp-units: stud
      - id: z_bits
        type: u4
        doc: |
          Bit pattern of Z as an f32, whose two least-significant bits hold the index
          (0 = x, 1 = y, 2 = z, 3 = w) of the quaternion component that was dropped.
      - id: q
        type: s2
        repeat: expr
        repeat-expr: 3
        doc: The three kept components in x, y, z, w order, times the dropped one's sign, times 32767.
enums:
  frame_kind:
    0:
      id: delta_none
      doc: Delta frame with no change (a timing-only tick).
    1:
      id: delta_pos
      doc: Delta frame with a position delta.
    2:
      id: delta_rot
      doc: Delta frame with a rotation delta.
    3:
      id: delta_pos_rot
      doc: Delta frame with position and rotation deltas.
    4:
      id: absolute
      doc: Absolute frame with a full CFrame.
