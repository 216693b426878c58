//! statepack's animation clip codec: tolerance-driven keyframe selection with per-track bit
//! widths, verified in world space.
//!
//! A clip ([`Clip`]) is encoded into an [`EncodedClip`]: per bone three tracks (rotation,
//! translation, scale), each [`Track::Default`] (identity rotation, zero translation, unit
//! scale), [`Track::Constant`] or [`Track::Animated`]. An animated track keeps a subset of the
//! frames as keys; each key's components are quantised over the track's own range with a bit
//! width chosen per component; frames between keys are reconstructed linearly or with
//! non-uniform Catmull-Rom Hermite curves (one choice per clip). Rotations are hemisphere-aligned
//! quaternions stored with three components (`w = √(1 − x² − y² − z²)`, when every frame of the
//! track has `w ≥` [`DROP_W_MIN`] after choosing the track's sign) or four (renormalised).
//!
//! # How the tolerance is kept
//!
//! The user gives a world-space tolerance ([`Metric`]): the worst joint displacement, or the
//! worst displacement of virtual vertices on a shell of radius `shell_m` around each joint
//! (along the joint's three axes, as the Animation Compression Library measures). The encoder
//! turns it into per-track tolerances through each bone's lever (the largest distance from the
//! joint to any descendant joint over the clip, at least `shell_m`): a rotation error `θ`
//! moves the descendants by at most `θ × lever`. One factor `α` scales every track's share;
//! [`encode`] searches the largest `α` whose decoded clip, measured after forward kinematics
//! over every frame, is within the tolerance. Fitting is done on quantised values, so the
//! measured error is the error of what the decoder reconstructs (up to f32 arithmetic, which
//! the format layer verifies again from the bytes).
//!
//! # Bones that move no joint
//!
//! Under the joint metric (`shell_m` 0) the rotation of a bone with no descendant joint away
//! from it (a leaf: an eye, a toe, a finger tip) moves nothing that is measured, so the
//! tolerance leaves it free. It is then stored at the bone's rest (bind) rotation
//! ([`crate::motion::Bone::rest_rotation`]), as a constant ([`Track::Default`] when the rest
//! rotation is the identity), so a mesh skinned to it stays in its bind orientation
//! relative to its parent rather than turning to the identity. Its animation is not kept:
//! measure with a shell to keep it.

use glam::DVec3;

use crate::motion::{forward_kinematics, Clip, LocalTransform};

/// Smallest `w` for which a rotation track is stored with three components.
pub const DROP_W_MIN: f64 = 0.05;
/// Largest bit width of a quantised component.
pub const MAX_BITS: u8 = 24;

/// What the tolerance bounds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Metric {
    /// Worst allowed error, metres.
    pub tolerance_m: f64,
    /// Radius of the virtual-vertex shell, metres; 0 measures joint positions only.
    pub shell_m: f64,
}

/// Reconstruction between keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interp {
    /// Straight lines (quaternions: per component, then `w` or renormalisation).
    Linear,
    /// Hermite segments with non-uniform Catmull-Rom tangents.
    Cubic,
}

/// An animated track: keys and their quantised components.
#[derive(Debug, Clone, PartialEq)]
pub struct AnimatedTrack {
    /// Components per key: 3 (translation, scale, rotation without `w`) or 4 (rotation).
    pub comps: usize,
    /// Key frames, ascending, first 0 and last `num_frames − 1`.
    pub frames: Vec<u16>,
    /// Bits per component, 0..=[`MAX_BITS`].
    pub bits: Vec<u8>,
    /// Per component: the low end of the range (as stored: an f16 value).
    pub lo: Vec<f32>,
    /// Per component: the range's extent (as stored: an f16 value, ≥ 0).
    pub extent: Vec<f32>,
    /// Quantised values, key-major (`key × comps + comp`).
    pub q: Vec<u32>,
    /// Values are stored as deltas between consecutive keys ([`delta_value_bits`]) rather
    /// than as they are.
    pub delta: bool,
}

impl AnimatedTrack {
    /// The value of component `c` of key `k`.
    pub fn value(&self, k: usize, c: usize) -> f32 {
        dequant(
            self.q[k * self.comps + c],
            self.bits[c],
            self.lo[c],
            self.extent[c],
        )
    }
}

/// One track of a bone.
#[derive(Debug, Clone, PartialEq)]
pub enum Track {
    /// Identity rotation, zero translation or unit scale.
    Default,
    /// One value at every frame: 3 components (translation, scale) or 4 (rotation x, y, z, w).
    Constant(Vec<f32>),
    /// Keys.
    Animated(AnimatedTrack),
}

/// The three tracks of a bone.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneTracks {
    /// Local rotation.
    pub rotation: Track,
    /// Local translation, metres.
    pub translation: Track,
    /// Local scale.
    pub scale: Track,
}

/// An encoded clip, as the container stores it.
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedClip {
    /// Frames per second.
    pub sample_rate: f32,
    /// Frame count (≥ 1).
    pub num_frames: u16,
    /// Reconstruction between keys.
    pub interp: Interp,
    /// One entry per bone, skeleton order.
    pub bones: Vec<BoneTracks>,
}

/// Dequantises `q` of `bits` bits over `[lo, lo + extent]`
/// ([`crate::quant::dequantize_range_f32`] with `2^bits − 1` codes; `lo` at 0 bits).
#[inline]
pub fn dequant(q: u32, bits: u8, lo: f32, extent: f32) -> f32 {
    if bits == 0 {
        lo
    } else {
        crate::quant::dequantize_range_f32(q, lo, extent, ((1u64 << bits) - 1) as f32)
    }
}

/// The code of `v` in `bits` bits over `[lo, lo + extent]` ([`crate::quant::quantize_range`];
/// 0 at 0 bits).
fn quant(v: f64, bits: u8, lo: f32, extent: f32) -> u32 {
    if bits == 0 {
        return 0;
    }
    let max = ((1u64 << bits) - 1) as f64;
    crate::quant::quantize_range(v, f64::from(lo), f64::from(extent), max) as u32
}

/// The f16 value at or below `v` (so a range starting there covers `v`).
pub fn f16_floor(v: f64) -> f32 {
    let h = half_round(v);
    if f64::from(h) > v {
        next_down_f16(h)
    } else {
        h
    }
}

/// The f16 value at or above `v`.
pub fn f16_ceil(v: f64) -> f32 {
    let h = half_round(v);
    if f64::from(h) < v {
        -next_down_f16(-h)
    } else {
        h
    }
}

fn half_round(v: f64) -> f32 {
    f16_from_bits(f16_to_bits(v))
}

fn next_down_f16(h: f32) -> f32 {
    let b = f16_to_bits(f64::from(h));
    let nb = if h > 0.0 {
        b - 1
    } else if h == 0.0 {
        0x8001
    } else {
        b + 1
    };
    f16_from_bits(nb)
}

/// IEEE 754 binary16 bits of `v`, rounded to nearest with ties away from zero, saturating
/// to ±65504 (NaN too, keeping its sign bit): [`crate::quant::half::ANIM_CLIP`].
pub fn f16_to_bits(v: f64) -> u16 {
    // The saturating rule never refuses.
    crate::quant::half::ANIM_CLIP.encode(v).unwrap_or(0)
}

/// The value of binary16 bits (infinity and NaN map to ±65504 and 0, so decoding stays
/// finite): [`crate::quant::half::ANIM_CLIP`].
pub fn f16_from_bits(b: u16) -> f32 {
    // Every binary16 value is exact in f32.
    crate::quant::half::ANIM_CLIP.decode(b) as f32
}

// ----------------------------------------------------------------------------------------
// Decoding

mod decode;
pub use decode::{Cursor, Decoder, Pose32};

// ----------------------------------------------------------------------------------------
// Error metrics

/// Worst world-space error of `decoded` against `original` over every frame and joint:
/// the joint displacement, and with `shell_m > 0` also the displacement of the three points
/// `shell_m` along each joint's local axes. Metres.
pub fn world_error(original: &Clip, decoded: &[Vec<LocalTransform>], shell_m: f64) -> f64 {
    let mut worst = 0.0f64;
    for (a, b) in original.frames.iter().zip(decoded) {
        let wa = forward_kinematics(&original.skeleton, a);
        let wb = forward_kinematics(&original.skeleton, b);
        for (ja, jb) in wa.iter().zip(&wb) {
            worst = worst.max((ja.position - jb.position).length());
            if shell_m > 0.0 {
                for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
                    let pa = ja.position + ja.rotation * (axis * shell_m);
                    let pb = jb.position + jb.rotation * (axis * shell_m);
                    worst = worst.max((pa - pb).length());
                }
            }
        }
    }
    worst
}

// ----------------------------------------------------------------------------------------
// Encoding

/// Per-bone levers: the largest distance from the joint to any descendant over the clip
/// (rotation lever, at least `shell_m`), and the largest child offset (scale lever).
fn levers(clip: &Clip, shell_m: f64) -> (Vec<f64>, Vec<f64>) {
    let nb = clip.skeleton.len();
    let bones = clip.skeleton.bones();
    let mut rot = vec![shell_m; nb];
    let mut scl = vec![0.0f64; nb];
    for row in &clip.frames {
        let w = forward_kinematics(&clip.skeleton, row);
        for d in 0..nb {
            let mut a = bones[d].parent;
            if let Some(p) = a {
                scl[p] = scl[p].max(row[d].translation.length());
            }
            while let Some(p) = a {
                rot[p] = rot[p].max((w[d].position - w[p].position).length());
                a = bones[p].parent;
            }
        }
    }
    (rot, scl)
}

/// Per-frame samples of one track, in the form that is stored (rotation: aligned, sign
/// chosen; three or four components).
struct Samples {
    comps: usize,
    v: Vec<[f64; 4]>,
}

fn rotation_samples(clip: &Clip, bone: usize) -> Samples {
    let mut q: Vec<[f64; 4]> = clip
        .frames
        .iter()
        .map(|r| r[bone].rotation.normalize().to_array())
        .collect();
    for f in 1..q.len() {
        let d: f64 = (0..4).map(|c| q[f - 1][c] * q[f][c]).sum();
        if d < 0.0 {
            q[f] = q[f].map(|x| -x);
        }
    }
    let min_w = q.iter().map(|x| x[3]).fold(f64::INFINITY, f64::min);
    let max_w = q.iter().map(|x| x[3]).fold(f64::NEG_INFINITY, f64::max);
    if -max_w > min_w {
        for x in &mut q {
            *x = x.map(|c| -c);
        }
    }
    let min_w = q.iter().map(|x| x[3]).fold(f64::INFINITY, f64::min);
    Samples {
        comps: if min_w >= DROP_W_MIN { 3 } else { 4 },
        v: q,
    }
}

fn vec_samples(clip: &Clip, bone: usize, scale: bool) -> Samples {
    Samples {
        comps: 3,
        v: clip
            .frames
            .iter()
            .map(|r| {
                let v = if scale {
                    r[bone].scale
                } else {
                    r[bone].translation
                };
                [v.x, v.y, v.z, 0.0]
            })
            .collect(),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Role {
    Rotation,
    Translation,
    Scale,
}

/// Error of a reconstructed value against the sample: rotation angle (radians) or distance.
fn err_of(role: Role, comps: usize, rec: &[f64; 4], orig: &[f64; 4]) -> f64 {
    match role {
        Role::Rotation => {
            let q = if comps == 3 {
                let w = (1.0 - (rec[0] * rec[0] + rec[1] * rec[1] + rec[2] * rec[2]))
                    .max(0.0)
                    .sqrt();
                [rec[0], rec[1], rec[2], w]
            } else {
                let l = (rec.iter().map(|x| x * x).sum::<f64>()).sqrt();
                if l > 0.0 {
                    rec.map(|x| x / l)
                } else {
                    [0.0, 0.0, 0.0, 1.0]
                }
            };
            let dq = |c: [f64; 4]| glam::DQuat::from_xyzw(c[0], c[1], c[2], c[3]);
            crate::quant::angle_between_rad(dq(q), dq(*orig))
        }
        Role::Translation => {
            ((rec[0] - orig[0]).powi(2) + (rec[1] - orig[1]).powi(2) + (rec[2] - orig[2]).powi(2))
                .sqrt()
        }
        Role::Scale => (0..3).map(|c| (rec[c] - orig[c]).abs()).fold(0.0, f64::max),
    }
}

fn seg_eval(keys: &[usize], kv: &[[f64; 4]], i: usize, f: usize, cubic: bool) -> [f64; 4] {
    let (t0, t1) = (keys[i], keys[i + 1]);
    let h = (t1 - t0) as f64;
    let u = (f - t0) as f64 / h;
    let (p0, p1) = (kv[i], kv[i + 1]);
    if !cubic {
        let mut o = [0.0; 4];
        for c in 0..4 {
            o[c] = p0[c] + (p1[c] - p0[c]) * u;
        }
        return o;
    }
    let last = keys.len() - 1;
    let sl = |j: usize, c: usize| {
        let (a, b) = if j == 0 {
            (0, 1)
        } else if j == last {
            (last - 1, last)
        } else {
            (j - 1, j + 1)
        };
        (kv[b][c] - kv[a][c]) / (keys[b] - keys[a]) as f64
    };
    let u2 = u * u;
    let u3 = u2 * u;
    let mut o = [0.0; 4];
    for c in 0..4 {
        let m0 = sl(i, c) * h;
        let m1 = sl(i + 1, c) * h;
        o[c] = (2.0 * u3 - 3.0 * u2 + 1.0) * p0[c]
            + (u3 - 2.0 * u2 + u) * m0
            + (-2.0 * u3 + 3.0 * u2) * p1[c]
            + (u3 - u2) * m1;
    }
    o
}

/// Refinement fit on quantised values `qv` (one per frame) against `orig`: keys at both ends,
/// then the worst frame until every frame is within `tol`. Errors are recomputed only on the
/// segments an insertion changes.
fn fit_track(
    role: Role,
    comps: usize,
    orig: &[[f64; 4]],
    qv: &[[f64; 4]],
    tol: f64,
    cubic: bool,
) -> Vec<usize> {
    let n = orig.len();
    if n <= 2 {
        return (0..n).collect();
    }
    let mut keys = vec![0, n - 1];
    let mut kv = vec![qv[0], qv[n - 1]];
    let mut err = vec![0.0f64; n];
    let recompute = |keys: &[usize], kv: &[[f64; 4]], err: &mut [f64], s0: usize, s1: usize| {
        for i in s0..s1 {
            for f in keys[i]..=keys[i + 1] {
                let r = seg_eval(keys, kv, i, f, cubic);
                err[f] = err_of(role, comps, &r, &orig[f]);
            }
        }
    };
    recompute(&keys, &kv, &mut err, 0, 1);
    loop {
        let (mut wi, mut worst) = (0, -1.0);
        for (f, &e) in err.iter().enumerate() {
            if e > worst {
                worst = e;
                wi = f;
            }
        }
        if worst <= tol || keys.len() >= n {
            return keys;
        }
        let at = keys.partition_point(|&k| k < wi);
        if at < keys.len() && keys[at] == wi {
            // A key's own error is its quantisation error: no insertion can lower it.
            return keys;
        }
        keys.insert(at, wi);
        kv.insert(at, qv[wi]);
        let segs = keys.len() - 1;
        let (s0, s1) = if cubic {
            (at.saturating_sub(2), (at + 2).min(segs))
        } else {
            (at - 1, (at + 1).min(segs))
        };
        recompute(&keys, &kv, &mut err, s0, s1);
    }
}

fn bits_for(v: u64) -> u8 {
    (64 - v.leading_zeros()) as u8
}

/// Bytes a track adds to the container (descriptor plus bit stream), for choosing widths.
/// Keys per group of deltas sharing one width.
pub const DELTA_GROUP: usize = 8;
/// Bits of a delta group's width field.
pub const DELTA_WIDTH_BITS: u8 = 5;

/// Zigzag code of a signed delta (0, −1, 1, −2, … → 0, 1, 2, 3, …).
pub fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

/// Inverse of [`zigzag`].
pub fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}

/// For component `c`: the widths of its delta groups (each the bits of the largest zigzag
/// delta in the group).
pub fn delta_widths(q: &[u32], comps: usize, c: usize) -> Vec<u8> {
    let k = q.len() / comps.max(1);
    let deltas: Vec<u64> = (1..k)
        .map(|i| zigzag(i64::from(q[i * comps + c]) - i64::from(q[(i - 1) * comps + c])))
        .collect();
    deltas
        .chunks(DELTA_GROUP)
        .map(|g| bits_for(g.iter().copied().max().unwrap_or(0)))
        .collect()
}

/// Stream bits of a track's values stored plainly: every key, every component at its width.
pub fn plain_value_bits(keys: usize, bits: &[u8]) -> usize {
    keys * bits.iter().map(|&b| usize::from(b)).sum::<usize>()
}

/// Stream bits of a track's values stored as deltas: per component with a non-zero width,
/// the first key's value at that width, then per group of [`DELTA_GROUP`] deltas a
/// [`DELTA_WIDTH_BITS`]-bit width and the zigzag deltas at that width. Component-major.
pub fn delta_value_bits(q: &[u32], comps: usize, bits: &[u8]) -> usize {
    let k = q.len() / comps.max(1);
    let mut total = 0;
    for (c, &b) in bits.iter().enumerate().take(comps) {
        if b == 0 {
            continue;
        }
        total += usize::from(b);
        let widths = delta_widths(q, comps, c);
        for (g, w) in widths.iter().enumerate() {
            let len = (k - 1 - g * DELTA_GROUP).min(DELTA_GROUP);
            total += usize::from(DELTA_WIDTH_BITS) + len * usize::from(*w);
        }
    }
    total
}

/// Width of the stored key-frame gaps: the bits of the largest gap minus one between keys
/// 0 to `k − 2` (the last key is implied).
pub fn index_bits(frames: &[u16]) -> u8 {
    let k = frames.len();
    if k <= 2 {
        return 0;
    }
    let max_gap = frames[..k - 1]
        .windows(2)
        .map(|p| p[1] - p[0] - 1)
        .max()
        .unwrap_or(0);
    bits_for(u64::from(max_gap))
}

/// Descriptor bytes of an animated track: kind, flags (component count, coding, gap width),
/// key count (2), per component width, lo and extent (5).
pub fn animated_descriptor_len(comps: usize) -> usize {
    1 + 1 + 2 + comps * 5
}

/// Stream bits of an animated track (gaps and values).
pub fn animated_stream_bits(a: &AnimatedTrack) -> usize {
    let ib = index_bits(&a.frames);
    let values = if a.delta {
        delta_value_bits(&a.q, a.comps, &a.bits)
    } else {
        plain_value_bits(a.frames.len(), &a.bits)
    };
    a.frames.len().saturating_sub(2) * usize::from(ib) + values
}

/// Largest `shift` of a fixed-point constant: its grid step is `2^-shift`.
pub const MAX_CONST_SHIFT: u8 = 60;
/// Largest width of a fixed-point constant's zigzag codes (integers below 2^24 in magnitude,
/// which float32 holds exactly).
pub const MAX_CONST_WIDTH: u8 = 25;

/// The share of the tolerance left by a constant's spread that rounding it to a grid may take
/// (one part in this many).
const CONST_GRID_SHARE: f64 = 16.0;

/// `2^-shift` as f32 (exact for `shift` ≤ 126).
fn pow2_neg(shift: u8) -> f32 {
    f32::from_bits((127 - u32::from(shift.min(126))) << 23)
}

/// The value of a fixed-point constant's component: `unzigzag(code) × 2^-shift`.
pub fn fixed_point_value(code: u32, shift: u8) -> f32 {
    unzigzag(u64::from(code)) as f32 * pow2_neg(shift)
}

/// A constant's values as fixed point, when that reproduces every one bit for bit: the
/// smallest `shift` (0..=[`MAX_CONST_SHIFT`]) at which each value is an integer multiple of
/// `2^-shift`, the width of the largest zigzag code, and the codes. `None` when no shift does
/// (the constant is stored as float32).
pub fn fixed_point(values: &[f32]) -> Option<(u8, u8, Vec<u32>)> {
    if values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    for shift in 0..=MAX_CONST_SHIFT {
        let scale = 2f64.powi(i32::from(shift));
        let qs: Vec<f64> = values.iter().map(|&v| f64::from(v) * scale).collect();
        if qs.iter().any(|q| q.fract() != 0.0) {
            continue;
        }
        if qs.iter().any(|q| q.abs() >= f64::from(1u32 << 24)) {
            return None;
        }
        let codes: Vec<u32> = qs.iter().map(|&q| zigzag(q as i64) as u32).collect();
        if codes
            .iter()
            .zip(values)
            .any(|(&c, v)| fixed_point_value(c, shift).to_bits() != v.to_bits())
        {
            return None; // −0.0 has no fixed-point code
        }
        let width = codes
            .iter()
            .map(|&c| bits_for(u64::from(c)))
            .max()
            .unwrap_or(0);
        return Some((shift, width, codes));
    }
    None
}

/// How a constant track is stored: `Some((shift, width, codes))` for fixed point (when it
/// reproduces the values and takes fewer bits), `None` for float32.
pub fn constant_layout(values: &[f32]) -> Option<(u8, u8, Vec<u32>)> {
    let (shift, width, codes) = fixed_point(values)?;
    let fixed_bits = 3 * 8 + values.len() * usize::from(width);
    let float_bits = (2 + 4 * values.len()) * 8;
    (fixed_bits < float_bits).then_some((shift, width, codes))
}

/// Descriptor bytes and stream bits of a constant track (see [`constant_layout`]).
pub fn constant_cost(values: &[f32]) -> (usize, usize) {
    match constant_layout(values) {
        Some((_, width, _)) => (3, values.len() * usize::from(width)),
        None => (2 + 4 * values.len(), 0),
    }
}

/// The value the decoder holds for a constant track, in f64 (rotations: `w` derived from
/// three components or four renormalised).
fn constant_value(role: Role, v: &[f32]) -> [f64; 4] {
    let mut o = [0.0f64; 4];
    for (slot, x) in o.iter_mut().zip(v) {
        *slot = f64::from(*x);
    }
    if role == Role::Rotation {
        if v.len() == 3 {
            o[3] = (1.0 - (o[0] * o[0] + o[1] * o[1] + o[2] * o[2]))
                .max(0.0)
                .sqrt();
        }
        let l = o.iter().map(|x| x * x).sum::<f64>().sqrt();
        o = if l > 0.0 {
            o.map(|x| x / l)
        } else {
            [0.0, 0.0, 0.0, 1.0]
        };
    }
    o
}

/// A constant within `tol` of every frame on the coarsest power-of-two grid that keeps it
/// within its spread (the centre's worst error) plus 1/[`CONST_GRID_SHARE`] of the rest:
/// the centre of the samples (per component midrange; for rotations the normalised mean,
/// stored as x, y, z when its `w ≥` [`DROP_W_MIN`], else all four), each component rounded
/// to a multiple of `2^-shift` for `shift` from 0 up. `None` when no grid up to
/// [`MAX_CONST_SHIFT`] holds it.
fn constant_for(role: Role, s: &Samples, tol: f64) -> Option<Vec<f32>> {
    let mut centre = [0.0f64; 4];
    let nc = if role == Role::Rotation {
        for x in &s.v {
            for c in 0..4 {
                centre[c] += x[c];
            }
        }
        let l = centre.iter().map(|x| x * x).sum::<f64>().sqrt();
        if l.is_nan() || l <= 0.0 {
            return None;
        }
        centre = centre.map(|x| x / l);
        if centre[3] < 0.0 {
            centre = centre.map(|x| -x);
        }
        if centre[3] >= DROP_W_MIN {
            3
        } else {
            4
        }
    } else {
        for c in 0..3 {
            let mn = s.v.iter().map(|x| x[c]).fold(f64::INFINITY, f64::min);
            let mx = s.v.iter().map(|x| x[c]).fold(f64::NEG_INFINITY, f64::max);
            centre[c] = 0.5 * (mn + mx);
        }
        3
    };
    // The grid may add a sixteenth of what the centre leaves of the tolerance: constants are
    // cheap, and error spent here would be taken from the animated tracks.
    let exact = constant_value(
        role,
        &centre[..nc].iter().map(|&c| c as f32).collect::<Vec<_>>(),
    );
    let spread =
        s.v.iter()
            .map(|x| err_of(role, 4, &exact, x))
            .fold(0.0, f64::max);
    if spread > tol {
        return None;
    }
    let tol = spread + (tol - spread) / CONST_GRID_SHARE;
    for shift in 0..=MAX_CONST_SHIFT {
        let scale = 2f64.powi(i32::from(shift));
        let qs: Vec<i64> = centre[..nc]
            .iter()
            .map(|&c| (c * scale).round() as i64)
            .collect();
        if qs.iter().any(|q| q.unsigned_abs() >= 1 << 24) {
            return None;
        }
        let cand: Vec<f32> = qs.iter().map(|&q| q as f32 * pow2_neg(shift)).collect();
        let rec = constant_value(role, &cand);
        if s.v.iter().all(|x| err_of(role, 4, &rec, x) <= tol) {
            return Some(cand);
        }
    }
    None
}

fn encode_track(role: Role, s: &Samples, tol: f64, cubic: bool) -> Track {
    let n = s.v.len();
    let comps = s.comps;
    let first = s.v[0];
    let default: [f64; 4] = match role {
        Role::Rotation => [0.0, 0.0, 0.0, 1.0],
        Role::Translation => [0.0; 4],
        Role::Scale => [1.0, 1.0, 1.0, 0.0],
    };
    let comp_err = |a: &[f64; 4], b: &[f64; 4]| err_of(role, 4, a, b);
    let as_f32 = |v: &[f64; 4]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
    if s.v.iter().all(|x| comp_err(&default, x) <= tol) {
        return Track::Default;
    }
    if let Some(c) = constant_for(role, s, tol) {
        return Track::Constant(c);
    }
    // Constant: the f32 value of the first frame, checked as stored.
    let c32: Vec<f32> = match role {
        Role::Rotation => as_f32(&first),
        _ => as_f32(&first)[..3].to_vec(),
    };
    if s.v
        .iter()
        .all(|x| comp_err(&constant_value(role, &c32), x) <= tol)
    {
        return Track::Constant(c32);
    }
    // Per component range, stored as f16 bounds that cover every sample.
    let mut lo = vec![0f32; comps];
    let mut extent = vec![0f32; comps];
    for c in 0..comps {
        let mn = s.v.iter().map(|x| x[c]).fold(f64::INFINITY, f64::min);
        let mx = s.v.iter().map(|x| x[c]).fold(f64::NEG_INFINITY, f64::max);
        lo[c] = f16_floor(mn);
        extent[c] = f16_ceil(mx - f64::from(lo[c]));
    }
    // Candidate widths: the fewest bits whose half step is within the tolerance (per
    // component, scaled for the role), and a few more.
    let scale_tol = match role {
        Role::Rotation => tol / 4.0, // a component error e moves the rotation by about 2e
        _ => tol / 2.0,
    };
    let base: Vec<u8> = (0..comps)
        .map(|c| {
            let e = f64::from(extent[c]);
            if e <= 0.0 {
                0
            } else {
                let steps = (e / (2.0 * scale_tol)).max(1.0);
                (bits_for(steps.ceil() as u64)).min(MAX_BITS)
            }
        })
        .collect();
    let mut best: Option<(usize, AnimatedTrack)> = None;
    for extra in 0..6u8 {
        let bits: Vec<u8> = base
            .iter()
            .zip(&extent)
            .map(|(&b, &e)| {
                if e <= 0.0 {
                    0
                } else {
                    (b + extra).min(MAX_BITS)
                }
            })
            .collect();
        let qv: Vec<[f64; 4]> =
            s.v.iter()
                .map(|x| {
                    let mut o = [0.0; 4];
                    for c in 0..comps {
                        o[c] = f64::from(dequant(
                            quant(x[c], bits[c], lo[c], extent[c]),
                            bits[c],
                            lo[c],
                            extent[c],
                        ));
                    }
                    if comps == 3 && role != Role::Rotation {
                        o[3] = 0.0;
                    }
                    o
                })
                .collect();
        // Quantisation alone must be within the tolerance at every frame.
        if qv
            .iter()
            .zip(&s.v)
            .any(|(q, o)| err_of(role, comps, q, o) > tol)
        {
            continue;
        }
        let keys = fit_track(role, comps, &s.v, &qv, tol, cubic);
        let track = make_animated(s, comps, &keys, &bits, &lo, &extent);
        let cost = animated_descriptor_len(comps) * 8 + animated_stream_bits(&track);
        if best.as_ref().is_none_or(|b| cost < b.0) {
            best = Some((cost, track));
        }
    }
    match best {
        Some((_, t)) => Track::Animated(t),
        None => {
            let bits = vec![MAX_BITS; comps];
            let keys: Vec<usize> = (0..n).collect();
            Track::Animated(make_animated(s, comps, &keys, &bits, &lo, &extent))
        }
    }
}

fn make_animated(
    s: &Samples,
    comps: usize,
    keys: &[usize],
    bits: &[u8],
    lo: &[f32],
    extent: &[f32],
) -> AnimatedTrack {
    let mut q = Vec::with_capacity(keys.len() * comps);
    for &k in keys {
        for c in 0..comps {
            q.push(quant(s.v[k][c], bits[c], lo[c], extent[c]));
        }
    }
    let delta = delta_value_bits(&q, comps, bits) < plain_value_bits(keys.len(), bits);
    AnimatedTrack {
        comps,
        frames: keys.iter().map(|&k| k as u16).collect(),
        bits: bits.to_vec(),
        lo: lo.to_vec(),
        extent: extent.to_vec(),
        q,
        delta,
    }
}

/// What [`encode`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct EncodeReport {
    /// The share factor used (metres of error allowed per bone).
    pub alpha: f64,
    /// The world error measured on the in-memory decode, metres.
    pub error_m: f64,
    /// Reconstruction chosen.
    pub interp: Interp,
}

/// Why a clip cannot be encoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AnimError {
    /// More than 65 535 frames, no frames, or a bad rate.
    #[error("clip {0}")]
    Shape(String),
    /// The tolerance is not a positive finite number.
    #[error("tolerance {0} m is not a positive finite number")]
    Tolerance(f64),
}

/// The track of a rotation that moves no measured point: the rest rotation `rest`, as
/// [`Track::Default`] when it is the identity, else as a constant of its float32 components
/// (`x, y, z` with `w ≥ 0` rebuilt when `w ≥` [`DROP_W_MIN`], else all four).
fn rest_rotation_track(rest: glam::DQuat) -> Track {
    let q = if rest.w < 0.0 { -rest } else { rest };
    if q == glam::DQuat::IDENTITY {
        return Track::Default;
    }
    let v: Vec<f32> = q.to_array().iter().map(|&c| c as f32).collect();
    if q.w >= DROP_W_MIN {
        Track::Constant(v[..3].to_vec())
    } else {
        Track::Constant(v)
    }
}

/// The three tracks of bone `b` with share `alpha × mult[role]`; a rotation with no lever
/// (nothing measured moves with it) is kept at `rest_rotation` ([`rest_rotation_track`]).
fn encode_bone(
    b: usize,
    s: &[Samples; 3],
    lev: &(Vec<f64>, Vec<f64>),
    alpha: f64,
    mult: [f64; 3],
    cubic: bool,
    rest_rotation: glam::DQuat,
) -> BoneTracks {
    let tol = |a: f64, lever: f64| {
        if lever > 0.0 {
            a / lever
        } else {
            f64::INFINITY
        }
    };
    let rotation = if lev.0[b] > 0.0 {
        encode_track(
            Role::Rotation,
            &s[0],
            tol(alpha * mult[0], lev.0[b]).min(4.0),
            cubic,
        )
    } else {
        rest_rotation_track(rest_rotation)
    };
    BoneTracks {
        rotation,
        translation: encode_track(Role::Translation, &s[1], alpha * mult[1], cubic),
        scale: encode_track(
            Role::Scale,
            &s[2],
            tol(alpha * mult[2], lev.1[b]).min(1e6),
            cubic,
        ),
    }
}

fn build(
    clip: &Clip,
    samples: &[[Samples; 3]],
    lev: &(Vec<f64>, Vec<f64>),
    alpha: f64,
    interp: Interp,
) -> EncodedClip {
    let cubic = interp == Interp::Cubic;
    let rest = clip.skeleton.bones();
    let bones = samples
        .iter()
        .enumerate()
        .map(|(b, s)| encode_bone(b, s, lev, alpha, [1.0; 3], cubic, rest[b].rest_rotation))
        .collect();
    EncodedClip {
        sample_rate: clip.fps() as f32,
        num_frames: clip.frame_count() as u16,
        interp,
        bones,
    }
}

fn track_size(t: &Track) -> usize {
    let one = EncodedClip {
        sample_rate: 1.0,
        num_frames: 1,
        interp: Interp::Linear,
        bones: vec![BoneTracks {
            rotation: t.clone(),
            translation: Track::Default,
            scale: Track::Default,
        }],
    };
    encoded_size(&one)
}

fn slot_mut(bt: &mut BoneTracks, role: usize) -> &mut Track {
    match role {
        0 => &mut bt.rotation,
        1 => &mut bt.translation,
        _ => &mut bt.scale,
    }
}

/// Greedy refinement of the per-track shares: loosen one animated track at a time and keep
/// the change when the clip stays within the tolerance and gets smaller. The worst error is a
/// maximum over joints and frames, so most tracks have slack the uniform share leaves unused.
#[allow(clippy::too_many_arguments)]
fn refine(
    clip: &Clip,
    samples: &[[Samples; 3]],
    lev: &(Vec<f64>, Vec<f64>),
    alpha: f64,
    enc: &mut EncodedClip,
    err: &mut f64,
    metric: Metric,
) {
    let cubic = enc.interp == Interp::Cubic;
    let nb = samples.len();
    let mut mult = vec![[1.0f64; 3]; nb];
    for factor in [2.0, 1.5, 1.25, 1.1] {
        for b in 0..nb {
            for role in 0..3 {
                let cur = [
                    &enc.bones[b].rotation,
                    &enc.bones[b].translation,
                    &enc.bones[b].scale,
                ][role];
                if !matches!(cur, Track::Animated(_)) {
                    continue;
                }
                let before = track_size(cur);
                let mut m = mult[b];
                m[role] *= factor;
                let cand = encode_bone(
                    b,
                    &samples[b],
                    lev,
                    alpha,
                    m,
                    cubic,
                    clip.skeleton.bones()[b].rest_rotation,
                );
                let new_t = [&cand.rotation, &cand.translation, &cand.scale][role].clone();
                if track_size(&new_t) >= before {
                    continue;
                }
                let old = std::mem::replace(slot_mut(&mut enc.bones[b], role), new_t);
                let e = world_error(clip, &Decoder::new(enc).decompress(), metric.shell_m);
                if e <= metric.tolerance_m {
                    mult[b] = m;
                    *err = e;
                } else {
                    *slot_mut(&mut enc.bones[b], role) = old;
                }
            }
        }
    }
}

/// Size in bytes of the encoded clip in the container (see `statepack::formats::anim_clip`).
pub fn encoded_size(e: &EncodedClip) -> usize {
    let mut bytes = 4 + 1 + 1 + 2 + 4 + 2 + 4;
    let mut bits = 0usize;
    for b in &e.bones {
        for t in [&b.rotation, &b.translation, &b.scale] {
            bytes += match t {
                Track::Default => 1,
                Track::Constant(v) => {
                    let (b, s) = constant_cost(v);
                    bits += s;
                    b
                }
                Track::Animated(a) => {
                    bits += animated_stream_bits(a);
                    animated_descriptor_len(a.comps)
                }
            };
        }
    }
    bytes + bits.div_ceil(8)
}

/// Encodes `clip` so that the world error of its decode is within `metric` (see the
/// [module documentation](self)). `interp` `None` tries both and keeps the smaller.
///
/// # Errors
///
/// [`AnimError`] for a clip without frames or with more than 65 535, a non-positive rate, or
/// a tolerance that is not positive.
pub fn encode(
    clip: &Clip,
    metric: Metric,
    interp: Option<Interp>,
) -> Result<(EncodedClip, EncodeReport), AnimError> {
    let n = clip.frame_count();
    if n == 0 || n > usize::from(u16::MAX) {
        return Err(AnimError::Shape(format!(
            "has {n} frames (1..=65535 supported)"
        )));
    }
    if !(metric.tolerance_m.is_finite() && metric.tolerance_m > 0.0) {
        return Err(AnimError::Tolerance(metric.tolerance_m));
    }
    let lev = levers(clip, metric.shell_m);
    let samples: Vec<[Samples; 3]> = (0..clip.skeleton.len())
        .map(|b| {
            [
                rotation_samples(clip, b),
                vec_samples(clip, b, false),
                vec_samples(clip, b, true),
            ]
        })
        .collect();
    let measure =
        |e: &EncodedClip| world_error(clip, &Decoder::new(e).decompress(), metric.shell_m);
    let modes = match interp {
        Some(m) => vec![m],
        None => vec![Interp::Linear, Interp::Cubic],
    };
    let mut best: Option<(usize, EncodedClip, EncodeReport)> = None;
    for mode in modes {
        // Find a passing alpha by shrinking, then bisect (in log space) towards the largest.
        let t = metric.tolerance_m;
        let mut hi = t * 2.0;
        let mut ok: Option<(f64, EncodedClip, f64)> = None;
        let mut a = t;
        for _ in 0..40 {
            let e = build(clip, &samples, &lev, a, mode);
            let err = measure(&e);
            if err <= t {
                ok = Some((a, e, err));
                break;
            }
            hi = a;
            a /= 2.0;
        }
        let Some((mut lo_a, mut enc, mut err)) = ok else {
            continue;
        };
        for _ in 0..8 {
            let mid = (lo_a * hi).sqrt();
            let e = build(clip, &samples, &lev, mid, mode);
            let m = measure(&e);
            if m <= t {
                lo_a = mid;
                enc = e;
                err = m;
            } else {
                hi = mid;
            }
        }
        refine(clip, &samples, &lev, lo_a, &mut enc, &mut err, metric);
        let size = encoded_size(&enc);
        if best.as_ref().is_none_or(|b| size < b.0) {
            best = Some((
                size,
                enc,
                EncodeReport {
                    alpha: lo_a,
                    error_m: err,
                    interp: mode,
                },
            ));
        }
    }
    best.map(|(_, e, r)| (e, r))
        .ok_or_else(|| AnimError::Shape("could not be brought within the tolerance".into()))
}

/// Converts a decoded f64 pose row to f32 poses (for comparisons).
pub fn to_pose32(row: &[LocalTransform]) -> Vec<Pose32> {
    row.iter()
        .map(|t| Pose32 {
            translation: t.translation.as_vec3(),
            rotation: t.rotation.as_quat(),
            scale: t.scale.as_vec3(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_bounds_cover_the_value() {
        for v in [0.0, 1e-5, 0.123456, -0.98765, 3.25, -1234.5678] {
            assert!(f64::from(f16_floor(v)) <= v);
            assert!(f64::from(f16_ceil(v)) >= v);
            assert_eq!(f16_from_bits(f16_to_bits(1.0)), 1.0);
        }
    }

    #[test]
    fn one_and_two_frame_clips_and_bad_tolerances() {
        let walk = crate::motion::walk::study_walk_clip();
        for n in [1, 2, 3] {
            let mut clip = walk.clone();
            clip.frames.truncate(n);
            let metric = Metric {
                tolerance_m: 0.0001,
                shell_m: 0.01,
            };
            let (enc, rep) = encode(&clip, metric, None).unwrap();
            assert_eq!(enc.num_frames as usize, n);
            let dec = Decoder::new(&enc).decompress();
            assert_eq!(dec.len(), n);
            assert!(
                world_error(&clip, &dec, 0.01) <= 0.0001,
                "{n} frames: {rep:?}"
            );
        }
        let clip = walk.clone();
        for t in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let m = Metric {
                tolerance_m: t,
                shell_m: 0.0,
            };
            assert!(matches!(
                encode(&clip, m, None),
                Err(AnimError::Tolerance(_))
            ));
        }
        let mut empty = walk;
        empty.frames.clear();
        assert!(matches!(
            encode(
                &empty,
                Metric {
                    tolerance_m: 0.001,
                    shell_m: 0.0
                },
                None
            ),
            Err(AnimError::Shape(_))
        ));
    }

    /// Under the joint metric a leaf bone's rotation moves no joint; it is kept at the
    /// bone's rest (bind) rotation, not the identity, whatever it does in the clip. Under a
    /// shell it is measured and follows the clip.
    #[test]
    fn leaf_rotations_keep_the_rest_pose_under_the_joint_metric() {
        use crate::motion::{Bone, Skeleton};
        use glam::DQuat;
        let bind = [
            DQuat::from_rotation_x(0.7) * DQuat::from_rotation_y(-0.4),
            // w below DROP_W_MIN: stored with four components.
            DQuat::from_rotation_z(3.1),
        ];
        let bones = vec![
            Bone {
                name: "root".into(),
                parent: None,
                rest_translation: DVec3::new(0.0, 1.0, 0.0),
                rest_rotation: DQuat::IDENTITY,
            },
            Bone {
                name: "neck".into(),
                parent: Some(0),
                rest_translation: DVec3::new(0.0, 0.5, 0.0),
                rest_rotation: DQuat::IDENTITY,
            },
            Bone {
                name: "eye".into(),
                parent: Some(1),
                rest_translation: DVec3::new(0.03, 0.1, 0.05),
                rest_rotation: bind[0],
            },
            Bone {
                name: "toe".into(),
                parent: Some(0),
                rest_translation: DVec3::new(0.1, -0.9, 0.1),
                rest_rotation: bind[1],
            },
        ];
        let skeleton = Skeleton::new(bones).unwrap();
        let frames: Vec<Vec<LocalTransform>> = (0..30)
            .map(|f| {
                let t = f as f64 / 29.0;
                let mut row = skeleton.rest_pose();
                row[0].rotation = DQuat::from_rotation_y(t);
                row[1].rotation = DQuat::from_rotation_x(0.3 * t);
                // The leaves turn far from their bind pose during the clip.
                row[2].rotation = bind[0] * DQuat::from_rotation_z(1.5 * t);
                row[3].rotation = DQuat::from_rotation_x(-1.2 * t);
                row
            })
            .collect();
        let clip = Clip::new("leaves", skeleton, 1.0 / 30.0, frames).unwrap();
        let joints = Metric {
            tolerance_m: 0.001,
            shell_m: 0.0,
        };
        let (enc, _) = encode(&clip, joints, None).unwrap();
        let dec = Decoder::new(&enc).decompress();
        assert!(world_error(&clip, &dec, 0.0) <= 0.001);
        // The constant's quantisation is float32 components: a few float32 steps of a unit
        // quaternion's components, as an angle (about 1e-6 rad).
        let step = 8.0 * f64::from(f32::EPSILON);
        for (leaf, rest) in [(2, bind[0]), (3, bind[1])] {
            assert!(
                matches!(enc.bones[leaf].rotation, Track::Constant(_)),
                "bone {leaf}: {:?}",
                enc.bones[leaf].rotation
            );
            for row in &dec {
                let a = crate::quant::angle_between_rad(row[leaf].rotation, rest);
                assert!(a <= step, "bone {leaf}: {a} rad from its rest rotation");
            }
        }
        // An identity rest rotation is the default track.
        let mut plain = clip.clone();
        plain.skeleton = Skeleton::new(
            plain
                .skeleton
                .bones()
                .iter()
                .map(|b| Bone {
                    rest_rotation: DQuat::IDENTITY,
                    ..b.clone()
                })
                .collect(),
        )
        .unwrap();
        let (enc, _) = encode(&plain, joints, None).unwrap();
        assert_eq!(enc.bones[2].rotation, Track::Default);
        // A shell measures the leaves: their decoded rotation follows the clip.
        let shell = Metric {
            tolerance_m: 0.001,
            shell_m: 0.03,
        };
        let (enc, _) = encode(&clip, shell, None).unwrap();
        let dec = Decoder::new(&enc).decompress();
        assert!(world_error(&clip, &dec, 0.03) <= 0.001);
        let last = clip.frame_count() - 1;
        let a =
            crate::quant::angle_between_rad(dec[last][3].rotation, clip.frames[last][3].rotation);
        assert!(a < 0.05, "{a}");
    }

    #[test]
    fn the_study_walk_is_within_tolerance_for_both_metrics() {
        let mut clip = crate::motion::walk::study_walk_clip();
        clip.frames.truncate(60);
        for shell in [0.0, 0.03] {
            let metric = Metric {
                tolerance_m: 0.002,
                shell_m: shell,
            };
            let (enc, rep) = encode(&clip, metric, None).unwrap();
            let dec = Decoder::new(&enc).decompress();
            let err = world_error(&clip, &dec, shell);
            assert!(err <= 0.002, "shell {shell}: {err}");
            assert_eq!(err, rep.error_m);
        }
    }
}
