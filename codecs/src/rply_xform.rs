//! Transform quantization and closed-loop transform deltas of op-stream replays (RPLY v3,
//! `specs/rply-v3.txt`, "OpStream": the XFORM and XFORM_D payloads).
//!
//! # Quantizers, steps and worst-case errors
//!
//! - **Full rotation** ([`quantize_axis_angle`]): the rotation as an axis-angle vector (axis
//!   times angle, angle in `[0, π]`) with each component scaled so that π maps to 32 767,
//!   rounded, clamped to ±32 767. Step π/32 767 ≈ 9.59e-5 rad per component; the decoded
//!   rotation is within [`AXIS_ANGLE_ERROR_BOUND_RAD`] of the input (tested).
//! - **Yaw** ([`quantize_yaw`]): `atan2(-look.x, -look.z)` wrapped to `[-π, π)`, scaled the
//!   same way; error at most half a step, 4.8e-5 rad. Only used for *upright* rotations
//!   ([`is_upright`]: the up vector's dot product with world up above 0.99995, i.e. tilted
//!   by less than about 0.573°); the tilt is dropped, so the rotation error of a yaw-only
//!   sample is at most the tilt plus half a step ([`UPRIGHT_MAX_TILT_RAD`]).
//! - **Deltas**: position in 1/32 stud (3 × i8, or 3 × i16 for fast movers), yaw in 1/64
//!   rad (i8), tilted rotation as an axis-angle vector in 1/128 rad (3 × i8) applied in the
//!   entity's own frame (last rotation times the delta).
//!
//! # Closed loop
//!
//! [`XformEncoder`] keeps an [`XformState`], the exact state a player reconstructs, and
//! computes every delta against it, applying the step it emits through the same code the
//! player runs ([`XformState::apply`]). The error after any number of deltas is therefore
//! the error of one step, never a sum; this includes the state right after a full XFORM,
//! which holds the *dequantized* rotation (the reference implementation keeps the
//! unquantized one there, so its first delta after each full sample is off by the
//! full-rotation quantization error).
//!
//! Skipping: a position change below `pos_threshold_studs` and a rotation change below
//! `rot_threshold_rad` are not written, so the reconstruction lags by less than the
//! threshold. A delta that does not fit its integer type, a switch between upright and
//! tilted, or a missing base forces a full sample.

use glam::{DQuat, DVec3};
use std::f64::consts::PI;

/// Scale of full rotations and yaw: code = round(radians × 32 767 / π).
pub const ROT_SCALE: f64 = 32767.0 / PI;
/// Position delta unit: 1/32 stud.
pub const POS_Q: f64 = 32.0;
/// Yaw delta unit: 1/64 rad.
pub const YAW_Q: f64 = 64.0;
/// Tilted rotation delta unit: 1/128 rad per axis-angle component.
pub const ROT_Q: f64 = 128.0;
/// A rotation is upright when its up vector's dot product with world up exceeds this
/// (the spec's "within 0.005% of world up").
pub const UPRIGHT_MIN_DOT: f64 = 0.99995;
/// Largest tilt an upright rotation can have, acos(0.99995) ≈ 0.01 rad, plus half a yaw
/// step: the worst rotation error of a yaw-only sample.
pub const UPRIGHT_MAX_TILT_RAD: f64 = 0.010_000_1 + 0.5 / ROT_SCALE;
/// Worst rotation error of [`quantize_axis_angle`] followed by [`dequantize_axis_angle`],
/// in radians (half a step on each of three components is 8.3e-5 rad near the identity;
/// the bound leaves room for the stretch of the map near π, measured below 1.6e-4).
pub const AXIS_ANGLE_ERROR_BOUND_RAD: f64 = 2.0e-4;

/// Wraps an angle in radians to `[-π, π)`.
pub fn wrap_angle(a: f64) -> f64 {
    (a + PI).rem_euclid(2.0 * PI) - PI
}

/// Up vector (rotated +Y) of a rotation.
pub fn up_vector(q: DQuat) -> DVec3 {
    q * DVec3::Y
}

/// True when the rotation's up vector is within 0.005% of world up (dot > 0.99995).
pub fn is_upright(q: DQuat) -> bool {
    up_vector(q).dot(DVec3::Y) > UPRIGHT_MIN_DOT
}

/// Yaw of a rotation: `atan2(-look.x, -look.z)` with look = rotated −Z, in `(-π, π]`.
pub fn yaw_of(q: DQuat) -> f64 {
    let look = q * DVec3::NEG_Z;
    (-look.x).atan2(-look.z)
}

/// The rotation about world up by `yaw` radians.
pub fn yaw_rotation(yaw: f64) -> DQuat {
    DQuat::from_rotation_y(yaw)
}

/// Yaw code: round(wrap(yaw) × 32 767/π) ([`wrap_angle`], to `[-π, π)`), clamped to
/// ±32 767, except that a half turn keeps its side: a positive yaw that wraps to −π (π
/// itself) gives 32 767, a negative one −32 767, the two codes of the same rotation. So the
/// yaw a code decodes to ([`dequantize_yaw`], then [`yaw_rotation`] and [`yaw_of`] as a
/// player and a recorder take it) gives the same code back for every code in ±32 767.
/// A non-finite yaw gives 0; callers check finiteness first.
pub fn quantize_yaw(yaw: f64) -> i16 {
    if !yaw.is_finite() {
        return 0;
    }
    let w = wrap_angle(yaw);
    let y = if w == -PI && yaw > 0.0 { PI } else { w };
    crate::quant::quantize_scaled(y, ROT_SCALE, 32767.0) as i16
}

/// Yaw in radians of a code.
pub fn dequantize_yaw(q: i16) -> f64 {
    f64::from(q) / ROT_SCALE
}

/// Largest length, in codes, of an axis-angle code [`quantize_axis_angle`] writes: a
/// rotation's short-way vector is at most π long (32 767 codes) and rounding each of its
/// three components moves it by at most √3/2 codes.
pub const AXIS_ANGLE_MAX_CODE_LEN: f64 = 32767.0 + 0.866_025_403_784_438_7;

/// Axis-angle code of a rotation: the short-way vector, axis × angle (angle in `[0, π]`),
/// each component times 32 767/π, rounded and clamped to ±32 767; `q` and `-q` give the
/// same code. `q` need not be normalized; a non-finite or zero quaternion gives the
/// identity's code.
///
/// **Half turns.** A player reads a code as the rotation by its length about its
/// direction, whatever the length ([`dequantize_axis_angle`], as the reference player
/// reads it), so near π a rotation has a second code, the other way about the opposite
/// axis (by 2π − angle), and rounding can make either code longer than π. Of the two, each
/// rounded, the one that reads nearer the rotation is written (the short way on a tie,
/// such as an exact half turn, whose two codes are each other's negation), among codes at
/// most [`AXIS_ANGLE_MAX_CODE_LEN`] long. So every code this writes, a half turn's of
/// either sign included, decodes to a rotation that quantizes back to the same code: a
/// rotation decoded from a file and written again keeps its bytes. A code longer than
/// that (which this never writes) is written again as the short-way code of its rotation.
pub fn quantize_axis_angle(q: DQuat) -> [i16; 3] {
    let v = axis_angle_vector(q);
    let short = code_of(v);
    let angle = v.length();
    // The other way is only a candidate where it can be at most the longest code written.
    if angle < 2.0 * PI - AXIS_ANGLE_MAX_CODE_LEN / ROT_SCALE {
        return short;
    }
    let other = -v / angle * (2.0 * PI - angle) * ROT_SCALE;
    // `other` is in codes.
    if other.abs().max_element() >= 32767.5 {
        return short;
    }
    let long = code_of(other / ROT_SCALE);
    let len_sq: f64 = long.iter().map(|&c| f64::from(c) * f64::from(c)).sum();
    if len_sq > AXIS_ANGLE_MAX_CODE_LEN * AXIS_ANGLE_MAX_CODE_LEN {
        return short;
    }
    let q = q.normalize();
    // Chordal distance between rotations: well conditioned near zero, unlike an angle.
    let dist = |c: [i16; 3]| {
        let r = dequantize_axis_angle(c);
        (r - q).length().min((r + q).length())
    };
    if dist(long) + 1e-13 < dist(short) {
        long
    } else {
        short
    }
}

/// Each component of an axis-angle vector (radians) times 32 767/π, rounded and clamped.
fn code_of(v: DVec3) -> [i16; 3] {
    [v.x, v.y, v.z].map(|c| crate::quant::quantize_scaled(c, ROT_SCALE, 32767.0) as i16)
}

/// The rotation of an axis-angle code: by the code's length (× π/32 767 rad) about its
/// direction, any length (a code past π reads the long way, as the reference player reads
/// it).
pub fn dequantize_axis_angle(code: [i16; 3]) -> DQuat {
    from_axis_angle_vector(
        DVec3::new(f64::from(code[0]), f64::from(code[1]), f64::from(code[2])) / ROT_SCALE,
    )
}

/// The rotation of a 3 × i8 delta in 1/128 rad.
pub fn rotation_from_delta(d: [i8; 3]) -> DQuat {
    from_axis_angle_vector(DVec3::new(f64::from(d[0]), f64::from(d[1]), f64::from(d[2])) / ROT_Q)
}

/// Axis × angle of a rotation, angle in `[0, π]` (the short way).
pub fn axis_angle_vector(q: DQuat) -> DVec3 {
    if !q.is_finite() || q.length_squared() == 0.0 {
        return DVec3::ZERO;
    }
    let (axis, angle) = crate::snap_quant::to_axis_angle(q.normalize());
    axis * angle
}

/// The rotation of an axis × angle vector (the identity below 1e-6 rad).
pub fn from_axis_angle_vector(v: DVec3) -> DQuat {
    let angle = v.length();
    if angle < 1e-6 {
        DQuat::IDENTITY
    } else {
        DQuat::from_axis_angle(v / angle, angle)
    }
}

/// The rotation base a delta applies to. Equality is bitwise (a NaN base equals itself).
#[derive(Debug, Clone, Copy, Default)]
pub enum RotBase {
    /// No rotation sample yet (or the last full sample had none).
    #[default]
    None,
    /// Upright: yaw in radians, as reconstructed.
    Yaw(f64),
    /// Tilted: the full rotation, as reconstructed.
    Tilted(DQuat),
}

impl PartialEq for RotBase {
    fn eq(&self, o: &Self) -> bool {
        match (self, o) {
            (RotBase::None, RotBase::None) => true,
            (RotBase::Yaw(a), RotBase::Yaw(b)) => a.to_bits() == b.to_bits(),
            (RotBase::Tilted(a), RotBase::Tilted(b)) => bits4(*a) == bits4(*b),
            _ => false,
        }
    }
}

/// One transform step as stored: a full sample (XFORM) or a delta (XFORM_D).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XformStep {
    /// A full sample (XFORM); each part is present when its mask bit is set.
    Full {
        /// Position in studs (mask bit 1).
        pos: Option<[f32; 3]>,
        /// Full rotation code (mask bit 2).
        rot: Option<[i16; 3]>,
        /// Yaw code (mask bit 4).
        yaw: Option<i16>,
    },
    /// A delta (XFORM_D); each part is present when its mask bit is set.
    Delta {
        /// 3 × i8 position delta in 1/32 stud (mask bit 1).
        pos8: Option<[i8; 3]>,
        /// 3 × i16 position delta in 1/32 stud (mask bit 2).
        pos16: Option<[i16; 3]>,
        /// Yaw delta in 1/64 rad (mask bit 4).
        yaw: Option<i8>,
        /// Axis-angle rotation delta in 1/128 rad (mask bit 8).
        rot: Option<[i8; 3]>,
    },
}

impl XformStep {
    /// The op's mask byte.
    pub fn mask(&self) -> u8 {
        match self {
            XformStep::Full { pos, rot, yaw } => {
                u8::from(pos.is_some())
                    | u8::from(rot.is_some()) << 1
                    | u8::from(yaw.is_some()) << 2
            }
            XformStep::Delta {
                pos8,
                pos16,
                yaw,
                rot,
            } => {
                u8::from(pos8.is_some())
                    | u8::from(pos16.is_some()) << 1
                    | u8::from(yaw.is_some()) << 2
                    | u8::from(rot.is_some()) << 3
            }
        }
    }
}

/// Why a step cannot be applied to the current state.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum XformError {
    /// A position delta whose entity's last XFORM carried no position, or that has had no
    /// XFORM (the reference player adds it to zero; here it is an error).
    #[error("position delta with no position in the entity's last XFORM")]
    PosDeltaWithoutBase,
    /// A yaw delta whose base is not a yaw-only sample.
    #[error("yaw delta with no earlier yaw-only sample (base: {0})")]
    YawDeltaWithoutBase(&'static str),
    /// A rotation delta whose base is not a full rotation.
    #[error("rotation delta with no earlier full rotation (base: {0})")]
    RotDeltaWithoutBase(&'static str),
    /// Both full rotation and yaw in one XFORM.
    #[error("XFORM mask has both full rotation (2) and yaw (4)")]
    BothRotations,
    /// A position or rotation that is not finite or does not fit f32.
    #[error("transform is not finite or does not fit f32: {0}")]
    NotFinite(String),
}

fn base_name(b: &RotBase) -> &'static str {
    match b {
        RotBase::None => "none",
        RotBase::Yaw(_) => "yaw-only",
        RotBase::Tilted(_) => "full rotation",
    }
}

/// The transform state a player reconstructs for one entity, and the base of its deltas.
///
/// Deltas accumulate from the entity's last XFORM (spec, "OpStream"): every XFORM resets
/// both delta bases, to what it carries. After an XFORM without a position (mask 2 or 4)
/// a position delta has no base, after one without a rotation (mask 1) a rotation or yaw
/// delta has none; both are errors ([`XformError`]). What is *shown* is held per component,
/// as the reference player shows it: [`XformState::pos`] and [`XformState::shown_rot`] keep
/// the latest value any step gave.
///
/// Equality is bitwise on the floating-point fields, so a state holding a NaN position
/// (recorded raw by the reference recorder) equals its copy.
#[derive(Debug, Clone, Copy, Default)]
pub struct XformState {
    /// Position shown, in studs: the latest a full sample or a delta gave (kept when a
    /// later full sample carries none), or `None` before any position.
    pub pos: Option<DVec3>,
    /// True when the last XFORM carried a position, so position deltas may follow.
    pub pos_base: bool,
    /// Rotation base of the next delta.
    pub base: RotBase,
    /// The last rotation shown (kept when a full sample carries no rotation, as the
    /// reference player does), or `None` before any rotation.
    pub shown_rot: Option<DQuat>,
}

fn bits3(v: DVec3) -> [u64; 3] {
    [v.x.to_bits(), v.y.to_bits(), v.z.to_bits()]
}

fn bits4(q: DQuat) -> [u64; 4] {
    [q.x.to_bits(), q.y.to_bits(), q.z.to_bits(), q.w.to_bits()]
}

impl PartialEq for XformState {
    fn eq(&self, o: &Self) -> bool {
        self.pos.map(bits3) == o.pos.map(bits3)
            && self.pos_base == o.pos_base
            && self.base == o.base
            && self.shown_rot.map(bits4) == o.shown_rot.map(bits4)
    }
}

impl XformState {
    /// Applies one step. A full sample replaces what it carries and resets both delta bases
    /// (a component it does not carry has no base until the next XFORM that carries it,
    /// though its last value stays shown); a delta adds to the bases.
    ///
    /// Errors: both rotations in one XFORM; a delta of a component without a base.
    pub fn apply(&mut self, step: &XformStep) -> Result<(), XformError> {
        match *step {
            XformStep::Full { pos, rot, yaw } => {
                if rot.is_some() && yaw.is_some() {
                    return Err(XformError::BothRotations);
                }
                if let Some(p) = pos {
                    self.pos = Some(DVec3::new(
                        f64::from(p[0]),
                        f64::from(p[1]),
                        f64::from(p[2]),
                    ));
                }
                self.pos_base = pos.is_some();
                self.base = match (rot, yaw) {
                    (Some(r), _) => RotBase::Tilted(dequantize_axis_angle(r)),
                    (None, Some(y)) => RotBase::Yaw(dequantize_yaw(y)),
                    (None, None) => RotBase::None,
                };
                if let Some(r) = self.base_rotation() {
                    self.shown_rot = Some(r);
                }
            }
            XformStep::Delta {
                pos8,
                pos16,
                yaw,
                rot,
            } => {
                let d = match (pos8, pos16) {
                    (Some(p), _) => Some(p.map(f64::from)),
                    (None, Some(p)) => Some(p.map(f64::from)),
                    _ => None,
                };
                if d.is_some() && !(self.pos_base && self.pos.is_some()) {
                    return Err(XformError::PosDeltaWithoutBase);
                }
                if yaw.is_some() && !matches!(self.base, RotBase::Yaw(_)) {
                    return Err(XformError::YawDeltaWithoutBase(base_name(&self.base)));
                }
                if rot.is_some() && !matches!(self.base, RotBase::Tilted(_)) {
                    return Err(XformError::RotDeltaWithoutBase(base_name(&self.base)));
                }
                if let (Some(d), Some(p)) = (d, self.pos.as_mut()) {
                    *p += DVec3::new(d[0], d[1], d[2]) / POS_Q;
                }
                if let (Some(dy), RotBase::Yaw(y)) = (yaw, &mut self.base) {
                    *y = wrap_angle(*y + f64::from(dy) / YAW_Q);
                }
                if let (Some(dr), RotBase::Tilted(r)) = (rot, &mut self.base) {
                    *r = (*r * rotation_from_delta(dr)).normalize();
                }
                if let Some(r) = self.base_rotation() {
                    self.shown_rot = Some(r);
                }
            }
        }
        Ok(())
    }

    /// The rotation of the current base, if any.
    pub fn base_rotation(&self) -> Option<DQuat> {
        match self.base {
            RotBase::None => None,
            RotBase::Yaw(y) => Some(yaw_rotation(y)),
            RotBase::Tilted(r) => Some(r),
        }
    }
}

/// Thresholds under which a change is not written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Position changes shorter than this (studs) are skipped. Default 0.05.
    pub pos_threshold_studs: f64,
    /// Rotation changes smaller than this (radians) are skipped. Default 0.5° (0.008727).
    pub rot_threshold_rad: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            pos_threshold_studs: 0.05,
            rot_threshold_rad: 0.5f64.to_radians(),
        }
    }
}

/// Closed-loop encoder of one entity's transforms (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct XformEncoder {
    state: XformState,
}

fn fits8(v: f64) -> bool {
    (-127.0..=127.0).contains(&v)
}

fn fits16(v: f64) -> bool {
    (-32767.0..=32767.0).contains(&v)
}

impl XformEncoder {
    /// A new encoder with no base: its first step is a full sample.
    pub fn new() -> Self {
        Self::default()
    }

    /// The state the player has after the steps emitted so far.
    pub fn state(&self) -> &XformState {
        &self.state
    }

    /// Encodes a transform (position in studs, rotation as a unit quaternion): a full sample
    /// when `force_full`, when there is no base, on overflow or on an upright/tilted switch;
    /// otherwise a delta, or `None` when the change is under both thresholds. The step is
    /// applied to the encoder's state before it is returned.
    pub fn encode(
        &mut self,
        pos: DVec3,
        rot: DQuat,
        force_full: bool,
        th: &Thresholds,
    ) -> Result<Option<XformStep>, XformError> {
        let f32_ok = |v: f64| v.is_finite() && v.abs() <= f64::from(f32::MAX);
        if !(f32_ok(pos.x) && f32_ok(pos.y) && f32_ok(pos.z)) {
            return Err(XformError::NotFinite(format!("position {pos}")));
        }
        if !rot.is_finite() || rot.length_squared() < 1e-12 {
            return Err(XformError::NotFinite(format!("rotation {rot}")));
        }
        let rot = rot.normalize();
        let upright = is_upright(rot);
        let step = match self.delta(pos, rot, upright, th) {
            Some(d) if !force_full => d,
            _ => Some(XformStep::Full {
                pos: Some([pos.x as f32, pos.y as f32, pos.z as f32]),
                rot: (!upright).then(|| quantize_axis_angle(rot)),
                yaw: upright.then(|| quantize_yaw(yaw_of(rot))),
            }),
        };
        if let Some(s) = &step {
            self.state.apply(s)?;
        }
        Ok(step)
    }

    /// The delta step, `Some(None)` to skip, or `None` when a full sample is needed.
    fn delta(
        &self,
        pos: DVec3,
        rot: DQuat,
        upright: bool,
        th: &Thresholds,
    ) -> Option<Option<XformStep>> {
        if !self.state.pos_base {
            return None;
        }
        let last = self.state.pos?;
        let dp = pos - last;
        let q = (dp * POS_Q).round();
        let (mut pos8, mut pos16) = (None, None);
        if dp.length() >= th.pos_threshold_studs && q != DVec3::ZERO {
            if fits8(q.x) && fits8(q.y) && fits8(q.z) {
                pos8 = Some([q.x as i8, q.y as i8, q.z as i8]);
            } else if fits16(q.x) && fits16(q.y) && fits16(q.z) {
                pos16 = Some([q.x as i16, q.y as i16, q.z as i16]);
            } else {
                return None;
            }
        }
        let (mut yaw, mut drot) = (None, None);
        match (upright, self.state.base) {
            (true, RotBase::Yaw(y)) => {
                let delta = wrap_angle(yaw_of(rot) - y);
                if delta.abs() >= th.rot_threshold_rad {
                    let d = (delta * YAW_Q).round();
                    if !fits8(d) {
                        return None;
                    }
                    if d != 0.0 {
                        yaw = Some(d as i8);
                    }
                }
            }
            (false, RotBase::Tilted(r)) => {
                let v = axis_angle_vector(r.conjugate() * rot);
                if v.length() >= th.rot_threshold_rad {
                    let d = (v * ROT_Q).round();
                    if !(fits8(d.x) && fits8(d.y) && fits8(d.z)) {
                        return None;
                    }
                    if d != DVec3::ZERO {
                        drot = Some([d.x as i8, d.y as i8, d.z as i8]);
                    }
                }
            }
            _ => return None,
        }
        if pos8.is_none() && pos16.is_none() && yaw.is_none() && drot.is_none() {
            return Some(None);
        }
        Some(Some(XformStep::Delta {
            pos8,
            pos16,
            yaw,
            rot: drot,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::angle_between_rad;

    #[test]
    fn yaw_codes_at_the_edges() {
        assert_eq!(quantize_yaw(PI), 32767, "a half turn keeps its side");
        assert_eq!(quantize_yaw(-PI), -32767);
        assert_eq!(quantize_yaw(PI + 1e-9), -32767, "past π: wrapped");
        assert_eq!(quantize_yaw(-PI - 1e-9), 32767);
        assert_eq!(quantize_yaw(3.0 * PI), 32767);
        assert_eq!(quantize_yaw(0.0), 0);
        assert_eq!(quantize_yaw(PI / 2.0), 16384);
        assert_eq!(quantize_yaw(PI - 1e-9), 32767);
        assert!((dequantize_yaw(32767) - PI).abs() < 1e-12);
    }

    /// Every yaw code read as a player reads it (the rotation about world up) and taken as
    /// a recorder takes a rotation (its yaw, then the code) gives the same code, both half
    /// turns included; -32 768, which this never writes, reads as the rotation of 32 766.
    #[test]
    fn yaw_codes_read_back() {
        let back = |c: i16| quantize_yaw(yaw_of(yaw_rotation(dequantize_yaw(c))));
        for c in -32767..=32767 {
            assert_eq!(back(c), c);
        }
        assert_eq!(back(-32768), 32766);
    }

    /// Every axis-angle code this writes (at most [`AXIS_ANGLE_MAX_CODE_LEN`] long) reads
    /// as a rotation that quantizes back to the same code: the half turns of either sign
    /// (about an axis, and about diagonals, whose codes round past π), every code of the
    /// ring of lengths 32 764..=32 767.87 in the x-y plane, and random codes near π in
    /// space. Longer codes come back as the short-way code of their rotation.
    #[test]
    fn axis_angle_codes_read_back() {
        let back = |c: [i16; 3]| quantize_axis_angle(dequantize_axis_angle(c));
        let len = |c: [i16; 3]| {
            c.iter()
                .map(|&x| f64::from(x) * f64::from(x))
                .sum::<f64>()
                .sqrt()
        };
        for c in [
            [32767, 0, 0],
            [0, 32767, 0],
            [0, 0, 32767],
            [23170, 23170, 0],
            [23170, 0, -23170],
            [18918, 18918, 18918],
            [18918, -18918, 18918],
        ] {
            for c in [c, c.map(|x| -x)] {
                assert!(len(c) <= AXIS_ANGLE_MAX_CODE_LEN);
                assert_eq!(back(c), c, "half turn {c:?}");
            }
        }
        // Diagonal half turns round past π: their codes are not each other's negation.
        assert!(len([23170, 23170, 0]) > 32767.0);
        let mut ring = 0;
        for x in -32767i16..=32767 {
            let x2 = f64::from(x) * f64::from(x);
            let lo = (32764.0f64 * 32764.0 - x2).max(0.0).sqrt().floor() as i32;
            let hi = (AXIS_ANGLE_MAX_CODE_LEN * AXIS_ANGLE_MAX_CODE_LEN - x2)
                .max(0.0)
                .sqrt()
                .ceil()
                .min(32767.0) as i32;
            for y in lo..=hi {
                for c in [[x, y as i16, 0], [x, -y as i16, 0]] {
                    let l = len(c);
                    if !(32764.0..=AXIS_ANGLE_MAX_CODE_LEN).contains(&l) {
                        continue;
                    }
                    assert_eq!(back(c), c, "ring {c:?}");
                    ring += 1;
                }
            }
        }
        assert!(ring > 500_000, "{ring}");
        let mut s = 0x9E37_79B9u64;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut near = 0;
        while near < 100_000 {
            let d = DVec3::new(rnd(), rnd(), rnd());
            if d.length() < 0.1 || d.length() > 1.0 {
                continue;
            }
            let v = d.normalize() * (32766.0 + 2.0 * rnd().abs());
            let c = [v.x, v.y, v.z].map(|x| x.round() as i16);
            let l = len(c);
            if l > AXIS_ANGLE_MAX_CODE_LEN {
                // Never written: it comes back as its rotation's short-way code.
                let r = dequantize_axis_angle(back(c));
                let want = dequantize_axis_angle(c);
                assert!(
                    angle_between_rad(r, want) <= AXIS_ANGLE_ERROR_BOUND_RAD,
                    "{c:?}"
                );
                assert!(len(back(c)) <= AXIS_ANGLE_MAX_CODE_LEN);
                continue;
            }
            assert_eq!(back(c), c, "near π {c:?}");
            near += 1;
        }
    }

    /// Near a half turn `q` and `-q` still give the same code, and the code chosen reads
    /// at least as near the rotation as the short-way code.
    #[test]
    fn half_turn_codes_are_a_function_of_the_rotation() {
        let mut s = 0x2545_F491u64;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..100_000 {
            let axis = DVec3::new(rnd(), rnd(), rnd());
            if axis.length() < 0.1 {
                continue;
            }
            let q = DQuat::from_axis_angle(axis.normalize(), PI + rnd() * 2e-4);
            let c = quantize_axis_angle(q);
            assert_eq!(quantize_axis_angle(-q), c);
            let short = code_of(axis_angle_vector(q));
            let err = |c| angle_between_rad(dequantize_axis_angle(c), q);
            assert!(err(c) <= err(short) + 1e-12, "{q}");
            assert!(err(c) <= AXIS_ANGLE_ERROR_BOUND_RAD);
        }
    }

    #[test]
    fn yaw_convention_matches_look_vector() {
        for deg in [-179.0f64, -90.0, -10.0, 0.0, 33.0, 90.0, 179.0] {
            let q = yaw_rotation(deg.to_radians());
            assert!((yaw_of(q) - deg.to_radians()).abs() < 1e-12);
            assert!(is_upright(q));
        }
        // A tilt of 0.01 rad is not upright; 0.009 rad is.
        assert!(!is_upright(DQuat::from_rotation_x(0.0101)));
        assert!(is_upright(DQuat::from_rotation_x(0.0099)));
    }

    #[test]
    fn axis_angle_codes() {
        assert_eq!(quantize_axis_angle(DQuat::IDENTITY), [0, 0, 0]);
        assert_eq!(
            quantize_axis_angle(DQuat::from_rotation_x(PI)),
            [32767, 0, 0]
        );
        assert_eq!(
            quantize_axis_angle(DQuat::from_rotation_z(-PI / 2.0)),
            [0, 0, -16384]
        );
        let mut worst = 0.0f64;
        let mut s = 0x1234_5678u64;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..200_000 {
            let q = DQuat::from_xyzw(rnd(), rnd(), rnd(), rnd()).normalize();
            let back = dequantize_axis_angle(quantize_axis_angle(q));
            worst = worst.max(angle_between_rad(q, back));
        }
        assert!(worst <= AXIS_ANGLE_ERROR_BOUND_RAD, "{worst}");
    }

    #[test]
    fn closed_loop_error_stays_under_thresholds() {
        let th = Thresholds::default();
        let mut enc = XformEncoder::new();
        let mut player = XformState::default();
        let (mut worst_p, mut worst_r) = (0.0f64, 0.0f64);
        for i in 0..5000 {
            let t = f64::from(i) / 15.0;
            let pos = DVec3::new(t.sin() * 40.0, 3.0 + (t * 3.0).sin() * 0.02, t * 4.0);
            let rot = yaw_rotation(t * 0.7);
            if let Some(step) = enc.encode(pos, rot, i % 300 == 1, &th).unwrap() {
                player.apply(&step).unwrap();
            }
            assert_eq!(&player, enc.state());
            worst_p = worst_p.max((player.pos.unwrap() - pos).length());
            worst_r = worst_r.max(angle_between_rad(player.shown_rot.unwrap(), rot));
        }
        assert!(worst_p < th.pos_threshold_studs, "{worst_p}");
        assert!(worst_r < th.rot_threshold_rad, "{worst_r}");
    }

    #[test]
    fn tilted_then_upright_forces_full() {
        let th = Thresholds::default();
        let mut enc = XformEncoder::new();
        let p = DVec3::ZERO;
        let a = enc
            .encode(p, DQuat::from_rotation_x(0.3), false, &th)
            .unwrap();
        assert!(matches!(
            a,
            Some(XformStep::Full {
                rot: Some(_),
                yaw: None,
                ..
            })
        ));
        let b = enc
            .encode(p, DQuat::from_rotation_x(0.32), false, &th)
            .unwrap();
        assert!(matches!(b, Some(XformStep::Delta { rot: Some(_), .. })));
        let c = enc.encode(p, yaw_rotation(0.1), false, &th).unwrap();
        assert!(matches!(
            c,
            Some(XformStep::Full {
                rot: None,
                yaw: Some(_),
                ..
            })
        ));
        // A yaw change over 127/64 rad overflows the i8 and forces a full sample.
        let d = enc.encode(p, yaw_rotation(0.1 + 2.5), false, &th).unwrap();
        assert!(matches!(d, Some(XformStep::Full { .. })));
        // A 4-stud step needs i16, a 2000-stud step a full sample.
        let e = enc
            .encode(DVec3::new(4.0, 0.0, 0.0), yaw_rotation(2.6), false, &th)
            .unwrap();
        assert!(matches!(
            e,
            Some(XformStep::Delta {
                pos16: Some([128, 0, 0]),
                ..
            })
        ));
        let f = enc
            .encode(DVec3::new(2004.0, 0.0, 0.0), yaw_rotation(2.6), false, &th)
            .unwrap();
        assert!(matches!(f, Some(XformStep::Full { .. })));
    }

    #[test]
    fn deltas_without_base_are_errors() {
        let mut s = XformState::default();
        let d = |pos8, yaw, rot| XformStep::Delta {
            pos8,
            pos16: None,
            yaw,
            rot,
        };
        assert_eq!(
            s.apply(&d(Some([1, 0, 0]), None, None)),
            Err(XformError::PosDeltaWithoutBase)
        );
        assert!(s.apply(&d(None, Some(1), None)).is_err());
        s.apply(&XformStep::Full {
            pos: Some([0.0; 3]),
            rot: None,
            yaw: Some(0),
        })
        .unwrap();
        assert!(s.apply(&d(None, None, Some([1, 0, 0]))).is_err());
        assert!(s.apply(&d(Some([1, 2, 3]), Some(-3), None)).is_ok());
    }

    #[test]
    fn every_xform_resets_both_delta_bases() {
        let d = |pos8, rot| XformStep::Delta {
            pos8,
            pos16: None,
            yaw: None,
            rot,
        };
        let mut s = XformState::default();
        s.apply(&XformStep::Full {
            pos: Some([1.0, 2.0, 3.0]),
            rot: Some([100, 0, 0]),
            yaw: None,
        })
        .unwrap();
        // Rotation only (mask 2): the position stays shown but has no delta base.
        s.apply(&XformStep::Full {
            pos: None,
            rot: Some([200, 0, 0]),
            yaw: None,
        })
        .unwrap();
        assert_eq!(s.pos, Some(DVec3::new(1.0, 2.0, 3.0)));
        assert_eq!(
            s.apply(&d(Some([32, 0, 0]), None)),
            Err(XformError::PosDeltaWithoutBase)
        );
        assert!(s.apply(&d(None, Some([1, 0, 0]))).is_ok());
        // Yaw only (mask 4): the same for the position.
        s.apply(&XformStep::Full {
            pos: None,
            rot: None,
            yaw: Some(5),
        })
        .unwrap();
        assert_eq!(
            s.apply(&d(Some([32, 0, 0]), None)),
            Err(XformError::PosDeltaWithoutBase)
        );
        // Position only (mask 1): the rotation stays shown but has no delta base.
        s.apply(&XformStep::Full {
            pos: Some([0.0; 3]),
            rot: None,
            yaw: None,
        })
        .unwrap();
        assert_eq!(s.shown_rot, Some(yaw_rotation(dequantize_yaw(5))));
        assert!(s.apply(&d(None, Some([1, 0, 0]))).is_err());
        assert!(s.apply(&d(Some([32, 0, 0]), None)).is_ok());
        assert_eq!(s.pos, Some(DVec3::new(1.0, 0.0, 0.0)));
    }

    #[test]
    fn states_compare_bitwise() {
        let mut a = XformState::default();
        a.apply(&XformStep::Full {
            pos: Some([f32::NAN, 1.0, 2.0]),
            rot: None,
            yaw: Some(0),
        })
        .unwrap();
        let b = a;
        assert_eq!(a, b);
        let mut c = XformState::default();
        c.apply(&XformStep::Full {
            pos: Some([-0.0, 1.0, 2.0]),
            rot: None,
            yaw: Some(0),
        })
        .unwrap();
        let mut z = c;
        z.pos = Some(DVec3::new(0.0, 1.0, 2.0));
        assert_ne!(c, z);
        assert_ne!(a, c);
    }
}
