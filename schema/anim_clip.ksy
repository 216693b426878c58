meta:
  id: anim_clip
  -sp-strict: true
  title: statepack animation clip
  file-extension: clip
  endian: le
doc: |
  A skeletal animation clip: per bone a rotation, a translation and a scale track, each a
  default (identity rotation, zero translation, unit scale), a constant, or keys whose
  components are quantised with per-component bit widths over an f16 range. Track
  descriptors are byte-aligned; every animated track's key frames and values sit in one
  bit stream at the end, in track order (bone by bone: rotation, translation, scale).
  Per animated track the stream holds the key frame gaps minus one of keys 1 to
  num_keys - 2 (`index_bits` each; key 0 is frame 0 and the last key is frame
  num_frames - 1), then the values as `coding` says, least significant bit first. Distances are metres, times frames of `sample_rate` per second.
  Semantics live in statepack-runtime's `anim` module; see docs/formats/anim_clip.md.
seq:
  - id: magic
    contents: SPAC
    doc: File signature.
  - id: version
    type: u1
    valid: 1
    doc: Layout version, 1.
  - id: flags
    type: u1
    doc: Bit 0 set when keys are reconstructed with cubic Hermite curves, else linearly.
  - id: num_frames
    type: u2
    valid:
      min: 1
    doc: Frame count (at least 1).
  - id: sample_rate
    type: f4
    -sp-units: frames/s
    doc: Frames per second.
  - id: num_bones
    type: u2
    doc: Bone count (derived on write).
  - id: bones
    type: bone_tracks
    repeat: expr
    repeat-expr: num_bones
  - id: len_bits
    type: u4
    doc: Length of the bit stream in bytes (derived on write).
  - id: bits
    size: len_bits
    doc: Key frame gaps and quantised values of every animated track.
types:
  bone_tracks:
    doc: The three tracks of one bone.
    seq:
      - id: rotation
        type: track
        doc: Local rotation; constants and animated tracks have 4 components (x, y, z, w) or 3 (x, y, z with w >= 0 implied).
      - id: translation
        type: track
        doc: Local translation in metres, 3 components.
      - id: scale
        type: track
        doc: Local scale, 3 components.
  track:
    seq:
      - id: kind
        type: u1
        enum: track_kind
        doc: What follows.
      - id: body
        type:
          switch-on: kind
          cases:
            track_kind::default_value: default_track
            track_kind::constant: constant_track
            track_kind::animated: animated_track
  default_track:
    doc: No data; the identity for the track's role.
    seq: []
  constant_track:
    doc: One value at every frame.
    seq:
      - id: num_components
        type: u1
        doc: 3 or 4 (derived on write).
      - id: values
        type: f4
        repeat: expr
        repeat-expr: num_components
  animated_track:
    doc: Keys in the bit stream.
    seq:
      - id: num_components
        type: u1
        doc: 3 or 4 (derived on write).
      - id: num_keys
        type: u2
        doc: Key count, at least 2 (at most num_frames).
      - id: index_bits
        type: u1
        doc: Bits of each stored key frame gap (0 to 16).
      - id: coding
        type: u1
        doc: |
          Bit 0 set when values are stored as deltas: per component with a non-zero width,
          the first key's value, then per group of 8 deltas a 5-bit width and the zigzag
          deltas at that width (component-major). Clear: per key every component (key-major).
          Other bits must be 0.
      - id: components
        type: component
        repeat: expr
        repeat-expr: num_components
  component:
    doc: Quantisation of one component.
    seq:
      - id: bits
        type: u1
        doc: Bits per value (0 to 24); 0 holds `lo` at every key.
      - id: lo
        type: u2
        doc: Low end of the range, IEEE 754 binary16 bits.
      - id: extent
        type: u2
        doc: Extent of the range, binary16 bits; value = lo + q / (2^bits - 1) * extent.
enums:
  track_kind:
    0:
      id: default_value
      doc: Identity rotation, zero translation or unit scale.
    1:
      id: constant
      doc: One stored value.
    2:
      id: animated
      doc: Keys in the bit stream.
