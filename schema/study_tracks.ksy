meta:
  id: study_tracks
  -sp-strict: true
  title: Keyframe track container of the animation keyframe-compression study
  file-extension: strk
  endian: le
doc: |
  The track container measured by the animation keyframe-compression study: a 16-byte header,
  then either every channel at every frame as float32 (the raw baseline) or one record per
  scalar channel and one per rotation track, with float32 or quantised values.
  The study leaves its 16 header bytes zero; this layout fills them with a magic, the layout,
  the reconstruction flags and the counts a reader needs, at the same size.
  Scalar channel ids are `bone * 6 + axis` (translation) and `bone * 6 + 3 + axis` (scale).
  A record with one key is a constant channel and stores no frame index. Distances are metres.
  Semantics (key reconstruction, quantisation) live in statepack-runtime's `keyframe` module;
  see docs/formats/study_tracks.md.
seq:
  - id: magic
    contents: STRK
    doc: File signature.
  - id: layout
    type: u1
    enum: track_layout
    doc: Which body follows. Other values are refused.
  - id: body
    type:
      switch-on: layout
      cases:
        track_layout::raw: raw_body
        track_layout::float_keys: float_body
        track_layout::quantized_keys: quantized_body
types:
  raw_body:
    doc: Every channel of every bone at every frame (the study's row 1).
    seq:
      - id: flags
        type: u1
        doc: Unused by this layout; written 0.
      - id: fps
        type: u2
        -sp-units: frames/s
        doc: Sampling rate.
      - id: num_frames
        type: u2
        doc: Frame count.
      - id: num_bones
        type: u2
        doc: Bone count.
      - id: reserved
        type: u4
        doc: Written 0, ignored on read.
      - id: values
        type: f4
        repeat: expr
        repeat-expr: num_frames * num_bones * 10
        doc: |
          Frame-major, then bone-major: translation x, y, z (metres), rotation x, y, z, w,
          scale x, y, z.
  float_body:
    doc: Keyframe records with float32 values (the study's rows 2 to 5).
    seq:
      - id: flags
        type: u1
        doc: Bit 0 set when keys are reconstructed with cubic Hermite curves, else linearly.
      - id: fps
        type: u2
        -sp-units: frames/s
        doc: Sampling rate of the frame indices.
      - id: num_frames
        type: u2
        doc: Frame count of the clip; every non-constant record's keys end at `num_frames - 1`.
      - id: num_bones
        type: u2
        doc: Bone count.
      - id: num_scalars
        type: u2
        doc: Number of scalar records (derived on write).
      - id: num_rotations
        type: u2
        doc: Number of rotation records (derived on write).
      - id: scalars
        type: scalar_f32
        repeat: expr
        repeat-expr: num_scalars
      - id: rotations
        type: rotation_f32
        repeat: expr
        repeat-expr: num_rotations
  quantized_body:
    doc: Keyframe records with 16-bit scalars and smallest-three rotations (the study's rows 6 and 7).
    seq:
      - id: flags
        type: u1
        doc: Bit 0 set when keys are reconstructed with cubic Hermite curves, else linearly.
      - id: fps
        type: u2
        -sp-units: frames/s
        doc: Sampling rate of the frame indices.
      - id: num_frames
        type: u2
        doc: Frame count of the clip.
      - id: num_bones
        type: u2
        doc: Bone count.
      - id: num_scalars
        type: u2
        doc: Number of scalar records (derived on write).
      - id: num_rotations
        type: u2
        doc: Number of rotation records (derived on write).
      - id: scalars
        type: scalar_q
        repeat: expr
        repeat-expr: num_scalars
      - id: rotations
        type: rotation_packed
        repeat: expr
        repeat-expr: num_rotations
  scalar_f32:
    doc: One scalar channel with float32 keys.
    seq:
      - id: id
        type: u2
        doc: Channel id (`bone * 6 + axis`, scale axes `+ 3`).
      - id: num_keys
        type: u2
        doc: Key count; 1 marks a constant channel.
      - id: constant_value
        type: f4
        if: num_keys == 1
        doc: The value at every frame of a constant channel.
      - id: keys
        type: key_f32
        repeat: expr
        repeat-expr: num_keys
        if: num_keys != 1
  key_f32:
    seq:
      - id: frame
        type: u2
        doc: Frame index of the key.
      - id: value
        type: f4
        doc: Value at that frame.
  scalar_q:
    doc: One scalar channel with 16-bit keys over the channel's own range.
    seq:
      - id: id
        type: u2
        doc: Channel id.
      - id: num_keys
        type: u2
        doc: Key count; 1 marks a constant channel.
      - id: constant_half
        type: u2
        if: num_keys == 1
        doc: |
          The constant value as IEEE 754 binary16 bits (the study writes 0 here and keeps
          the value only in memory).
      - id: lo
        type: f4
        if: num_keys != 1
        doc: Smallest key value.
      - id: range
        type: f4
        if: num_keys != 1
        doc: Largest minus smallest key value.
      - id: keys
        type: key_q
        repeat: expr
        repeat-expr: num_keys
        if: num_keys != 1
  key_q:
    seq:
      - id: frame
        type: u2
        doc: Frame index of the key.
      - id: value
        type: u2
        doc: "`lo + value / 65535 * range`."
  rotation_f32:
    doc: One rotation track with float32 quaternions.
    seq:
      - id: bone
        type: u2
        doc: Bone index.
      - id: num_keys
        type: u2
        doc: Key count; 1 marks a constant track.
      - id: constant_q
        type: f4
        repeat: expr
        repeat-expr: 4
        if: num_keys == 1
        doc: The rotation (x, y, z, w) of a constant track.
      - id: keys
        type: key_rot_f32
        repeat: expr
        repeat-expr: num_keys
        if: num_keys != 1
  key_rot_f32:
    seq:
      - id: frame
        type: u2
        doc: Frame index of the key.
      - id: q
        type: f4
        repeat: expr
        repeat-expr: 4
        doc: Rotation x, y, z, w (hemisphere-aligned with the previous key).
  rotation_packed:
    doc: One rotation track with smallest-three quaternions packed in 32 bits.
    seq:
      - id: bone
        type: u2
        doc: Bone index.
      - id: num_keys
        type: u2
        doc: Key count; 1 marks a constant track.
      - id: constant_packed
        type: u4
        if: num_keys == 1
        doc: The rotation of a constant track, packed as in `key_rot_packed`.
      - id: keys
        type: key_rot_packed
        repeat: expr
        repeat-expr: num_keys
        if: num_keys != 1
  key_rot_packed:
    seq:
      - id: frame
        type: u2
        doc: Frame index of the key.
      - id: packed
        type: u4
        doc: |
          Bits 30-31: index (0 = x .. 3 = w) of the dropped largest component; bits 20-29,
          10-19, 0-9: the other three in x, y, z, w order, each `round((c + 1/sqrt2) / sqrt2 * 1023)`
          after flipping the sign so the dropped component is positive.
enums:
  track_layout:
    0:
      id: raw
      doc: Every channel at every frame, float32.
    1:
      id: float_keys
      doc: Keyframe records with float32 values.
    2:
      id: quantized_keys
      doc: Keyframe records with 16-bit scalars and packed rotations.
