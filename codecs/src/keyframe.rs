//! The keyframe-compression pipeline of the animation keyframe-compression study
//! (`specs/animation-keyframe-compression.txt`), step for step, so that its tables come out the
//! same from the same clips.
//!
//! A [`Clip`] is split into channels ([`channels`]): per bone three translation and three scale
//! scalars (ids `bone × 6 + axis` and `bone × 6 + 3 + axis`) and one rotation track, whose
//! quaternions are hemisphere-aligned (a key whose dot product with the previous one is negative
//! is negated, so every component curve is continuous). [`plan`] then, per channel:
//!
//! 1. detects constant channels: a scalar whose range (max − min) is below
//!    [`SCALAR_CONSTANT_RANGE`] (1e-7, in the channel's unit), a rotation track whose every key
//!    is within [`QUAT_CONSTANT_DEG`] (1e-4°) of its first key;
//! 2. reduces keyframes by refinement ([`fit`]): keys at the first and last frame, reconstruct,
//!    insert the frame with the largest error, until every frame is within the tolerance.
//!    Reconstruction is linear or cubic Hermite with non-uniform Catmull-Rom tangents
//!    ([`reconstruct`]); rotation tracks are reconstructed per component and renormalised. The
//!    scalar tolerance is in metres (applied to scale channels as is), the rotation tolerance in
//!    degrees, derived from millimetres through a lever of [`STUDY_LEVER_M`] (0.35 m,
//!    [`mm_to_deg`]);
//! 3. optionally quantises: scalar keys to 16 bits over their own min/max ([`quantize_scalar`]),
//!    rotations to smallest-three with 10 bits per kept component ([`quantize_quat`]);
//! 4. reconstructs every frame of the clip from what was kept ([`Plan::decoded`]), and
//!    [`fk_error`] measures the worst world-space joint displacement and rotation angle after
//!    forward kinematics against the original.
//!
//! Numbers are `f64` throughout, and every formula is evaluated in the study's order so that
//! keyframe choices (which depend on exact comparisons with the tolerance) match. The study
//! reconstructs from `f64` values, not from the `f32` its files store; the figures here do the
//! same. [`gzip_len`] is the size after gzip at level 6 (flate2's deflate, which may differ from
//! zlib's by a few bytes).

use std::f64::consts::PI;
use std::io::Write;

use glam::{DQuat, DVec3};

use crate::motion::{forward_kinematics, Clip, LocalTransform};

/// Lever arm that turns a distance tolerance into an angle, metres (upper arm plus forearm).
pub const STUDY_LEVER_M: f64 = 0.35;
/// A scalar channel whose range is below this is constant (study: `hi - lo < 1e-7`).
pub const SCALAR_CONSTANT_RANGE: f64 = 1e-7;
/// A rotation track whose keys are all within this many degrees of its first key is constant.
pub const QUAT_CONSTANT_DEG: f64 = 1e-4;

const R2D: f64 = 180.0 / PI;

/// A quaternion as `[x, y, z, w]`.
pub type Quat4 = [f64; 4];

/// Angular tolerance in degrees for a distance tolerance in millimetres, through the study's
/// 0.35 m lever: `mm / 1000 / 0.35 × 180 / π` (1 mm → 0.164°).
pub fn mm_to_deg(mm: f64) -> f64 {
    (mm / 1000.0 / STUDY_LEVER_M) * 180.0 / PI
}

/// What a scalar channel holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    /// Local translation, metres.
    Translation,
    /// Local scale, dimensionless.
    Scale,
}

/// One scalar channel of a clip: one axis of a bone's translation or scale, every frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarChannel {
    /// Record id: `bone × 6 + axis` for translation, `bone × 6 + 3 + axis` for scale.
    pub id: u16,
    /// Bone index.
    pub bone: usize,
    /// Translation or scale.
    pub kind: ScalarKind,
    /// Axis 0..3 (x, y, z).
    pub axis: usize,
    /// The value at every frame.
    pub values: Vec<f64>,
}

/// One rotation track: a bone's local rotation at every frame, hemisphere-aligned.
#[derive(Debug, Clone, PartialEq)]
pub struct RotationTrack {
    /// Bone index (the record id).
    pub bone: usize,
    /// `[x, y, z, w]` per frame; consecutive quaternions have a non-negative dot product.
    pub q: Vec<Quat4>,
}

/// Splits a clip into its scalar channels (bone-major: translation x, y, z then scale x, y, z)
/// and its hemisphere-aligned rotation tracks (one per bone).
///
/// Bone indices above 10 922 would not fit the 16-bit record id; ids are then saturated and a
/// writer refuses them.
pub fn channels(clip: &Clip) -> (Vec<ScalarChannel>, Vec<RotationTrack>) {
    let nb = clip.skeleton.len();
    let mut scalars = Vec::with_capacity(nb * 6);
    let mut rotations = Vec::with_capacity(nb);
    for bone in 0..nb {
        for (kind, base) in [(ScalarKind::Translation, 0), (ScalarKind::Scale, 3)] {
            for axis in 0..3 {
                let values = clip
                    .frames
                    .iter()
                    .map(|row| match kind {
                        ScalarKind::Translation => row[bone].translation[axis],
                        ScalarKind::Scale => row[bone].scale[axis],
                    })
                    .collect();
                let id = u16::try_from(bone * 6 + base + axis).unwrap_or(u16::MAX);
                scalars.push(ScalarChannel {
                    id,
                    bone,
                    kind,
                    axis,
                    values,
                });
            }
        }
    }
    for bone in 0..nb {
        let mut q: Vec<Quat4> = clip
            .frames
            .iter()
            .map(|row| row[bone].rotation.to_array())
            .collect();
        for f in 1..q.len() {
            if qdot(&q[f - 1], &q[f]) < 0.0 {
                q[f] = q[f].map(|x| -x);
            }
        }
        rotations.push(RotationTrack { bone, q });
    }
    (scalars, rotations)
}

/// Dot product of two quaternions.
pub fn qdot(a: &Quat4, b: &Quat4) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

/// Angle in degrees between two rotations as the study computes it:
/// `2 acos(min(1, |a·b|))` ([`crate::quant::angle_between_acos_rad`]). The study's tables (keys kept at each tolerance, worst errors) are
/// defined with this formula, which differs from [`crate::quant::angle_between_rad`] in the
/// last bits for small angles and for inputs that are not exactly unit, so keyframe selection
/// keeps it; everything else measures rotations with `angle_between_rad`.
pub fn qangle_deg(a: &Quat4, b: &Quat4) -> f64 {
    crate::quant::angle_between_acos_rad(*a, *b) * R2D
}

/// The quaternion scaled to unit length (a zero quaternion is returned unchanged).
pub fn qnorm(q: &Quat4) -> Quat4 {
    let l = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    let l = if l == 0.0 || l.is_nan() { 1.0 } else { l };
    [q[0] / l, q[1] / l, q[2] / l, q[3] / l]
}

/// True when the scalar channel's range is below [`SCALAR_CONSTANT_RANGE`] (an empty channel
/// is constant).
pub fn is_constant_scalar(v: &[f64]) -> bool {
    let Some(&first) = v.first() else {
        return true;
    };
    let (mut lo, mut hi) = (first, first);
    for &x in v {
        if x < lo {
            lo = x;
        }
        if x > hi {
            hi = x;
        }
    }
    hi - lo < SCALAR_CONSTANT_RANGE
}

/// True when every rotation is within [`QUAT_CONSTANT_DEG`] of the first.
pub fn is_constant_quat(q: &[Quat4]) -> bool {
    match q.first() {
        None => true,
        Some(first) => q.iter().all(|x| qangle_deg(x, first) < QUAT_CONSTANT_DEG),
    }
}

/// Reconstructs every frame `0..n` from keys at frames `keys` (ascending, first 0, last
/// `n - 1`) with values `key_values` (one per key).
///
/// Linear: straight lines between keys. Cubic: Hermite segments whose tangents are the
/// non-uniform Catmull-Rom slopes `(v[i+1] − v[i−1]) / (t[i+1] − t[i−1])` (one-sided at the
/// ends), scaled by the segment length. A single key holds its value everywhere; frames not
/// covered by keys are 0.
pub fn reconstruct(n: usize, keys: &[usize], key_values: &[f64], cubic: bool) -> Vec<f64> {
    let mut out = vec![0.0; n];
    if keys.len() == 1 {
        out.fill(key_values[0]);
        return out;
    }
    let last = keys.len().saturating_sub(1);
    let slope = |i: usize| -> f64 {
        if i == 0 {
            (key_values[1] - key_values[0]) / (keys[1] as f64 - keys[0] as f64)
        } else if i == last {
            (key_values[i] - key_values[i - 1]) / (keys[i] as f64 - keys[i - 1] as f64)
        } else {
            (key_values[i + 1] - key_values[i - 1]) / (keys[i + 1] as f64 - keys[i - 1] as f64)
        }
    };
    for k in 0..last {
        let (t0, t1) = (keys[k], keys[k + 1]);
        let h = (t1 - t0) as f64;
        let (p0, p1) = (key_values[k], key_values[k + 1]);
        let (m0, m1) = if cubic {
            (slope(k) * h, slope(k + 1) * h)
        } else {
            (0.0, 0.0)
        };
        for (f, slot) in out.iter_mut().enumerate().take(t1 + 1).skip(t0) {
            let u = (f - t0) as f64 / h;
            *slot = if cubic {
                (2.0 * u * u * u - 3.0 * u * u + 1.0) * p0
                    + (u * u * u - 2.0 * u * u + u) * m0
                    + (-2.0 * u * u * u + 3.0 * u * u) * p1
                    + (u * u * u - u * u) * m1
            } else {
                p0 + (p1 - p0) * u
            };
        }
    }
    out
}

/// Reconstructs a rotation track per component from keys (see [`reconstruct`]) and
/// renormalises every frame. `key_q[i]` is the rotation at frame `keys[i]`.
pub fn reconstruct_quat(n: usize, keys: &[usize], key_q: &[Quat4], cubic: bool) -> Vec<Quat4> {
    let comp = |c: usize| {
        let kv: Vec<f64> = key_q.iter().map(|q| q[c]).collect();
        reconstruct(n, keys, &kv, cubic)
    };
    let (cx, cy, cz, cw) = (comp(0), comp(1), comp(2), comp(3));
    (0..n)
        .map(|f| qnorm(&[cx[f], cy[f], cz[f], cw[f]]))
        .collect()
}

/// Keyframe reduction by refinement: start with the first and last of `n` frames, call `err`
/// with the current keys (it returns one error per frame), insert the first frame with the
/// largest error, and stop when that error is `<= eps` or every frame is a key. Channels of
/// at most two frames keep every frame. Returns ascending frame indices.
pub fn fit(n: usize, mut err: impl FnMut(&[usize]) -> Vec<f64>, eps: f64) -> Vec<usize> {
    if n <= 2 {
        return (0..n).collect();
    }
    let mut keys = vec![0, n - 1];
    loop {
        let e = err(&keys);
        let (mut worst, mut wi) = (-1.0, 0usize);
        for (f, &x) in e.iter().enumerate() {
            if x > worst {
                worst = x;
                wi = f;
            }
        }
        if worst <= eps || keys.len() >= n {
            return keys;
        }
        let at = keys.partition_point(|&k| k < wi);
        keys.insert(at, wi);
    }
}

/// [`fit`] on a scalar channel with absolute error.
pub fn fit_scalar(values: &[f64], eps: f64, cubic: bool) -> Vec<usize> {
    fit(
        values.len(),
        |keys| {
            let kv: Vec<f64> = keys.iter().map(|&k| values[k]).collect();
            let r = reconstruct(values.len(), keys, &kv, cubic);
            r.iter().zip(values).map(|(a, b)| (a - b).abs()).collect()
        },
        eps,
    )
}

/// [`fit`] on a rotation track with angular error in degrees.
pub fn fit_quat(q: &[Quat4], eps_deg: f64, cubic: bool) -> Vec<usize> {
    fit(
        q.len(),
        |keys| {
            let kq: Vec<Quat4> = keys.iter().map(|&k| q[k]).collect();
            let r = reconstruct_quat(q.len(), keys, &kq, cubic);
            r.iter().zip(q).map(|(a, b)| qangle_deg(a, b)).collect()
        },
        eps_deg,
    )
}

/// A scalar channel's keys quantised to 16 bits over their own range.
#[derive(Debug, Clone, PartialEq)]
pub struct QuantizedScalar {
    /// Smallest key value.
    pub lo: f64,
    /// Largest minus smallest key value (0 when all keys are equal).
    pub range: f64,
    /// Per key: `round((v − lo) / range × 65535)`, 0 when `range` is 0.
    pub enc: Vec<u16>,
    /// Per key: `lo + enc / 65535 × range`.
    pub dec: Vec<f64>,
}

/// Quantises the key values of a scalar channel (study: 16-bit fixed point over the keys'
/// min/max).
pub fn quantize_scalar(key_values: &[f64]) -> QuantizedScalar {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for &v in key_values {
        if v < lo {
            lo = v;
        }
        if v > hi {
            hi = v;
        }
    }
    let range = hi - lo;
    // 16-bit codes over [lo, lo + range] (0 when the range is 0).
    let enc: Vec<u16> = key_values
        .iter()
        .map(|&v| crate::quant::quantize_range(v, lo, range, 65535.0) as u16)
        .collect();
    let dec = enc
        .iter()
        .map(|&q| crate::quant::dequantize_range(u64::from(q), lo, range, 65535.0))
        .collect();
    QuantizedScalar {
        lo,
        range,
        enc,
        dec,
    }
}

/// A smallest-three quaternion: the index of the dropped (largest) component and the other
/// three, in x, y, z, w order, each in 10 bits over `[-1/√2, 1/√2]`, after flipping the sign
/// so the dropped component is positive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SmallestThree {
    /// Index 0..4 of the dropped component.
    pub largest: u8,
    /// The kept components, 0..=1023 each.
    pub e: [u16; 3],
}

impl SmallestThree {
    /// Packs into 32 bits: index in bits 30–31, then the three components in bits 20–29,
    /// 10–19 and 0–9.
    pub fn pack(self) -> u32 {
        (u32::from(self.largest) << 30)
            | (u32::from(self.e[0]) << 20)
            | (u32::from(self.e[1]) << 10)
            | u32::from(self.e[2])
    }

    /// Unpacks 32 bits written by [`SmallestThree::pack`] (every bit pattern is valid).
    pub fn unpack(bits: u32) -> Self {
        Self {
            largest: (bits >> 30) as u8,
            e: [
                ((bits >> 20) & 1023) as u16,
                ((bits >> 10) & 1023) as u16,
                (bits & 1023) as u16,
            ],
        }
    }
}

/// Quantises a quaternion to smallest-three with 10 bits per component (normalised first),
/// with [`crate::quant::smallest3::STUDY`].
pub fn quantize_quat(q: &Quat4) -> SmallestThree {
    let (largest, e) = crate::quant::smallest3::STUDY.encode(qnorm(q));
    SmallestThree {
        largest,
        // Offset codes are 0..=1023.
        e: e.map(|x| x as u16),
    }
}

/// Dequantises a smallest-three quaternion; the dropped component is `√max(0, 1 − Σ others²)`,
/// never below the largest kept magnitude (so re-quantising gives the same code), and the
/// result is not renormalised ([`crate::quant::smallest3::STUDY`]).
pub fn dequantize_quat(p: SmallestThree) -> Quat4 {
    crate::quant::smallest3::STUDY.decode(p.largest, p.e.map(i32::from))
}

/// What [`plan`] does.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanOptions {
    /// Keyframe reduction tolerances `(metres, degrees)`; `None` keeps every frame.
    pub tolerance: Option<(f64, f64)>,
    /// Cubic Hermite reconstruction instead of linear.
    pub cubic: bool,
    /// 16-bit scalars and smallest-three rotations.
    pub quantize: bool,
    /// Store constant channels as one value.
    pub drop_constant: bool,
}

impl PlanOptions {
    /// Reduction at `mm` millimetres (and [`mm_to_deg`] degrees), constant removal on.
    pub fn at_mm(mm: f64, cubic: bool, quantize: bool) -> Self {
        Self {
            tolerance: Some((mm / 1000.0, mm_to_deg(mm))),
            cubic,
            quantize,
            drop_constant: true,
        }
    }
}

/// A scalar channel as planned: its keys, whether constant, and its quantisation.
#[derive(Debug, Clone, PartialEq)]
pub struct ScalarPlan {
    /// The channel.
    pub channel: ScalarChannel,
    /// Kept frames (`[0]` for a constant channel).
    pub keys: Vec<usize>,
    /// Stored as one value.
    pub constant: bool,
    /// Quantised key values, when quantising.
    pub quant: Option<QuantizedScalar>,
}

/// A rotation track as planned.
#[derive(Debug, Clone, PartialEq)]
pub struct RotationPlan {
    /// The track.
    pub track: RotationTrack,
    /// Kept frames (`[0]` for a constant track).
    pub keys: Vec<usize>,
    /// Stored as one value.
    pub constant: bool,
}

/// Every channel of a clip as planned, and the clip reconstructed from what is kept.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The options used.
    pub options: PlanOptions,
    /// Scalar channels, in [`channels`] order.
    pub scalars: Vec<ScalarPlan>,
    /// Rotation tracks, one per bone.
    pub rotations: Vec<RotationPlan>,
    /// The clip as a decoder reconstructs it (same skeleton and frame time).
    pub decoded: Clip,
}

impl Plan {
    /// Scalar keys stored (a constant channel counts one).
    pub fn keys_scalar(&self) -> usize {
        self.scalars
            .iter()
            .map(|s| if s.constant { 1 } else { s.keys.len() })
            .sum()
    }
    /// Rotation keys stored (a constant track counts one).
    pub fn keys_quat(&self) -> usize {
        self.rotations
            .iter()
            .map(|s| if s.constant { 1 } else { s.keys.len() })
            .sum()
    }
    /// Constant scalar channels.
    pub fn constant_scalars(&self) -> usize {
        self.scalars.iter().filter(|s| s.constant).count()
    }
    /// Constant rotation tracks.
    pub fn constant_rotations(&self) -> usize {
        self.rotations.iter().filter(|s| s.constant).count()
    }
}

/// Builds the study's compression plan for a clip (see the [module documentation](self)).
pub fn plan(clip: &Clip, options: PlanOptions) -> Plan {
    let (sc, rt) = channels(clip);
    let n = clip.frame_count();
    let nb = clip.skeleton.len();
    let mut decoded_frames: Vec<Vec<LocalTransform>> = vec![vec![LocalTransform::IDENTITY; nb]; n];
    let mut scalars = Vec::with_capacity(sc.len());
    for c in sc {
        let constant = options.drop_constant && is_constant_scalar(&c.values);
        let keys = if constant || n == 0 {
            vec![0]
        } else {
            match options.tolerance {
                None => (0..n).collect(),
                Some((eps, _)) => fit_scalar(&c.values, eps, options.cubic),
            }
        };
        let key_values: Vec<f64> = keys
            .iter()
            .map(|&k| c.values.get(k).copied().unwrap_or(0.0))
            .collect();
        let quant = options.quantize.then(|| quantize_scalar(&key_values));
        let src = quant.as_ref().map_or(&key_values, |q| &q.dec);
        let rec = if constant {
            vec![src[0]; n]
        } else {
            reconstruct(n, &keys, src, options.cubic)
        };
        for (f, v) in rec.into_iter().enumerate() {
            let t = &mut decoded_frames[f][c.bone];
            match c.kind {
                ScalarKind::Translation => t.translation[c.axis] = v,
                ScalarKind::Scale => t.scale[c.axis] = v,
            }
        }
        scalars.push(ScalarPlan {
            channel: c,
            keys,
            constant,
            quant,
        });
    }
    let mut rotations = Vec::with_capacity(rt.len());
    for t in rt {
        let constant = options.drop_constant && is_constant_quat(&t.q);
        let keys = if constant || n == 0 {
            vec![0]
        } else {
            match options.tolerance {
                None => (0..n).collect(),
                Some((_, eps_deg)) => fit_quat(&t.q, eps_deg, options.cubic),
            }
        };
        let key_q: Vec<Quat4> = keys
            .iter()
            .map(|&k| {
                let q = t.q.get(k).copied().unwrap_or([0.0, 0.0, 0.0, 1.0]);
                if options.quantize {
                    dequantize_quat(quantize_quat(&q))
                } else {
                    q
                }
            })
            .collect();
        let rec = if constant {
            vec![qnorm(&key_q[0]); n]
        } else {
            reconstruct_quat(n, &keys, &key_q, options.cubic)
        };
        for (f, q) in rec.into_iter().enumerate() {
            decoded_frames[f][t.bone].rotation = DQuat::from_array(q);
        }
        rotations.push(RotationPlan {
            track: t,
            keys,
            constant,
        });
    }
    let decoded = Clip {
        name: clip.name.clone(),
        skeleton: clip.skeleton.clone(),
        frame_time_s: clip.frame_time_s,
        frames: decoded_frames,
    };
    Plan {
        options,
        scalars,
        rotations,
        decoded,
    }
}

/// Worst and mean world-space error of a reconstruction against the original.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FkError {
    /// Largest joint displacement over every joint and frame, metres.
    pub max_m: f64,
    /// Mean joint displacement, metres.
    pub mean_m: f64,
    /// Largest angle between original and reconstructed world rotations, degrees.
    pub max_deg: f64,
}

/// Forward-kinematics error of `decoded` against `original` (same skeleton, frames compared
/// up to the shorter clip).
pub fn fk_error(original: &Clip, decoded: &Clip) -> FkError {
    let (mut mx, mut sum, mut cnt, mut mx_deg) = (0.0f64, 0.0, 0usize, 0.0f64);
    for (a, b) in original.frames.iter().zip(&decoded.frames) {
        let wa = forward_kinematics(&original.skeleton, a);
        let wb = forward_kinematics(&original.skeleton, b);
        for (ja, jb) in wa.iter().zip(&wb) {
            let d: DVec3 = ja.position - jb.position;
            let d = d.length();
            if d > mx {
                mx = d;
            }
            sum += d;
            cnt += 1;
            let ang = qangle_deg(&ja.rotation.to_array(), &jb.rotation.to_array());
            if ang > mx_deg {
                mx_deg = ang;
            }
        }
    }
    FkError {
        max_m: mx,
        mean_m: if cnt == 0 { 0.0 } else { sum / cnt as f64 },
        max_deg: mx_deg,
    }
}

/// Size of `bytes` after gzip at compression level 6 (flate2; headers included).
pub fn gzip_len(bytes: &[u8]) -> usize {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    // Writing to a Vec cannot fail.
    let _ = enc.write_all(bytes);
    enc.finish().map_or(0, |v| v.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lever_turns_one_mm_into_0_164_deg() {
        assert_eq!(format!("{:.3}", mm_to_deg(1.0)), "0.164");
        assert_eq!(format!("{:.3}", mm_to_deg(50.0)), "8.185");
    }

    #[test]
    fn smallest_three_round_trips_bits() {
        let p = quantize_quat(&[0.1, -0.7, 0.2, 0.676]);
        assert_eq!(SmallestThree::unpack(p.pack()), p);
        assert_eq!(p.largest, 1);
        let q = dequantize_quat(p);
        let orig = qnorm(&[-0.1, 0.7, -0.2, -0.676]);
        assert!(qangle_deg(&q, &orig) < 0.2);
    }

    #[test]
    fn refinement_fits_a_line_with_two_keys_and_a_corner_with_three() {
        let line: Vec<f64> = (0..10).map(|f| f as f64 * 0.5).collect();
        assert_eq!(fit_scalar(&line, 1e-9, false), vec![0, 9]);
        let corner: Vec<f64> = (0..11).map(|f| (f as f64 - 4.0).abs()).collect();
        assert_eq!(fit_scalar(&corner, 1e-9, false), vec![0, 4, 10]);
    }

    #[test]
    fn cubic_reconstruction_hits_keys_and_catmull_rom_midpoint() {
        let r = reconstruct(5, &[0, 2, 4], &[0.0, 1.0, 0.0], true);
        assert_eq!(r[0], 0.0);
        assert_eq!(r[2], 1.0);
        assert_eq!(r[4], 0.0);
        // Segment 0..2: p0 0, p1 1, m0 = 0.5×2 = 1, m1 = 0; at u = 0.5:
        // 0.125×1 + 0.5×1 = 0.625.
        assert!((r[1] - 0.625).abs() < 1e-15);
    }
}
