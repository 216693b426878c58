//! The keyframe track container of the animation keyframe-compression study
//! (`schema/study_tracks.ksy`, `docs/formats/study_tracks.md`): writing a
//! [`statepack_codecs::keyframe::Plan`] or a raw clip, and reading a file back into tracks that
//! can be sampled at any frame.
//!
//! Layout decisions where the study is silent (each pinned by a test in
//! `tests/study_tracks.rs`):
//!
//! - the study writes 16 zero header bytes; here they hold `STRK`, the layout, the
//!   reconstruction flags, the rate and the counts a reader needs (the sizes stay the same);
//! - a quantised constant scalar record stores its value as IEEE 754 binary16 bits in the two
//!   bytes where the study writes 0 (the study keeps the value only in memory);
//! - a track with a single key is written as a constant record (it means the same thing);
//! - a channel missing from a file reads as the identity (translation 0, scale 1, rotation
//!   identity); scalar records must come in increasing id order and rotation records in
//!   increasing bone order (so none appears twice), as the study writes them.

use crate::generated::study_tracks as raw;
use statepack_codecs::keyframe::{
    dequantize_quat, qnorm, quantize_quat, reconstruct, reconstruct_quat, Plan, Quat4, ScalarKind,
    SmallestThree,
};
use statepack_codecs::motion::{Clip, LocalTransform};
use statepack_codecs::quant::half;
use statepack_runtime::io::{
    DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath, PathSeg,
};

pub use raw::{StudyTracks, StudyTracksBody, TrackLayout};

/// Bytes before the first record or value: magic, layout and the body's header fields.
pub const HEADER_LEN: usize = 16;
/// The file signature.
pub const MAGIC: &[u8; 4] = b"STRK";

fn enc_err(path: &[PathSeg], msg: String) -> EncodeError {
    EncodeError::at(
        FieldPath::from_segments(path.iter().cloned()),
        EncodeErrorKind::Semantic(msg),
    )
}

fn u16_of(v: usize, what: &str) -> Result<u16, EncodeError> {
    u16::try_from(v).map_err(|_| {
        EncodeError::new(EncodeErrorKind::Semantic(format!(
            "{what} {v} does not fit in u16"
        )))
    })
}

fn fps_u16(frame_time_s: f64) -> Result<u16, EncodeError> {
    let fps = (1.0 / frame_time_s).round();
    if (1.0..=65535.0).contains(&fps) {
        Ok(fps as u16)
    } else {
        Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
            "frame rate {fps} per second does not fit in u16"
        ))))
    }
}

/// Converts to IEEE 754 binary16 bits, rounding to nearest with ties to even
/// ([`statepack_codecs::quant::half::STUDY`]).
///
/// # Errors
///
/// A message when the value is not finite or its magnitude exceeds 65504 (the largest
/// binary16 number).
pub fn f16_bits(v: f64) -> Result<u16, String> {
    half::STUDY.encode(v).map_err(|e| e.to_string())
}

/// The value of IEEE 754 binary16 bits (infinities and NaN included).
pub fn f16_value(bits: u16) -> f64 {
    half::STUDY.decode(bits)
}

/// The ten channels of a bone in a raw record, in stored order.
const RAW_CHANNELS: [&str; 10] = [
    "translation x",
    "translation y",
    "translation z",
    "rotation x",
    "rotation y",
    "rotation z",
    "rotation w",
    "scale x",
    "scale y",
    "scale z",
];

/// The raw baseline (the study's row 1): every channel of every bone at every frame as
/// float32, 10 values per bone per frame after a 16-byte header.
///
/// # Errors
///
/// When the frame count, bone count or rate does not fit in u16, or a value is not finite as
/// float32 (NaN, an infinity, or a finite f64 beyond float32's range): the error names the
/// frame, the bone and the channel. (A [`Clip`] built with [`Clip::new`] has finite values;
/// one built field by field may not.)
pub fn encode_raw(clip: &Clip) -> Result<Vec<u8>, EncodeError> {
    let mut values = Vec::with_capacity(clip.frame_count() * clip.skeleton.len() * 10);
    for (f, row) in clip.frames.iter().enumerate() {
        for (b, t) in row.iter().enumerate() {
            let start = values.len();
            values.extend(t.translation.to_array().map(|x| x as f32));
            values.extend(t.rotation.to_array().map(|x| x as f32));
            values.extend(t.scale.to_array().map(|x| x as f32));
            if let Some(c) = values[start..].iter().position(|v| !v.is_finite()) {
                return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                    "frame {f}, bone {b}: {} is {}, not a finite float32",
                    RAW_CHANNELS[c],
                    values[start + c]
                ))));
            }
        }
    }
    let file = StudyTracks {
        layout: TrackLayout::Raw,
        body: StudyTracksBody::RawBody(raw::RawBody {
            flags: 0,
            fps: fps_u16(clip.frame_time_s)?,
            num_frames: u16_of(clip.frame_count(), "frame count")?,
            num_bones: u16_of(clip.skeleton.len(), "bone count")?,
            reserved: 0,
            values,
        }),
    };
    file.encode()
}

/// The raw file of a [`Plan`]: float32 records, or quantised records when the plan quantised.
///
/// # Errors
///
/// When a count, frame index or id does not fit in u16, or a quantised constant is outside
/// the binary16 range (the error names the record).
pub fn raw_from_plan(plan: &Plan) -> Result<StudyTracks, EncodeError> {
    let clip = &plan.decoded;
    let flags = u8::from(plan.options.cubic);
    let fps = fps_u16(clip.frame_time_s)?;
    let num_frames = u16_of(clip.frame_count(), "frame count")?;
    let num_bones = u16_of(clip.skeleton.len(), "bone count")?;
    let frames16 = |keys: &[usize]| -> Result<Vec<u16>, EncodeError> {
        keys.iter().map(|&k| u16_of(k, "frame index")).collect()
    };
    if plan.options.quantize {
        let mut scalars = Vec::with_capacity(plan.scalars.len());
        for (i, s) in plan.scalars.iter().enumerate() {
            let path = [PathSeg::Field("scalars"), PathSeg::Index(i)];
            let q = s
                .quant
                .as_ref()
                .ok_or_else(|| enc_err(&path, "quantised plan without quantised values".into()))?;
            let konst = s.constant || s.keys.len() == 1;
            scalars.push(if konst {
                raw::ScalarQ {
                    id: s.channel.id,
                    num_keys: 1,
                    constant_half: Some(f16_bits(q.dec[0]).map_err(|m| enc_err(&path, m))?),
                    lo: None,
                    range: None,
                    keys: None,
                }
            } else {
                let frames = frames16(&s.keys)?;
                raw::ScalarQ {
                    id: s.channel.id,
                    num_keys: u16_of(s.keys.len(), "key count")?,
                    constant_half: None,
                    lo: Some(q.lo as f32),
                    range: Some(q.range as f32),
                    keys: Some(
                        frames
                            .into_iter()
                            .zip(&q.enc)
                            .map(|(frame, &value)| raw::KeyQ { frame, value })
                            .collect(),
                    ),
                }
            });
        }
        let mut rotations = Vec::with_capacity(plan.rotations.len());
        for r in &plan.rotations {
            let bone = u16_of(r.track.bone, "bone index")?;
            let konst = r.constant || r.keys.len() == 1;
            let packed = |k: usize| quantize_quat(&r.track.q[k]).pack();
            rotations.push(if konst {
                raw::RotationPacked {
                    bone,
                    num_keys: 1,
                    constant_packed: Some(packed(r.keys[0])),
                    keys: None,
                }
            } else {
                raw::RotationPacked {
                    bone,
                    num_keys: u16_of(r.keys.len(), "key count")?,
                    constant_packed: None,
                    keys: Some(
                        r.keys
                            .iter()
                            .map(|&k| {
                                Ok(raw::KeyRotPacked {
                                    frame: u16_of(k, "frame index")?,
                                    packed: packed(k),
                                })
                            })
                            .collect::<Result<_, EncodeError>>()?,
                    ),
                }
            });
        }
        Ok(StudyTracks {
            layout: TrackLayout::QuantizedKeys,
            body: StudyTracksBody::QuantizedBody(raw::QuantizedBody {
                flags,
                fps,
                num_frames,
                num_bones,
                scalars,
                rotations,
            }),
        })
    } else {
        let mut scalars = Vec::with_capacity(plan.scalars.len());
        for s in &plan.scalars {
            let v = &s.channel.values;
            let konst = s.constant || s.keys.len() == 1;
            scalars.push(if konst {
                raw::ScalarF32 {
                    id: s.channel.id,
                    num_keys: 1,
                    constant_value: Some(v.get(s.keys[0]).copied().unwrap_or(0.0) as f32),
                    keys: None,
                }
            } else {
                raw::ScalarF32 {
                    id: s.channel.id,
                    num_keys: u16_of(s.keys.len(), "key count")?,
                    constant_value: None,
                    keys: Some(
                        s.keys
                            .iter()
                            .map(|&k| {
                                Ok(raw::KeyF32 {
                                    frame: u16_of(k, "frame index")?,
                                    value: v[k] as f32,
                                })
                            })
                            .collect::<Result<_, EncodeError>>()?,
                    ),
                }
            });
        }
        let mut rotations = Vec::with_capacity(plan.rotations.len());
        for r in &plan.rotations {
            let bone = u16_of(r.track.bone, "bone index")?;
            let konst = r.constant || r.keys.len() == 1;
            let f4 = |k: usize| r.track.q[k].map(|x| x as f32);
            rotations.push(if konst {
                raw::RotationF32 {
                    bone,
                    num_keys: 1,
                    constant_q: Some(f4(r.keys[0])),
                    keys: None,
                }
            } else {
                raw::RotationF32 {
                    bone,
                    num_keys: u16_of(r.keys.len(), "key count")?,
                    constant_q: None,
                    keys: Some(
                        r.keys
                            .iter()
                            .map(|&k| {
                                Ok(raw::KeyRotF32 {
                                    frame: u16_of(k, "frame index")?,
                                    q: f4(k),
                                })
                            })
                            .collect::<Result<_, EncodeError>>()?,
                    ),
                }
            });
        }
        Ok(StudyTracks {
            layout: TrackLayout::FloatKeys,
            body: StudyTracksBody::FloatBody(raw::FloatBody {
                flags,
                fps,
                num_frames,
                num_bones,
                scalars,
                rotations,
            }),
        })
    }
}

/// Encodes a [`Plan`] (see [`raw_from_plan`]).
///
/// # Errors
///
/// As [`raw_from_plan`].
pub fn encode_plan(plan: &Plan) -> Result<Vec<u8>, EncodeError> {
    raw_from_plan(plan)?.encode()
}

/// Byte sizes of a plan's records without the header, split into constant records and
/// animated records (the study's gzip-by-record-type analysis concatenates each group).
///
/// # Errors
///
/// As [`raw_from_plan`].
pub fn record_bytes(plan: &Plan) -> Result<(Vec<u8>, Vec<u8>), EncodeError> {
    let file = raw_from_plan(plan)?;
    let (mut c, mut a) = (
        statepack_runtime::io::ByteWriter::new(),
        statepack_runtime::io::ByteWriter::new(),
    );
    match &file.body {
        StudyTracksBody::FloatBody(b) => {
            for r in &b.scalars {
                r.write_to(if r.num_keys == 1 { &mut c } else { &mut a })?;
            }
            for r in &b.rotations {
                r.write_to(if r.num_keys == 1 { &mut c } else { &mut a })?;
            }
        }
        StudyTracksBody::QuantizedBody(b) => {
            for r in &b.scalars {
                r.write_to(if r.num_keys == 1 { &mut c } else { &mut a })?;
            }
            for r in &b.rotations {
                r.write_to(if r.num_keys == 1 { &mut c } else { &mut a })?;
            }
        }
        StudyTracksBody::RawBody(_) => {}
    }
    Ok((c.into_bytes(), a.into_bytes()))
}

/// One decoded scalar channel: key frames and values (one key for a constant channel).
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarKeys {
    /// Translation or scale.
    pub kind: ScalarKind,
    /// Bone index.
    pub bone: usize,
    /// Axis 0..3.
    pub axis: usize,
    /// Ascending key frames.
    pub frames: Vec<usize>,
    /// Value per key.
    pub values: Vec<f64>,
}

/// One decoded rotation track.
#[derive(Debug, Clone, PartialEq)]
pub struct RotationKeys {
    /// Bone index.
    pub bone: usize,
    /// Ascending key frames.
    pub frames: Vec<usize>,
    /// Rotation per key, `[x, y, z, w]`.
    pub q: Vec<Quat4>,
}

/// A decoded study file: tracks that reconstruct any frame.
#[derive(Debug, Clone, PartialEq)]
pub struct DecodedTracks {
    /// Frames per second.
    pub fps: u16,
    /// Frame count.
    pub num_frames: usize,
    /// Bone count.
    pub num_bones: usize,
    /// Cubic Hermite reconstruction (flag bit 0) instead of linear.
    pub cubic: bool,
    /// Scalar channels present in the file.
    pub scalars: Vec<ScalarKeys>,
    /// Rotation tracks present in the file.
    pub rotations: Vec<RotationKeys>,
    /// For a raw file: every value, `[frame][bone][10]`, flattened.
    pub raw_values: Option<Vec<f32>>,
}

impl DecodedTracks {
    /// Every frame's local transforms, `[frame][bone]` (allocates `num_frames × num_bones`
    /// transforms; channels missing from the file hold the identity).
    pub fn to_frames(&self) -> Vec<Vec<LocalTransform>> {
        let n = self.num_frames;
        let mut frames = vec![vec![LocalTransform::IDENTITY; self.num_bones]; n];
        if let Some(v) = &self.raw_values {
            for (f, row) in frames.iter_mut().enumerate() {
                for (b, t) in row.iter_mut().enumerate() {
                    let o = (f * self.num_bones + b) * 10;
                    let g = |i: usize| f64::from(v[o + i]);
                    t.translation = glam::DVec3::new(g(0), g(1), g(2));
                    t.rotation = glam::DQuat::from_xyzw(g(3), g(4), g(5), g(6));
                    t.scale = glam::DVec3::new(g(7), g(8), g(9));
                }
            }
            return frames;
        }
        for s in &self.scalars {
            let rec = reconstruct(n, &s.frames, &s.values, self.cubic);
            for (f, v) in rec.into_iter().enumerate() {
                let t = &mut frames[f][s.bone];
                match s.kind {
                    ScalarKind::Translation => t.translation[s.axis] = v,
                    ScalarKind::Scale => t.scale[s.axis] = v,
                }
            }
        }
        for r in &self.rotations {
            let rec = if r.q.len() == 1 {
                vec![qnorm(&r.q[0]); n]
            } else {
                reconstruct_quat(n, &r.frames, &r.q, self.cubic)
            };
            for (f, q) in rec.into_iter().enumerate() {
                frames[f][r.bone].rotation = glam::DQuat::from_array(q);
            }
        }
        frames
    }

    /// The local transforms of every bone at frame `frame` (`[bone]`, channels missing from
    /// the file hold the identity), computed from the keys around that frame alone: the
    /// same values as `to_frames()[frame]` without building the other frames (see
    /// [`DecodedTracks::bone_at`]). `None` when `frame` is not below
    /// [`DecodedTracks::num_frames`].
    pub fn sample_frame(&self, frame: usize) -> Option<Vec<LocalTransform>> {
        if frame >= self.num_frames {
            return None;
        }
        (0..self.num_bones)
            .map(|b| self.bone_at(b, frame))
            .collect()
    }

    /// Bone `bone`'s local transform at frame `frame` (translation in metres, rotation as a
    /// unit quaternion, scale), from the keys around that frame alone: linear or cubic
    /// Hermite between keys as the file's flag says, each rotation component reconstructed
    /// then the quaternion renormalised, channels missing from the file the identity; the
    /// same value as `to_frames()[frame][bone]`. `None` when the frame or the bone is not
    /// below the file's counts.
    pub fn bone_at(&self, bone: usize, frame: usize) -> Option<LocalTransform> {
        if frame >= self.num_frames || bone >= self.num_bones {
            return None;
        }
        let mut t = LocalTransform::IDENTITY;
        if let Some(v) = &self.raw_values {
            let o = (frame * self.num_bones + bone) * 10;
            let c = v.get(o..o + 10)?;
            let g = |i: usize| f64::from(c[i]);
            t.translation = glam::DVec3::new(g(0), g(1), g(2));
            t.rotation = glam::DQuat::from_xyzw(g(3), g(4), g(5), g(6));
            t.scale = glam::DVec3::new(g(7), g(8), g(9));
            return Some(t);
        }
        // Records are in increasing channel id (bone) order, as the reader checks.
        let first = self.scalars.partition_point(|s| s.bone < bone);
        for s in self.scalars[first..].iter().take_while(|s| s.bone == bone) {
            let v = value_at(&s.frames, frame, self.cubic, |k| s.values[k]);
            match s.kind {
                ScalarKind::Translation => t.translation[s.axis] = v,
                ScalarKind::Scale => t.scale[s.axis] = v,
            }
        }
        if let Ok(i) = self.rotations.binary_search_by_key(&bone, |r| r.bone) {
            let r = &self.rotations[i];
            let q = if r.q.len() == 1 {
                qnorm(&r.q[0])
            } else {
                let c = |i: usize| value_at(&r.frames, frame, self.cubic, |k| r.q[k][i]);
                qnorm(&[c(0), c(1), c(2), c(3)])
            };
            t.rotation = glam::DQuat::from_array(q);
        }
        Some(t)
    }

    /// The bones the file stores something for, ascending: every bone of a raw file that
    /// has frames, else the bones some scalar or rotation record names (the others hold the
    /// identity at every frame). At most one entry per record, so the list stays in
    /// proportion to the file whatever bone count its header claims.
    pub fn stored_bones(&self) -> Vec<usize> {
        if self.raw_values.is_some() {
            return if self.num_frames == 0 {
                Vec::new()
            } else {
                (0..self.num_bones).collect()
            };
        }
        let mut v: Vec<usize> = self
            .scalars
            .iter()
            .map(|s| s.bone)
            .chain(self.rotations.iter().map(|r| r.bone))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The frames `from..from + count` that exist (`[frame][bone]`, as
    /// [`DecodedTracks::sample_frame`] gives each): at most `count × num_bones` transforms,
    /// whatever the clip's length, so a viewer or a player can walk a long clip a window at
    /// a time. Empty when `from` is not below [`DecodedTracks::num_frames`].
    pub fn sample_window(&self, from: usize, count: usize) -> Vec<Vec<LocalTransform>> {
        let end = from.saturating_add(count).min(self.num_frames);
        (from..end).filter_map(|f| self.sample_frame(f)).collect()
    }

    /// Where bone `bone`'s rotation at frame `frame` comes from: the index of its rotation
    /// record (`body.rotations[i]`) and the index of the key at or before the frame in that
    /// record (`keys[k]`; `None` for a constant record, which has no keys). `None` when the
    /// file has no rotation record for the bone (a raw file, or a bone whose rotation is
    /// the identity).
    pub fn rotation_key_at(&self, bone: usize, frame: usize) -> Option<(usize, Option<usize>)> {
        let i = self
            .rotations
            .binary_search_by_key(&bone, |r| r.bone)
            .ok()?;
        Some((i, key_at(&self.rotations[i].frames, frame)))
    }

    /// Where channel `axis` (0..3) of bone `bone`'s translation (or scale) at frame `frame`
    /// comes from: the index of its scalar record (`body.scalars[i]`) and the index of the
    /// key at or before the frame (`None` for a constant record). `None` when the file has
    /// no record for that channel.
    pub fn scalar_key_at(
        &self,
        kind: ScalarKind,
        bone: usize,
        axis: usize,
        frame: usize,
    ) -> Option<(usize, Option<usize>)> {
        let i = self
            .scalars
            .iter()
            .position(|s| s.kind == kind && s.bone == bone && s.axis == axis)?;
        Some((i, key_at(&self.scalars[i].frames, frame)))
    }
}

/// The key at or before `frame` among ascending key frames `keys` (`None` for a single key,
/// a constant).
fn key_at(keys: &[usize], frame: usize) -> Option<usize> {
    if keys.len() <= 1 {
        return None;
    }
    Some(keys.partition_point(|&k| k <= frame).saturating_sub(1))
}

/// The value at frame `f` of a channel with ascending key frames `keys` (first 0) and key
/// values `v(k)`, as [`reconstruct`] gives it for that frame: the segment starting at the
/// last key at or before `f` (the last segment for the last key), linear or cubic Hermite
/// with non-uniform Catmull-Rom tangents; a single key holds its value, frames past the
/// last key are 0.
fn value_at(keys: &[usize], f: usize, cubic: bool, v: impl Fn(usize) -> f64) -> f64 {
    match keys.len() {
        0 => return 0.0,
        1 => return v(0),
        _ => {}
    }
    let last = keys.len() - 1;
    if f < keys[0] || f > keys[last] {
        return 0.0;
    }
    let k = keys
        .partition_point(|&t| t <= f)
        .saturating_sub(1)
        .min(last - 1);
    let slope = |i: usize| -> f64 {
        if i == 0 {
            (v(1) - v(0)) / (keys[1] as f64 - keys[0] as f64)
        } else if i == last {
            (v(i) - v(i - 1)) / (keys[i] as f64 - keys[i - 1] as f64)
        } else {
            (v(i + 1) - v(i - 1)) / (keys[i + 1] as f64 - keys[i - 1] as f64)
        }
    };
    let (t0, t1) = (keys[k], keys[k + 1]);
    let h = (t1 - t0) as f64;
    let (p0, p1) = (v(k), v(k + 1));
    let u = (f - t0) as f64 / h;
    if cubic {
        let (m0, m1) = (slope(k) * h, slope(k + 1) * h);
        (2.0 * u * u * u - 3.0 * u * u + 1.0) * p0
            + (u * u * u - 2.0 * u * u + u) * m0
            + (-2.0 * u * u * u + 3.0 * u * u) * p1
            + (u * u * u - u * u) * m1
    } else {
        p0 + (p1 - p0) * u
    }
}

fn semantic(path: Vec<PathSeg>, offset: usize, msg: String) -> DecodeError {
    DecodeError::at(
        FieldPath::from_segments(path),
        offset as u64,
        DecodeErrorKind::Semantic(msg),
    )
}

/// Checks one record's keys: ascending, first frame 0, last `num_frames - 1`.
fn check_frames(
    frames: &[usize],
    num_frames: usize,
    path: impl Fn() -> Vec<PathSeg>,
    offset: usize,
) -> Result<(), DecodeError> {
    if frames.len() == 1 {
        return Ok(());
    }
    if frames.first() != Some(&0) || frames.last() != Some(&(num_frames.wrapping_sub(1))) {
        return Err(semantic(
            path(),
            offset,
            format!(
                "keys must start at frame 0 and end at frame {} (the clip has {num_frames} frames)",
                num_frames.wrapping_sub(1) as isize
            ),
        ));
    }
    if let Some(i) = frames.windows(2).position(|w| w[0] >= w[1]) {
        return Err(semantic(
            path(),
            offset,
            format!(
                "key frames must increase: key {} is at frame {}, key {} at frame {}",
                i,
                frames[i],
                i + 1,
                frames[i + 1]
            ),
        ));
    }
    Ok(())
}

/// Decodes a raw file into tracks, checking what the layout cannot state: channel ids and
/// bones below the header's bone count, each channel at most once, key frames increasing
/// from 0 to the last frame. Allocates only in proportion to the input.
///
/// # Errors
///
/// A [`DecodeError`] naming the record (`body.scalars[3]`) and its byte offset.
pub fn reconstruct_tracks(file: &StudyTracks) -> Result<DecodedTracks, DecodeError> {
    let mut offset = HEADER_LEN;
    match &file.body {
        StudyTracksBody::RawBody(b) => {
            if let Some(i) = b.values.iter().position(|v| !v.is_finite()) {
                let per_frame = usize::from(b.num_bones) * 10;
                return Err(semantic(
                    vec![
                        PathSeg::Field("body"),
                        PathSeg::Field("values"),
                        PathSeg::Index(i),
                    ],
                    HEADER_LEN + 4 * i,
                    format!(
                        "frame {}, bone {}: {} is {}, not a finite number",
                        i / per_frame.max(1),
                        i % per_frame.max(1) / 10,
                        RAW_CHANNELS[i % 10],
                        b.values[i]
                    ),
                ));
            }
            Ok(DecodedTracks {
                fps: b.fps,
                num_frames: usize::from(b.num_frames),
                num_bones: usize::from(b.num_bones),
                cubic: false,
                scalars: Vec::new(),
                rotations: Vec::new(),
                raw_values: Some(b.values.clone()),
            })
        }
        StudyTracksBody::FloatBody(b) => {
            let (nf, nb) = (usize::from(b.num_frames), usize::from(b.num_bones));
            let mut seen: Option<usize> = None;
            let mut scalars = Vec::with_capacity(b.scalars.len());
            for (i, r) in b.scalars.iter().enumerate() {
                let path = || {
                    vec![
                        PathSeg::Field("body"),
                        PathSeg::Field("scalars"),
                        PathSeg::Index(i),
                    ]
                };
                let (frames, values) = match (&r.constant_value, &r.keys) {
                    (Some(v), _) => (vec![0], vec![f64::from(*v)]),
                    (None, Some(k)) => (
                        k.iter().map(|k| usize::from(k.frame)).collect(),
                        k.iter().map(|k| f64::from(k.value)).collect(),
                    ),
                    (None, None) => (vec![0], vec![0.0]),
                };
                scalars.push(scalar_keys(
                    r.id, nb, &mut seen, frames, values, nf, path, offset,
                )?);
                offset += r.encoded_len();
            }
            let mut seen_r: Option<usize> = None;
            let mut rotations = Vec::with_capacity(b.rotations.len());
            for (i, r) in b.rotations.iter().enumerate() {
                let path = || {
                    vec![
                        PathSeg::Field("body"),
                        PathSeg::Field("rotations"),
                        PathSeg::Index(i),
                    ]
                };
                let (frames, q): (Vec<usize>, Vec<Quat4>) = match (&r.constant_q, &r.keys) {
                    (Some(q), _) => (vec![0], vec![q.map(f64::from)]),
                    (None, Some(k)) => (
                        k.iter().map(|k| usize::from(k.frame)).collect(),
                        k.iter().map(|k| k.q.map(f64::from)).collect(),
                    ),
                    (None, None) => (vec![0], vec![[0.0, 0.0, 0.0, 1.0]]),
                };
                rotations.push(rotation_keys(
                    r.bone,
                    nb,
                    &mut seen_r,
                    frames,
                    q,
                    nf,
                    path,
                    offset,
                )?);
                offset += r.encoded_len();
            }
            Ok(DecodedTracks {
                fps: b.fps,
                num_frames: nf,
                num_bones: nb,
                cubic: b.flags & 1 != 0,
                scalars,
                rotations,
                raw_values: None,
            })
        }
        StudyTracksBody::QuantizedBody(b) => {
            let (nf, nb) = (usize::from(b.num_frames), usize::from(b.num_bones));
            let mut seen: Option<usize> = None;
            let mut scalars = Vec::with_capacity(b.scalars.len());
            for (i, r) in b.scalars.iter().enumerate() {
                let path = || {
                    vec![
                        PathSeg::Field("body"),
                        PathSeg::Field("scalars"),
                        PathSeg::Index(i),
                    ]
                };
                let (frames, values) = match (&r.constant_half, &r.keys) {
                    (Some(h), _) => (vec![0], vec![f16_value(*h)]),
                    (None, Some(k)) => {
                        let lo = f64::from(r.lo.unwrap_or(0.0));
                        let range = f64::from(r.range.unwrap_or(0.0));
                        (
                            k.iter().map(|k| usize::from(k.frame)).collect(),
                            k.iter()
                                .map(|k| lo + f64::from(k.value) / 65535.0 * range)
                                .collect(),
                        )
                    }
                    (None, None) => (vec![0], vec![0.0]),
                };
                if values.iter().any(|v| !v.is_finite()) {
                    return Err(semantic(path(), offset, "value is not finite".into()));
                }
                scalars.push(scalar_keys(
                    r.id, nb, &mut seen, frames, values, nf, path, offset,
                )?);
                offset += r.encoded_len();
            }
            let mut seen_r: Option<usize> = None;
            let mut rotations = Vec::with_capacity(b.rotations.len());
            for (i, r) in b.rotations.iter().enumerate() {
                let path = || {
                    vec![
                        PathSeg::Field("body"),
                        PathSeg::Field("rotations"),
                        PathSeg::Index(i),
                    ]
                };
                let deq = |p: u32| dequantize_quat(SmallestThree::unpack(p));
                let (frames, q): (Vec<usize>, Vec<Quat4>) = match (&r.constant_packed, &r.keys) {
                    (Some(p), _) => (vec![0], vec![deq(*p)]),
                    (None, Some(k)) => (
                        k.iter().map(|k| usize::from(k.frame)).collect(),
                        k.iter().map(|k| deq(k.packed)).collect(),
                    ),
                    (None, None) => (vec![0], vec![[0.0, 0.0, 0.0, 1.0]]),
                };
                rotations.push(rotation_keys(
                    r.bone,
                    nb,
                    &mut seen_r,
                    frames,
                    q,
                    nf,
                    path,
                    offset,
                )?);
                offset += r.encoded_len();
            }
            Ok(DecodedTracks {
                fps: b.fps,
                num_frames: nf,
                num_bones: nb,
                cubic: b.flags & 1 != 0,
                scalars,
                rotations,
                raw_values: None,
            })
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn scalar_keys(
    id: u16,
    nb: usize,
    seen: &mut Option<usize>,
    frames: Vec<usize>,
    values: Vec<f64>,
    nf: usize,
    path: impl Fn() -> Vec<PathSeg>,
    offset: usize,
) -> Result<ScalarKeys, DecodeError> {
    let id = usize::from(id);
    if id >= nb * 6 {
        return Err(semantic(
            path(),
            offset,
            format!("channel id {id} is not below 6 × {nb} bones"),
        ));
    }
    // Records come in increasing order, so no id appears twice and nothing is allocated.
    if let Some(prev) = *seen {
        if id <= prev {
            return Err(semantic(
                path(),
                offset,
                format!(
                    "channel id {id} does not follow {prev}: records must be in increasing order"
                ),
            ));
        }
    }
    *seen = Some(id);
    check_frames(&frames, nf, &path, offset)?;
    let (bone, rest) = (id / 6, id % 6);
    Ok(ScalarKeys {
        kind: if rest < 3 {
            ScalarKind::Translation
        } else {
            ScalarKind::Scale
        },
        bone,
        axis: rest % 3,
        frames,
        values,
    })
}

#[allow(clippy::too_many_arguments)]
fn rotation_keys(
    bone: u16,
    nb: usize,
    seen: &mut Option<usize>,
    frames: Vec<usize>,
    q: Vec<Quat4>,
    nf: usize,
    path: impl Fn() -> Vec<PathSeg>,
    offset: usize,
) -> Result<RotationKeys, DecodeError> {
    let bone = usize::from(bone);
    if bone >= nb {
        return Err(semantic(
            path(),
            offset,
            format!("bone {bone} is not below the bone count {nb}"),
        ));
    }
    // Records come in increasing order, so no id appears twice and nothing is allocated.
    if let Some(prev) = *seen {
        if bone <= prev {
            return Err(semantic(
                path(),
                offset,
                format!("bone {bone} does not follow {prev}: records must be in increasing order"),
            ));
        }
    }
    *seen = Some(bone);
    check_frames(&frames, nf, &path, offset)?;
    if q.iter().flatten().any(|x| !x.is_finite()) {
        return Err(semantic(path(), offset, "rotation is not finite".into()));
    }
    Ok(RotationKeys { bone, frames, q })
}

/// Decodes bytes into tracks ([`StudyTracks::decode`] then [`reconstruct_tracks`]).
///
/// # Errors
///
/// The raw layer's or [`reconstruct_tracks`]'s [`DecodeError`].
pub fn read(bytes: &[u8]) -> Result<DecodedTracks, DecodeError> {
    reconstruct_tracks(&StudyTracks::decode(bytes)?)
}

/// The study's track container in the format registry ([`crate::formats::FORMATS`]).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec::of::<StudyTracks>();

/// The study track container's own parts of its registry entry; the rest is shared ([`crate::formats::FormatSpec::of`]).
impl crate::formats::Format for StudyTracks {
    const NAME: &'static str = "study-tracks";
    const TITLE: &'static str = "study keyframe tracks";
    fn detect(b: &[u8]) -> bool {
        b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b))
    }
    fn decode_full(b: &[u8]) -> Result<(), DecodeError> {
        read(b).map(|_| ())
    }
    fn samples() -> Vec<(String, Vec<u8>)> {
        sample_files()
    }
}

/// Sample files built in code from the first 24 frames of the study's walk (generated in
/// code, no fixture needed): raw, float32 linear keys at 1 mm, quantised cubic keys at 1 mm.
pub fn sample_files() -> Vec<(String, Vec<u8>)> {
    use statepack_codecs::keyframe::{plan, PlanOptions};
    let mut clip = statepack_codecs::motion::walk::study_walk_clip();
    clip.frames.truncate(24);
    let mut out = Vec::new();
    if let Ok(b) = encode_raw(&clip) {
        out.push(("walk24-raw".to_owned(), b));
    }
    for (name, cubic, quant) in [
        ("walk24-linear", false, false),
        ("walk24-quantized-cubic", true, true),
    ] {
        if let Ok(b) = encode_plan(&plan(&clip, PlanOptions::at_mm(1.0, cubic, quant))) {
            out.push((name.to_owned(), b));
        }
    }
    out
}
