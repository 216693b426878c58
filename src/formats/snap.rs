//! SNAP v1.3 snapshot recordings: the semantic API over the generated raw types.
//!
//! - [`Recorder`]: samples (dt in ms, position in studs, rotation) to bytes. Frame 0 and every
//!   60th frame are absolute, other frames are deltas unless the motion is too large for the
//!   delta encoding; deltas are computed against what the decoder reconstructs (closed loop,
//!   [`statepack_codecs::snap_delta::SnapChainEncoder`]), so error never accumulates.
//! - [`read`]: bytes to decoded recordings, with every check of the spec (version header,
//!   explicit recording count, first frame absolute, known frame bitfields, total duration
//!   equal to the sum of dt, UTF-8 map names), each failing with the field path and byte
//!   offset.
//! - [`DecodedRecording::sample_at`]: the state at any time in ms (lerp/nlerp between frames).
//! - [`import_clip`] and [`verify_against_clip`]: motion (one recording per joint, metres to
//!   studs) in, worst errors out.
//!
//! The byte layout is `schema/snap_v1_3.ksy`; the decisions taken where the spec is silent or
//! contradicts itself are listed in `docs/formats/snap.md`.

use crate::generated::snap_v1_3 as raw;
use glam::{DQuat, Quat, Vec3};
use statepack_codecs::motion::Clip;
use statepack_codecs::quant::angle_between_rad;
use statepack_codecs::snap_delta::{ChainError, SnapChainDecoder, SnapChainEncoder, SnapStep};
use statepack_codecs::snap_quant::PackedCFrame;
use statepack_runtime::io::{
    DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath, PathSeg,
};

pub use raw::{Cframe, Frame, FrameKind, Recording, SnapV13};

/// The 8-byte version header every SNAP v1.3 file starts with.
pub const VERSION_HEADER: &[u8; 8] = b"SNAPV1.3";

/// Default conversion of motion input: 1 stud = 0.28 m, so 1/0.28 ≈ 3.571 studs per metre.
pub const DEFAULT_STUDS_PER_METRE: f64 = 1.0 / 0.28;

/// One input sample of a recording.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time since the previous sample, in ms (0..=65 535; more is an encode error).
    pub dt_ms: u32,
    /// Position in studs (finite).
    pub pos_studs: Vec3,
    /// Rotation, a unit quaternion (x, y, z, w); it is normalized before encoding.
    pub rot: Quat,
}

/// Errors of the SNAP semantic layer: the raw layer's errors plus the chain's, each with the
/// field path (and, when reading, the byte offset).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapError {
    /// The bytes are not a valid SNAP v1.3 file.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The recordings cannot be written (a value does not fit, a sample is not finite).
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// A motion clip cannot be turned into recordings.
    #[error("{0}")]
    Input(String),
}

fn frame_path(rec: usize, frame: usize, field: &'static str) -> FieldPath {
    FieldPath::from_segments([
        PathSeg::Field("recordings"),
        PathSeg::Index(rec),
        PathSeg::Field("frames"),
        PathSeg::Index(frame),
        PathSeg::Field(field),
    ])
}

fn step_to_frame(step: SnapStep, dt_ms: u16) -> Frame {
    match step {
        SnapStep::Absolute(p) => Frame {
            kind: FrameKind::Absolute,
            dt_ms,
            cframe: Some(Cframe {
                x: p.x,
                y: p.y,
                z_bits: p.z_bits,
                q: p.q,
            }),
            pos_delta: None,
            rot_delta: None,
        },
        SnapStep::Delta { pos, rot } => Frame {
            kind: match (pos.is_some(), rot.is_some()) {
                (false, false) => FrameKind::DeltaNone,
                (true, false) => FrameKind::DeltaPos,
                (false, true) => FrameKind::DeltaRot,
                (true, true) => FrameKind::DeltaPosRot,
            },
            dt_ms,
            cframe: None,
            pos_delta: pos,
            rot_delta: rot,
        },
    }
}

fn frame_to_step(f: &Frame) -> SnapStep {
    match (&f.kind, &f.cframe) {
        (FrameKind::Absolute, Some(c)) => SnapStep::Absolute(PackedCFrame {
            x: c.x,
            y: c.y,
            z_bits: c.z_bits,
            q: c.q,
        }),
        _ => SnapStep::Delta {
            pos: f.pos_delta,
            rot: f.rot_delta,
        },
    }
}

/// Counts of what the recorder chose, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecorderStats {
    /// Frames written in all.
    pub frames: u64,
    /// Absolute frames (keyframes and frames forced absolute by large motion).
    pub absolute: u64,
    /// Absolute frames that were not on the 60-frame schedule (motion too large for a delta).
    pub forced_absolute: u64,
    /// Delta frames (any of the four delta shapes).
    pub delta: u64,
}

/// Builds a SNAP v1.3 file from samples, one recording at a time.
///
/// ```
/// use statepack::formats::snap::{Recorder, Sample};
/// use glam::{Quat, Vec3};
/// let mut rec = Recorder::new();
/// let samples: Vec<Sample> = (0..120)
///     .map(|i| Sample { dt_ms: if i == 0 { 0 } else { 16 }, pos_studs: Vec3::new(i as f32 * 0.1, 5.0, 0.0), rot: Quat::IDENTITY })
///     .collect();
/// rec.add_recording("Baseplate", &samples).unwrap();
/// let bytes = rec.finish().unwrap();
/// let back = statepack::formats::snap::read(&bytes).unwrap();
/// assert_eq!(back[0].frames.len(), 120);
/// assert_eq!(back[0].total_duration_ms, 119 * 16);
/// ```
#[derive(Debug, Clone)]
pub struct Recorder {
    file: SnapV13,
    stats: RecorderStats,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// An empty file.
    pub fn new() -> Self {
        Self {
            file: SnapV13 {
                recordings: Vec::new(),
            },
            stats: RecorderStats::default(),
        }
    }

    /// Encodes one recording. Errors (`SnapError::Encode`, with the field path of the
    /// offending value): a `dt_ms` above 65 535 (`recordings[r].frames[i].dt_ms`); a
    /// non-finite position or rotation (`recordings[r].frames[i].cframe`). The limits of the
    /// layout (at most 255 recordings, 255 bytes of map name, 65 535 frames, a total duration
    /// that fits a u32) are checked by [`Recorder::finish`].
    pub fn add_recording(&mut self, map_name: &str, samples: &[Sample]) -> Result<(), SnapError> {
        let r = self.file.recordings.len();
        let bad = |path: FieldPath, kind: EncodeErrorKind| EncodeError::at(path, kind);
        let mut enc = SnapChainEncoder::new();
        let mut frames = Vec::with_capacity(samples.len());
        let mut stats = RecorderStats::default();
        for (i, s) in samples.iter().enumerate() {
            let dt_ms = u16::try_from(s.dt_ms).map_err(|_| {
                bad(
                    frame_path(r, i, "dt_ms"),
                    EncodeErrorKind::OutOfRange {
                        value: s.dt_ms.to_string(),
                        ty: "u16",
                    },
                )
            })?;
            let step = enc.push(s.pos_studs, s.rot).map_err(|e| {
                bad(
                    frame_path(r, i, "cframe"),
                    EncodeErrorKind::Semantic(e.to_string()),
                )
            })?;
            stats.frames += 1;
            match step {
                SnapStep::Absolute(_) => {
                    stats.absolute += 1;
                    if i % statepack_codecs::snap_delta::KEYFRAME_INTERVAL as usize != 0 {
                        stats.forced_absolute += 1;
                    }
                }
                SnapStep::Delta { .. } => stats.delta += 1,
            }
            frames.push(step_to_frame(step, dt_ms));
        }
        self.file.recordings.push(Recording {
            map_name: map_name.to_owned(),
            frames,
        });
        self.stats.frames += stats.frames;
        self.stats.absolute += stats.absolute;
        self.stats.forced_absolute += stats.forced_absolute;
        self.stats.delta += stats.delta;
        Ok(())
    }

    /// What the recorder chose so far.
    pub fn stats(&self) -> RecorderStats {
        self.stats
    }

    /// The raw file built so far (the generated raw type).
    pub fn raw(&self) -> &SnapV13 {
        &self.file
    }

    /// The file's bytes. Errors: `SnapError::Encode` naming the field whose derived count or
    /// length does not fit (`num_recordings`, `recordings[r].len_map_name`,
    /// `recordings[r].num_frames`, `recordings[r].total_duration_ms`).
    pub fn finish(&self) -> Result<Vec<u8>, SnapError> {
        Ok(self.file.encode()?)
    }
}

/// One decoded frame.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DecodedFrame {
    /// Time of this frame since the start of the recording, in ms (sum of dt so far).
    pub time_ms: u64,
    /// Time since the previous frame, in ms.
    pub dt_ms: u16,
    /// Reconstructed position in studs (Z with the index bits masked off on absolute frames).
    pub pos_studs: Vec3,
    /// Reconstructed rotation, unit quaternion (x, y, z, w).
    pub rot: Quat,
    /// True for an absolute frame.
    pub absolute: bool,
}

/// One decoded recording.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DecodedRecording {
    /// The recording's map name.
    pub map_name: String,
    /// Total duration in ms, as stored (checked equal to the sum of dt).
    pub total_duration_ms: u32,
    /// The frames, in order.
    pub frames: Vec<DecodedFrame>,
}

impl DecodedRecording {
    /// The state at `t_ms` milliseconds from the start: positions interpolated linearly and
    /// rotations by nlerp between the two frames around `t_ms`; clamped to the first and last
    /// frame outside the recording. `None` for a recording without frames or a NaN time.
    pub fn sample_at(&self, t_ms: f64) -> Option<(Vec3, Quat)> {
        let first = self.frames.first()?;
        if t_ms.is_nan() {
            return None;
        }
        if t_ms <= first.time_ms as f64 {
            return Some((first.pos_studs, first.rot));
        }
        let i = self.frames.partition_point(|f| (f.time_ms as f64) <= t_ms);
        let a = &self.frames[i - 1];
        let Some(b) = self.frames.get(i) else {
            return Some((a.pos_studs, a.rot));
        };
        let span = (b.time_ms - a.time_ms) as f64;
        let u = if span > 0.0 {
            ((t_ms - a.time_ms as f64) / span) as f32
        } else {
            1.0
        };
        Some((
            statepack_codecs::curve::lerp(a.pos_studs, b.pos_studs, u),
            statepack_codecs::curve::nlerp(a.rot, b.rot, u),
        ))
    }
}

/// The end of a file's timeline, ms: the latest last-frame time over its recordings (0 for a
/// file without frames). `statepack sample` takes times from 0 to this; a recording that ends
/// earlier holds its last frame after its end ([`DecodedRecording::sample_at`]).
pub fn last_frame_ms(recordings: &[DecodedRecording]) -> f64 {
    recordings
        .iter()
        .filter_map(|r| r.frames.last())
        .map(|f| f.time_ms as f64)
        .fold(0.0, f64::max)
}

/// Reads a SNAP v1.3 file and reconstructs every frame.
///
/// Errors (`SnapError::Decode`, each naming the field path and byte offset): a version header
/// other than `SNAPV1.3` (the error shows the header found); input ending early; a count
/// larger than the bytes left; a map name that is not UTF-8; an unknown frame bitfield;
/// a total duration different from the sum of dt; a first frame that is not absolute; an
/// absolute frame with a non-finite position; trailing bytes.
pub fn read(bytes: &[u8]) -> Result<Vec<DecodedRecording>, SnapError> {
    let file = SnapV13::decode(bytes)?;
    Ok(reconstruct(&file)?)
}

/// Reconstructs the frames of an already decoded raw file, applying the checks the layout
/// alone does not state (first frame absolute, finite absolute positions). Errors name the
/// field path and the byte offset in the file the raw value was read from.
pub fn reconstruct(file: &SnapV13) -> Result<Vec<DecodedRecording>, DecodeError> {
    let mut out = Vec::with_capacity(file.recordings.len());
    // Byte offset of the current frame, for errors: header (8) + count (1), then per
    // recording 1 + name + 2 + 4 bytes before its frames.
    let mut offset = 9usize;
    for (r, rec) in file.recordings.iter().enumerate() {
        offset += 7 + rec.map_name.len();
        let mut dec = SnapChainDecoder::new();
        let mut time_ms = 0u64;
        let mut frames = Vec::with_capacity(rec.frames.len());
        for (i, f) in rec.frames.iter().enumerate() {
            if i == 0 && f.kind != FrameKind::Absolute {
                return Err(DecodeError::at(
                    frame_path(r, 0, "kind"),
                    offset as u64,
                    DecodeErrorKind::Semantic(format!(
                        "the first frame of a recording must be absolute, found {}",
                        f.kind.name()
                    )),
                ));
            }
            let step = frame_to_step(f);
            let (pos, rot) = dec.apply(&step).map_err(|e| {
                let field = match e {
                    ChainError::DeltaBeforeAbsolute { .. } => "kind",
                    _ => "cframe",
                };
                DecodeError::at(
                    frame_path(r, i, field),
                    offset as u64 + if field == "cframe" { 3 } else { 0 },
                    DecodeErrorKind::Semantic(e.to_string()),
                )
            })?;
            time_ms += u64::from(f.dt_ms);
            frames.push(DecodedFrame {
                time_ms,
                dt_ms: f.dt_ms,
                pos_studs: pos,
                rot,
                absolute: f.kind == FrameKind::Absolute,
            });
            offset += f.encoded_len();
        }
        out.push(DecodedRecording {
            map_name: rec.map_name.clone(),
            total_duration_ms: u32::try_from(time_ms).unwrap_or(u32::MAX),
            frames,
        });
    }
    Ok(out)
}

/// Size in bytes the same recordings would take with every frame absolute (21 bytes each):
/// the baseline the delta encoding is measured against.
pub fn all_absolute_size(file: &SnapV13) -> usize {
    9 + file
        .recordings
        .iter()
        .map(|r| 7 + r.map_name.len() + 21 * r.frames.len())
        .sum::<usize>()
}

/// Turns a motion clip into one recording per joint: world position (metres times
/// `studs_per_metre`) and world rotation after forward kinematics, dt from the clip's frame
/// time rounded so that the running total stays on the clip's clock (frame 0 has dt 0).
/// Errors: more than 255 joints, a non-positive or non-finite `studs_per_metre`, or an encode
/// error of [`Recorder::add_recording`]. More than 65 535 frames is reported by
/// [`Recorder::finish`] (`recordings[r].num_frames`).
pub fn import_clip(clip: &Clip, studs_per_metre: f64) -> Result<Recorder, SnapError> {
    if !(studs_per_metre.is_finite() && studs_per_metre > 0.0) {
        return Err(SnapError::Input(format!(
            "studs per metre must be a positive number, got {studs_per_metre}"
        )));
    }
    let bones = clip.skeleton.bones();
    if bones.len() > 255 {
        return Err(SnapError::Input(format!(
            "{} joints, but a SNAP file holds at most 255 recordings",
            bones.len()
        )));
    }
    let n = clip.frame_count();
    let poses: Vec<_> = (0..n).map(|f| clip.world_pose(f)).collect();
    let dts = frame_dts_ms(clip.frame_time_s, n);
    let mut rec = Recorder::new();
    for (b, bone) in bones.iter().enumerate() {
        let samples: Vec<Sample> = poses
            .iter()
            .zip(&dts)
            .map(|(pose, dt)| Sample {
                dt_ms: *dt,
                pos_studs: (pose[b].position * studs_per_metre).as_vec3(),
                rot: pose[b].rotation.as_quat(),
            })
            .collect();
        rec.add_recording(&bone.name, &samples)?;
    }
    Ok(rec)
}

/// dt in ms of `n` frames spaced `frame_time_s` apart: frame 0 gets 0, frame i gets
/// `round(1000 i t) - round(1000 (i-1) t)`, so the sum is the clip's duration rounded to a ms.
pub fn frame_dts_ms(frame_time_s: f64, n: usize) -> Vec<u32> {
    let at = |i: usize| (i as f64 * frame_time_s * 1000.0).round().max(0.0) as u64;
    (0..n)
        .map(|i| {
            if i == 0 {
                0
            } else {
                u32::try_from(at(i) - at(i - 1)).unwrap_or(u32::MAX)
            }
        })
        .collect()
}

/// Worst errors of one recording against its source.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecordingError {
    /// The recording's map name (the joint name for imported clips).
    pub name: String,
    /// Largest distance between decoded and source positions, in studs.
    pub max_pos_error_studs: f64,
    /// Largest angle between decoded and source rotations, in degrees.
    pub max_rot_error_deg: f64,
    /// Largest allowed position error over this recording's positions, in studs
    /// ([`statepack_codecs::snap_delta::chain_pos_error_bound`], which grows with the distance from
    /// the origin).
    pub pos_bound_studs: f64,
    /// Frames whose position error exceeds the bound at that frame's own position, or whose
    /// rotation error exceeds [`statepack_codecs::snap_delta::CHAIN_ROT_ERROR_BOUND_RAD`].
    pub frames_over_bound: usize,
}

/// Compares decoded recordings with the clip they were imported from (recordings matched to
/// joints by name, frames by index). Errors: a recording with no joint of its name, or a
/// frame count that differs from the clip's.
pub fn verify_against_clip(
    decoded: &[DecodedRecording],
    clip: &Clip,
    studs_per_metre: f64,
) -> Result<Vec<RecordingError>, SnapError> {
    let n = clip.frame_count();
    let poses: Vec<_> = (0..n).map(|f| clip.world_pose(f)).collect();
    let rot_bound_deg = statepack_codecs::snap_delta::CHAIN_ROT_ERROR_BOUND_RAD.to_degrees();
    let mut out = Vec::with_capacity(decoded.len());
    for rec in decoded {
        let b = clip
            .skeleton
            .bones()
            .iter()
            .position(|bone| bone.name == rec.map_name)
            .ok_or_else(|| {
                SnapError::Input(format!(
                    "recording `{}` has no joint of that name in the motion",
                    rec.map_name
                ))
            })?;
        if rec.frames.len() != n {
            return Err(SnapError::Input(format!(
                "recording `{}` has {} frames but the motion has {n}",
                rec.map_name,
                rec.frames.len()
            )));
        }
        let mut e = RecordingError {
            name: rec.map_name.clone(),
            max_pos_error_studs: 0.0,
            max_rot_error_deg: 0.0,
            pos_bound_studs: 0.0,
            frames_over_bound: 0,
        };
        for (f, frame) in rec.frames.iter().enumerate() {
            let src_pos = poses[f][b].position * studs_per_metre;
            let src_rot: DQuat = poses[f][b].rotation;
            let dp = (frame.pos_studs.as_dvec3() - src_pos).length();
            let dr = angle_between_rad(frame.rot.as_dquat(), src_rot).to_degrees();
            let bound = statepack_codecs::snap_delta::chain_pos_error_bound(src_pos.as_vec3());
            e.max_pos_error_studs = e.max_pos_error_studs.max(dp);
            e.max_rot_error_deg = e.max_rot_error_deg.max(dr);
            e.pos_bound_studs = e.pos_bound_studs.max(bound);
            if dp > bound || dr > rot_bound_deg {
                e.frames_over_bound += 1;
            }
        }
        out.push(e);
    }
    Ok(out)
}

/// SNAP v1.3 in the format registry ([`crate::formats::FORMATS`]).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec::of::<SnapV13>();

/// SNAP v1.3's own parts of its registry entry; the rest is shared ([`crate::formats::FormatSpec::of`]).
impl crate::formats::Format for SnapV13 {
    const NAME: &'static str = "snap";
    const TITLE: &'static str = "SNAP v1.3";
    fn detect(b: &[u8]) -> bool {
        b.starts_with(b"SNAP") || (!b.is_empty() && VERSION_HEADER.starts_with(b))
    }
    fn decode_full(b: &[u8]) -> Result<(), DecodeError> {
        let raw = SnapV13::decode(b)?;
        reconstruct(&raw).map(|_| ())
    }
    fn samples() -> Vec<(String, Vec<u8>)> {
        sample_files()
    }
}

/// SNAP sample files built in code: the spec's example CFrame as a one-frame file (the
/// golden bytes of `docs/formats/snap.md`), a file with every frame shape and a large-motion
/// absolute frame, and the demo's file (the study walk, 30 recordings × 180 frames).
pub fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    // The spec's example: orientation -13.207°, 58.252°, 0° applied Y, X, Z.
    let rot = Quat::from_rotation_y(58.252f32.to_radians())
        * Quat::from_rotation_x((-13.207f32).to_radians());
    let mut rec = Recorder::new();
    let example = Sample {
        dt_ms: 0,
        // The spec's position, as the f32 values it prints.
        pos_studs: Vec3::new(-86.98088, 447.527_56, f32::from_bits(0xC358_1EC5)),
        rot,
    };
    if rec.add_recording("Workspace", &[example]).is_ok() {
        if let Ok(b) = rec.finish() {
            out.push(("spec-example-cframe".to_owned(), b));
        }
    }
    // Every frame shape: still frames, position-only, rotation-only, both, a jump.
    let mut samples = Vec::new();
    let mut pos = Vec3::new(10.0, 5.0, -3.0);
    let mut q = Quat::IDENTITY;
    for i in 0..130u32 {
        match i % 5 {
            1 => pos.x += 0.25,
            2 => q *= Quat::from_rotation_y(0.05),
            3 => {
                pos.z -= 0.5;
                q *= Quat::from_rotation_x(-0.03);
            }
            4 if i % 25 == 4 => pos.y += 50.0,
            _ => {}
        }
        samples.push(Sample {
            dt_ms: if i == 0 { 0 } else { 16 + i % 2 },
            pos_studs: pos,
            rot: q,
        });
    }
    let mut rec = Recorder::new();
    if rec.add_recording("Shapes", &samples).is_ok() && rec.add_recording("", &samples[..1]).is_ok()
    {
        if let Ok(b) = rec.finish() {
            out.push(("every-frame-shape".to_owned(), b));
        }
    }
    if let Ok(rec) = import_clip(
        &statepack_codecs::motion::walk::study_walk_clip(),
        DEFAULT_STUDS_PER_METRE,
    ) {
        if let Ok(b) = rec.finish() {
            out.push(("study-walk".to_owned(), b));
        }
    }
    out
}
