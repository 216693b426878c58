//! SNAP v1.3 delta frames and the closed-loop keyframe/delta chain.
//!
//! Spec sections implemented here (`specs/snap-v1.3.txt`): "Frame Schema" (which frames are
//! absolute), "Position delta", "Rotation delta" and the first-frame rule of "Recording
//! Schema". Absolute frames carry a [`PackedCFrame`] (see [`crate::snap_quant`]).
//!
//! # How the chain works
//!
//! [`SnapChainEncoder`] turns one sample per frame (position in studs, rotation) into a
//! [`SnapStep`]. Frame 0 and every frame whose index is a multiple of [`KEYFRAME_INTERVAL`]
//! (60) are keyframes ([`SnapStep::Absolute`]). Any other frame is a delta unless the motion
//! since the previous frame does not fit the delta encoding, in which case it is absolute
//! too. Deltas are measured against the state the decoder reconstructs, not against the
//! previous input sample (closed loop): the encoder runs a [`SnapChainDecoder`] over its own
//! output and uses that decoder's state, so quantization error never builds up between
//! keyframes. The reader and the encoder share that one decoding function.
//!
//! # Decisions where the spec is silent
//!
//! - The position limit [`MAX_POS_DELTA`] applies to the Euclidean length of the delta
//!   vector. A delta is used only when that length is at most 8.0 studs AND every rounded
//!   component fits an `i16`. A delta of exactly +8.0 studs on one axis rounds to 32768,
//!   which does not fit, and so does +8.0 − 1/8192 (32767.5 rounds to 32768, halves away
//!   from zero): both are written absolute. −8.0 rounds to −32768, which fits: a delta.
//! - The rotation delta takes the short way (angle in `[0, π]`), so `q` and `-q` give the
//!   same delta. The angle limit [`MAX_ROT_DELTA`] is inclusive (0.2 rad is allowed).
//! - Rounding is to the nearest integer, halves away from zero (as Luau's `math.round`).
//! - Positions are added in `f32`, like a Roblox `Vector3`; rotations are composed in `f64`
//!   and the decoder keeps a normalized `f32` quaternion.
//! - The keyframe schedule follows the frame index only: a frame forced absolute by large
//!   motion does not move the next scheduled keyframe. The decoder accepts a delta at a
//!   scheduled keyframe index (the spec asks the encoder to avoid it, not the reader to
//!   refuse it); it refuses a delta before the first absolute frame.
//!
//! # Error bounds of the chain
//!
//! At every frame, the state [`SnapChainDecoder`] reconstructs differs from the sample given
//! to [`SnapChainEncoder::push`] by at most:
//!
//! - **Rotation**: [`CHAIN_ROT_ERROR_BOUND_RAD`] = 1.1e-4 rad, at any position. The cases:
//!   a keyframe is within the CFrame bound (analytic worst case 1.0572e-4 rad); a delta
//!   with the rotation bit set is within `sqrt(3) · 0.5 / ROT_DELTA_SCALE ≈ 5.3e-6` rad
//!   plus `f32` rounding (~2.4e-7); a frame without the bit is within [`ROT_EPSILON`]
//!   (1e-4 rad), the rotation it chose not to send.
//! - **Position** (Euclidean, studs): [`chain_pos_error_bound`], which depends on `m`, the
//!   largest |coordinate| of the true position, because `f32` spacing grows with it:
//!   `max(1e-3, sqrt(3) · (2^-13 + 2^-24 (m + 1)), 3 · 2^-23 (m + 1))`. The terms: a frame
//!   without the position bit is off by less than `sqrt(FP_EPSILON)` = 1e-3 studs; a delta
//!   is off by at most half a step (2^-13 studs) per axis plus half an `f32` spacing from the
//!   addition; a keyframe stores X and Y exactly and Z with up to 3 units in the last place
//!   lost to the index bits. So the bound is 1e-3 studs up to about 2 800 studs from the
//!   origin, then grows linearly as ~3.6e-7 · m (3.6e-3 at 10 000 studs, 0.36 at 10^6).
//!
//! Both bounds hold at every frame, independently of the path length, because each frame's
//! error depends only on that frame (closed loop). Property tests drive smooth and jumpy
//! paths, with coordinates up to 10^7 studs, through the chain and check them. A fixed
//! sweep (test `sweep_mixed_paths`: 1 200 mixed smooth/jumpy paths of 600 frames, scales 10
//! to 10^7 studs) measured a rotation error of at most 9.04e-5 rad (at keyframes; about
//! 5.2e-6 on rotation deltas) and position errors up to 0.99998 of the bound, reached at
//! keyframes whose Z lies just above a power of two, where 3 units in the last place equal
//! the bound's linear term (so that term cannot be lowered).

use glam::{DQuat, DVec3, Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::snap_quant::{
    check_position, compress_cframe, decompress_cframe, to_axis_angle, unit_rotation, PackedCFrame,
    QuantError,
};

/// Every frame whose index (0-based within a recording) is a multiple of this is forced
/// absolute (SNAP v1.3, "Frame Schema"). Frames.
pub const KEYFRAME_INTERVAL: u32 = 60;

/// Largest Euclidean length of a position delta, in studs (SNAP v1.3, "Frame Schema").
/// Inclusive; see the module documentation for the `i16` rule at the edge.
pub const MAX_POS_DELTA: f64 = 8.0;

/// Largest rotation-delta angle, in radians (SNAP v1.3, "Frame Schema"). Inclusive.
pub const MAX_ROT_DELTA: f64 = 0.2;

/// Codes per stud of a position delta: code = round(delta_studs × 4096), a step of
/// 1/4096 ≈ 2.44e-4 studs (SNAP v1.3, "Position delta").
pub const POS_DELTA_SCALE: f64 = 4096.0;

/// Codes per radian of a rotation delta: 32767 / [`MAX_ROT_DELTA`] = 163 835, a step of
/// about 6.1e-6 rad (SNAP v1.3, "Rotation delta").
pub const ROT_DELTA_SCALE: f64 = 32767.0 / MAX_ROT_DELTA;

/// Threshold on the squared length of a position delta, in studs²: the position bit is set
/// only when the squared length is at least this (SNAP v1.3, "Position delta"), i.e. when
/// the delta is at least 1e-3 studs long.
pub const FP_EPSILON: f64 = 1e-6;

/// Threshold on the rotation-delta angle, in radians: the rotation bit is set only when the
/// angle exceeds this (SNAP v1.3, "Rotation delta").
pub const ROT_EPSILON: f64 = 1e-4;

/// Worst-case rotation error of the chain at any frame, in radians (see the module
/// documentation): the largest of the keyframe bound (1.0572e-4), [`ROT_EPSILON`] and the
/// delta step error (5.3e-6), with margin for `f32` rounding.
pub const CHAIN_ROT_ERROR_BOUND_RAD: f64 = 1.1e-4;

/// Bitfield value of an absolute frame (SNAP v1.3, "Frame Schema"); a sentinel, not a flag.
pub const ABSOLUTE_BITFIELD: u8 = 0b100;
/// Bitfield flag of a delta frame carrying a position delta.
pub const POS_DELTA_BIT: u8 = 0b001;
/// Bitfield flag of a delta frame carrying a rotation delta.
pub const ROT_DELTA_BIT: u8 = 0b010;

/// Worst-case Euclidean position error of the chain at a frame whose true position is
/// `pos_studs`, in studs (see the module documentation for the derivation):
/// `max(1e-3, sqrt(3) · (2^-13 + 2^-24 (m + 1)), 3 · 2^-23 (m + 1))` with `m` the largest
/// |coordinate| of `pos_studs` in studs. Equals 1e-3 for `m` up to about 2 800 studs and
/// grows as ~3.6e-7 · m beyond. Returns infinity for non-finite input. Never fails.
pub fn chain_pos_error_bound(pos_studs: Vec3) -> f64 {
    if !pos_studs.is_finite() {
        return f64::INFINITY;
    }
    let m = f64::from(pos_studs.abs().max_element()) + 1.0;
    let skipped = FP_EPSILON.sqrt();
    // f32 rounding: half an ulp per unit of magnitude (2^-24), one ulp (2^-23) per keyframe.
    let f32_ulp = f64::from(f32::EPSILON);
    let delta = 3f64.sqrt() * (2f64.powi(-13) + f32_ulp / 2.0 * m);
    let keyframe = 3.0 * f32_ulp * m;
    skipped.max(delta).max(keyframe)
}

/// One frame of a SNAP v1.3 chain, in numbers (the bytes are written by the raw layer).
///
/// - `Absolute`: a keyframe or forced absolute frame carrying a full [`PackedCFrame`].
/// - `Delta`: `pos` is the position delta in 1/4096 studs per axis (present when the
///   position bit is set), `rot` the rotation delta as axis × angle in 1/163 835 rad per
///   axis, object space (present when the rotation bit is set). Both absent is a
///   timing-only frame: state unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum SnapStep {
    /// Full position and rotation (bitfield `0b100`).
    Absolute(PackedCFrame),
    /// Changes since the previous frame (bitfield `0b0rp`).
    Delta {
        /// Position delta codes, 1/4096 studs each, added to the previous position.
        pos: Option<[i16; 3]>,
        /// Rotation delta codes, 1/163 835 rad each, applied in the previous frame's space.
        rot: Option<[i16; 3]>,
    },
}

impl SnapStep {
    /// The frame's bitfield byte (SNAP v1.3, "Frame Schema"): `0b100` for an absolute frame,
    /// otherwise [`POS_DELTA_BIT`] and/or [`ROT_DELTA_BIT`]. Never fails.
    pub fn bitfield(&self) -> u8 {
        match self {
            SnapStep::Absolute(_) => ABSOLUTE_BITFIELD,
            SnapStep::Delta { pos, rot } => {
                let mut bits = 0;
                if pos.is_some() {
                    bits |= POS_DELTA_BIT;
                }
                if rot.is_some() {
                    bits |= ROT_DELTA_BIT;
                }
                bits
            }
        }
    }

    /// Size of the whole stored frame in bytes, bitfield and delta-time included
    /// (SNAP v1.3, "Absolute frame" and "Delta frame"): 21 for an absolute frame, 3, 9 or 15
    /// for a delta frame. Never fails.
    pub fn frame_len(&self) -> usize {
        match self {
            SnapStep::Absolute(_) => 3 + PackedCFrame::SIZE,
            SnapStep::Delta { pos, rot } => {
                3 + 6 * usize::from(pos.is_some()) + 6 * usize::from(rot.is_some())
            }
        }
    }
}

/// Errors of the SNAP chain encoder and decoder.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ChainError {
    /// The encoder was given a sample it cannot store (NaN or infinite position or rotation,
    /// or an all-zero quaternion). The encoder's state is unchanged.
    #[error(transparent)]
    Quant(#[from] QuantError),
    /// A delta frame came before any absolute frame (SNAP v1.3: the first frame of a
    /// recording must be absolute; a reader treats anything else as corrupt).
    #[error("frame {frame} is a delta frame but no absolute frame came before it")]
    DeltaBeforeAbsolute {
        /// 0-based index of the offending frame.
        frame: u64,
    },
    /// An absolute frame's position is NaN or infinite (possible only in damaged input).
    #[error("frame {frame} is an absolute frame with a non-finite position ({x}, {y}, {z}) studs")]
    NonFiniteAbsolute {
        /// 0-based index of the offending frame.
        frame: u64,
        /// X as stored, studs.
        x: f32,
        /// Y as stored, studs.
        y: f32,
        /// Z as stored (index bits cleared), studs.
        z: f32,
    },
}

/// Outcome of measuring one delta against the encoding's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeltaCode {
    /// Below the epsilon: the bit stays clear.
    Unchanged,
    /// Fits: the codes to store.
    Code([i16; 3]),
    /// Too large for a delta: the frame must be absolute.
    TooLarge,
}

impl DeltaCode {
    fn code(self) -> Option<[i16; 3]> {
        match self {
            DeltaCode::Code(c) => Some(c),
            _ => None,
        }
    }
}

/// Rounds three scaled values to `i16` codes, or `None` if any does not fit.
fn round_to_codes(scaled: DVec3) -> Option<[i16; 3]> {
    let fit = |v: f64| {
        let r = v.round();
        if (f64::from(i16::MIN)..=f64::from(i16::MAX)).contains(&r) {
            Some(r as i16)
        } else {
            None
        }
    };
    Some([fit(scaled.x)?, fit(scaled.y)?, fit(scaled.z)?])
}

/// Position delta from `prev` (the decoder's state) to `cur`, both finite, in studs
/// (SNAP v1.3, "Position delta").
fn pos_delta_code(prev: Vec3, cur: Vec3) -> DeltaCode {
    let d = cur.as_dvec3() - prev.as_dvec3();
    let len_sq = d.length_squared();
    if len_sq < FP_EPSILON {
        return DeltaCode::Unchanged;
    }
    if len_sq > MAX_POS_DELTA * MAX_POS_DELTA {
        return DeltaCode::TooLarge;
    }
    match round_to_codes(d * POS_DELTA_SCALE) {
        Some(c) => DeltaCode::Code(c),
        None => DeltaCode::TooLarge,
    }
}

/// Rotation delta from `prev` (the decoder's state, unit within `f32` rounding) to `cur`
/// (unit): axis × angle of `prev⁻¹ · cur`, short way (SNAP v1.3, "Rotation delta").
fn rot_delta_code(prev: Quat, cur: DQuat) -> DeltaCode {
    // prev is unit up to f32 rounding; the conjugate differs from the inverse only by a
    // positive scale, which the axis-angle step ignores.
    let rel = prev.as_dquat().conjugate() * cur;
    let (axis, angle) = to_axis_angle(rel);
    if angle > MAX_ROT_DELTA {
        return DeltaCode::TooLarge;
    }
    if angle <= ROT_EPSILON {
        return DeltaCode::Unchanged;
    }
    match round_to_codes(axis * angle * ROT_DELTA_SCALE) {
        Some([0, 0, 0]) => DeltaCode::Unchanged,
        Some(c) => DeltaCode::Code(c),
        None => DeltaCode::TooLarge,
    }
}

/// Adds a position delta: `prev + code / 4096` per axis, one `f32` addition each.
fn apply_pos_delta(prev: Vec3, code: [i16; 3]) -> Vec3 {
    // code / 4096 is exact in f32.
    let d = Vec3::new(f32::from(code[0]), f32::from(code[1]), f32::from(code[2]))
        / POS_DELTA_SCALE as f32;
    prev + d
}

/// Applies a rotation delta: `prev · fromAxisAngle(v / |v|, |v|)` with `v = code /
/// ROT_DELTA_SCALE`, composed in `f64` and normalized. `prev` is a unit quaternion (the
/// decoder's state always is); an all-zero code is the identity.
fn apply_rot_delta(prev: Quat, code: [i16; 3]) -> Quat {
    let v =
        DVec3::new(f64::from(code[0]), f64::from(code[1]), f64::from(code[2])) / ROT_DELTA_SCALE;
    let angle = v.length();
    let step = if angle > 0.0 {
        DQuat::from_axis_angle(v / angle, angle)
    } else {
        DQuat::IDENTITY
    };
    (prev.as_dquat() * step).normalize().as_quat()
}

/// Reconstructs a SNAP v1.3 chain frame by frame (sections "Frame Schema", "Position
/// delta", "Rotation delta"). This is the reader's decoder and also the one
/// [`SnapChainEncoder`] runs internally for its closed loop.
///
/// State: the last reconstructed position (studs, `f32`) and rotation (unit `Quat`), or
/// nothing before the first absolute frame.
#[derive(Debug, Clone, Default)]
pub struct SnapChainDecoder {
    state: Option<(Vec3, Quat)>,
    frames: u64,
}

impl SnapChainDecoder {
    /// A decoder at the start of a recording (no state yet).
    pub fn new() -> Self {
        Self::default()
    }

    /// Applies one frame and returns the reconstructed position in studs and the unit
    /// rotation.
    ///
    /// - `Absolute`: [`decompress_cframe`] (Z with the index bits cleared).
    /// - `Delta`: position += code / 4096 studs per axis (`f32` addition); rotation =
    ///   previous · fromAxisAngle(axis, angle) from code / 163 835 rad, normalized; an
    ///   absent part is unchanged.
    ///
    /// Errors (the state is left unchanged): [`ChainError::DeltaBeforeAbsolute`] for a
    /// delta frame before any absolute frame, [`ChainError::NonFiniteAbsolute`] for an
    /// absolute frame whose stored position is NaN or infinite. Never panics; any codes are
    /// accepted.
    pub fn apply(&mut self, step: &SnapStep) -> Result<(Vec3, Quat), ChainError> {
        let next = match (step, self.state) {
            (SnapStep::Absolute(packed), _) => {
                if !packed.is_finite() {
                    return Err(ChainError::NonFiniteAbsolute {
                        frame: self.frames,
                        x: packed.x,
                        y: packed.y,
                        z: packed.z_studs_masked(),
                    });
                }
                decompress_cframe(packed)
            }
            (SnapStep::Delta { .. }, None) => {
                return Err(ChainError::DeltaBeforeAbsolute { frame: self.frames });
            }
            (SnapStep::Delta { pos, rot }, Some((prev_pos, prev_rot))) => {
                let p = match pos {
                    Some(code) => apply_pos_delta(prev_pos, *code),
                    None => prev_pos,
                };
                let r = match rot {
                    Some(code) => apply_rot_delta(prev_rot, *code),
                    None => prev_rot,
                };
                (p, r)
            }
        };
        self.state = Some(next);
        self.frames = self.frames.wrapping_add(1);
        Ok(next)
    }

    /// The current reconstructed position (studs) and rotation, or `None` before the first
    /// absolute frame.
    pub fn state(&self) -> Option<(Vec3, Quat)> {
        self.state
    }

    /// Number of frames applied so far (frames that returned an error are not counted).
    pub fn frames_applied(&self) -> u64 {
        self.frames
    }
}

/// Encodes a stream of samples as a SNAP v1.3 chain of absolute and delta frames, closed
/// loop (see the module documentation).
///
/// Per frame, in order: frame 0 and frames whose index is a multiple of
/// [`KEYFRAME_INTERVAL`] are absolute. Otherwise the position delta and the rotation delta
/// are measured from the decoder's current state; if either is too large (position: length
/// above [`MAX_POS_DELTA`] or a code outside `i16`; rotation: angle above
/// [`MAX_ROT_DELTA`]) the frame is absolute, else it is a delta whose position part is
/// present when the squared length is at least [`FP_EPSILON`] and whose rotation part is
/// present when the angle exceeds [`ROT_EPSILON`] and some code is non-zero.
///
/// Error bounds at every frame: [`CHAIN_ROT_ERROR_BOUND_RAD`] and
/// [`chain_pos_error_bound`].
#[derive(Debug, Clone, Default)]
pub struct SnapChainEncoder {
    decoder: SnapChainDecoder,
}

impl SnapChainEncoder {
    /// An encoder at the start of a recording.
    pub fn new() -> Self {
        Self::default()
    }

    /// Encodes one frame.
    ///
    /// - `pos_studs`: position in studs, any finite values.
    /// - `rot`: rotation as any finite non-zero quaternion (x, y, z, w); it is normalized
    ///   in `f64` first, and error bounds are measured against that unit quaternion.
    ///
    /// Returns the step to store; the encoder's own decoder has already applied it, so
    /// [`SnapChainEncoder::reconstructed`] is what a reader will see.
    ///
    /// Errors: [`ChainError::Quant`] for a non-finite position, a non-finite rotation or an
    /// all-zero quaternion (fatal per the spec); the encoder is left unchanged, so no frame
    /// is consumed.
    pub fn push(&mut self, pos_studs: Vec3, rot: Quat) -> Result<SnapStep, ChainError> {
        check_position(pos_studs)?;
        let cur_rot = unit_rotation(rot)?;
        // `is_multiple_of` needs Rust 1.87; the workspace supports 1.85.
        #[allow(clippy::manual_is_multiple_of)]
        let keyframe = self.decoder.frames_applied() % u64::from(KEYFRAME_INTERVAL) == 0;
        let delta = match self.decoder.state() {
            Some((prev_pos, prev_rot)) if !keyframe => {
                match (
                    pos_delta_code(prev_pos, pos_studs),
                    rot_delta_code(prev_rot, cur_rot),
                ) {
                    (DeltaCode::TooLarge, _) | (_, DeltaCode::TooLarge) => None,
                    (pos, rot) => Some(SnapStep::Delta {
                        pos: pos.code(),
                        rot: rot.code(),
                    }),
                }
            }
            _ => None,
        };
        let step = match delta {
            Some(step) => step,
            None => SnapStep::Absolute(compress_cframe(pos_studs, rot)?),
        };
        self.decoder.apply(&step)?;
        Ok(step)
    }

    /// What a reader reconstructs after the frames pushed so far: position in studs and
    /// unit rotation, or `None` before the first frame.
    pub fn reconstructed(&self) -> Option<(Vec3, Quat)> {
        self.decoder.state()
    }

    /// Number of frames encoded so far.
    pub fn frames_encoded(&self) -> u64 {
        self.decoder.frames_applied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::angle_between_rad;
    use crate::snap_quant::CFRAME_ROT_ERROR_BOUND_RAD;

    fn encoder_after(pos: Vec3, rot: Quat) -> SnapChainEncoder {
        let mut enc = SnapChainEncoder::new();
        assert!(matches!(enc.push(pos, rot).unwrap(), SnapStep::Absolute(_)));
        enc
    }

    /// Position error of the reconstructed state against `pos`, studs.
    fn pos_err(enc: &SnapChainEncoder, pos: Vec3) -> f64 {
        let (p, _) = enc.reconstructed().unwrap();
        (p.as_dvec3() - pos.as_dvec3()).length()
    }

    fn rot_err(enc: &SnapChainEncoder, rot: Quat) -> f64 {
        let (_, r) = enc.reconstructed().unwrap();
        angle_between_rad(unit_rotation(rot).unwrap(), r.as_dquat())
    }

    #[test]
    fn constants() {
        assert_eq!(ROT_DELTA_SCALE, 163_835.0);
        assert_eq!((MAX_ROT_DELTA * ROT_DELTA_SCALE).round(), 32767.0);
        assert_eq!(KEYFRAME_INTERVAL, 60);
        const { assert!(CHAIN_ROT_ERROR_BOUND_RAD >= CFRAME_ROT_ERROR_BOUND_RAD) };
        const { assert!(CHAIN_ROT_ERROR_BOUND_RAD > ROT_EPSILON) };
    }

    #[test]
    fn pos_delta_edges_at_eight_studs() {
        let base = Vec3::new(100.0, -20.0, 3.0);
        let at = |dx: f32| {
            let mut enc = encoder_after(base, Quat::IDENTITY);
            let step = enc
                .push(base + Vec3::new(dx, 0.0, 0.0), Quat::IDENTITY)
                .unwrap();
            (step, enc)
        };
        // +8.0 rounds to 32768: does not fit, absolute.
        assert_eq!(
            pos_delta_code(Vec3::ZERO, Vec3::new(8.0, 0.0, 0.0)),
            DeltaCode::TooLarge
        );
        assert!(matches!(at(8.0).0, SnapStep::Absolute(_)));
        // 8 - 1/8192 = 32767.5 codes, rounds (half away from zero) to 32768: absolute.
        let edge = 8.0 - 1.0 / 8192.0;
        assert_eq!(
            pos_delta_code(Vec3::ZERO, Vec3::new(edge, 0.0, 0.0)),
            DeltaCode::TooLarge
        );
        assert!(matches!(at(edge).0, SnapStep::Absolute(_)));
        // 8 - 1/4096 is 32767 codes: the largest positive delta.
        let (step, enc) = at(8.0 - 1.0 / 4096.0);
        assert_eq!(
            step,
            SnapStep::Delta {
                pos: Some([32767, 0, 0]),
                rot: None
            }
        );
        assert_eq!(
            enc.reconstructed().unwrap().0,
            base + Vec3::new(8.0 - 1.0 / 4096.0, 0.0, 0.0)
        );
        // -8.0 is -32768 codes, which fits: a delta, decoded exactly.
        let (step, enc) = at(-8.0);
        assert_eq!(
            step,
            SnapStep::Delta {
                pos: Some([-32768, 0, 0]),
                rot: None
            }
        );
        assert_eq!(
            enc.reconstructed().unwrap().0,
            base - Vec3::new(8.0, 0.0, 0.0)
        );
        // Just past -8.0 the length exceeds the limit.
        assert!(matches!(at(-8.0 - 1.0 / 4096.0).0, SnapStep::Absolute(_)));
        // Each axis fits but the length (8.66) does not.
        assert_eq!(
            pos_delta_code(Vec3::ZERO, Vec3::splat(5.0)),
            DeltaCode::TooLarge
        );
    }

    /// After a keyframe, Z carries the error of its lost index bits, so a step of exactly
    /// -8.0 studs along X measured from the decoder's state is slightly longer than 8 studs
    /// and must be absolute (the check is on the squared length, which sees it).
    #[test]
    fn keyframe_z_error_counts_in_the_limit() {
        // Z's two low bits are set; the decoder's masked Z is 3 units in the last place lower.
        let start = Vec3::new(0.0, 0.0, f32::from_bits(5.0f32.to_bits() | 0b11));
        let mut enc = encoder_after(start, Quat::IDENTITY);
        assert_eq!(enc.reconstructed().unwrap().0.z, 5.0);
        let step = enc
            .push(start - Vec3::new(8.0, 0.0, 0.0), Quat::IDENTITY)
            .unwrap();
        assert!(matches!(step, SnapStep::Absolute(_)));
    }

    #[test]
    fn pos_epsilon() {
        // Squared length just under 1e-6 studs²: bit clear, state unchanged.
        assert_eq!(
            pos_delta_code(Vec3::ZERO, Vec3::new(0.000_999, 0.0, 0.0)),
            DeltaCode::Unchanged
        );
        // 1e-3 studs (its f32 is slightly above): 4.096 codes, rounds to 4.
        assert_eq!(
            pos_delta_code(Vec3::ZERO, Vec3::new(0.001, 0.0, 0.0)),
            DeltaCode::Code([4, 0, 0])
        );
        let base = Vec3::new(1.0, 2.0, 3.0);
        let mut enc = encoder_after(base, Quat::IDENTITY);
        let cur = base + Vec3::new(0.0005, 0.0005, 0.0005);
        let step = enc.push(cur, Quat::IDENTITY).unwrap();
        assert_eq!(
            step,
            SnapStep::Delta {
                pos: None,
                rot: None
            }
        );
        assert_eq!(step.bitfield(), 0);
        assert_eq!(step.frame_len(), 3);
        assert_eq!(enc.reconstructed().unwrap().0, base);
        assert!(pos_err(&enc, cur) < 1e-3);
    }

    #[test]
    fn rot_delta_edges() {
        let mut prev = Quat::from_rotation_y(1.0);
        prev = prev.normalize();
        let cur = |angle: f64| prev.as_dquat() * DQuat::from_axis_angle(DVec3::X, angle);
        assert_eq!(rot_delta_code(prev, cur(0.0)), DeltaCode::Unchanged);
        assert_eq!(rot_delta_code(prev, cur(0.99e-4)), DeltaCode::Unchanged);
        assert_eq!(
            rot_delta_code(prev, cur(1.01e-4)),
            DeltaCode::Code([17, 0, 0])
        );
        assert_eq!(
            rot_delta_code(prev, cur(0.1999)),
            DeltaCode::Code([32751, 0, 0])
        );
        assert_eq!(
            rot_delta_code(prev, cur(-0.1999)),
            DeltaCode::Code([-32751, 0, 0])
        );
        assert_eq!(rot_delta_code(prev, cur(0.2001)), DeltaCode::TooLarge);
        assert_eq!(rot_delta_code(prev, cur(3.0)), DeltaCode::TooLarge);
        // Short way: the same rotation written as -q gives the same delta.
        assert_eq!(
            rot_delta_code(prev, -cur(0.15)),
            rot_delta_code(prev, cur(0.15))
        );
        // A rotation just short of a full turn is a small one the other way round.
        let nearly_full = cur(2.0 * std::f64::consts::PI - 0.15);
        assert_eq!(
            rot_delta_code(prev, nearly_full),
            rot_delta_code(prev, cur(-0.15))
        );
        assert_eq!(
            rot_delta_code(prev, cur(-0.15)),
            DeltaCode::Code([-24575, 0, 0])
        );
    }

    /// Object space: the delta is prev⁻¹ · cur, applied on the right of prev. With prev a
    /// quarter turn about Z, a turn about the object's X axis is a turn about the world's Y
    /// axis, so a world-space delta would put the code on Y instead of X.
    #[test]
    fn rot_delta_is_object_space() {
        let prev = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
        let cur = prev.as_dquat() * DQuat::from_rotation_x(0.15);
        let DeltaCode::Code(code) = rot_delta_code(prev, cur) else {
            panic!("expected a rotation delta");
        };
        assert_eq!(code, [24575, 0, 0]);
        let back = apply_rot_delta(prev, code);
        assert!(angle_between_rad(cur, back.as_dquat()) < 6e-6);
        // Through the chain: the keyframe's own error is folded into the delta.
        let mut enc = encoder_after(Vec3::ZERO, prev);
        let step = enc.push(Vec3::ZERO, cur.as_quat()).unwrap();
        assert_eq!(step.bitfield(), ROT_DELTA_BIT);
        assert!(rot_err(&enc, cur.as_quat()) < 6e-6);
    }

    #[test]
    fn forced_absolute_by_large_rotation_or_position() {
        let mut enc = encoder_after(Vec3::ZERO, Quat::IDENTITY);
        let s = enc.push(Vec3::ZERO, Quat::from_rotation_y(0.25)).unwrap();
        assert!(matches!(s, SnapStep::Absolute(_)));
        let s = enc
            .push(Vec3::new(0.0, 9.0, 0.0), Quat::from_rotation_y(0.25))
            .unwrap();
        assert!(matches!(s, SnapStep::Absolute(_)));
        let s = enc
            .push(Vec3::new(0.0, 9.5, 0.0), Quat::from_rotation_y(0.3))
            .unwrap();
        assert_eq!(s.bitfield(), POS_DELTA_BIT | ROT_DELTA_BIT);
        assert_eq!(s.frame_len(), 15);
    }

    #[test]
    fn keyframe_schedule() {
        let mut enc = SnapChainEncoder::new();
        let mut kinds = Vec::new();
        for k in 0..181u32 {
            let pos = Vec3::new(k as f32 * 0.1, 0.0, 0.0);
            let rot = Quat::from_rotation_y(k as f32 * 0.01);
            kinds.push(matches!(enc.push(pos, rot).unwrap(), SnapStep::Absolute(_)));
        }
        for (k, absolute) in kinds.iter().enumerate() {
            assert_eq!(*absolute, k % 60 == 0, "frame {k}");
        }
        assert_eq!(enc.frames_encoded(), 181);
        // A forced absolute frame does not move the schedule.
        let mut enc = SnapChainEncoder::new();
        for k in 0..61u32 {
            let x = if k == 30 { 1000.0 } else { 0.0 };
            let step = enc.push(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY).unwrap();
            let absolute = matches!(step, SnapStep::Absolute(_));
            assert_eq!(
                absolute,
                k == 0 || k == 30 || k == 31 || k == 60,
                "frame {k}"
            );
        }
    }

    #[test]
    fn decoder_errors() {
        let mut dec = SnapChainDecoder::new();
        let delta = SnapStep::Delta {
            pos: Some([1, 2, 3]),
            rot: None,
        };
        assert_eq!(
            dec.apply(&delta),
            Err(ChainError::DeltaBeforeAbsolute { frame: 0 })
        );
        assert_eq!(
            dec.apply(&SnapStep::Delta {
                pos: None,
                rot: None
            }),
            Err(ChainError::DeltaBeforeAbsolute { frame: 0 })
        );
        assert!(dec.state().is_none());
        let bad = PackedCFrame {
            x: f32::INFINITY,
            y: 0.0,
            z_bits: 3,
            q: [0; 3],
        };
        assert!(matches!(
            dec.apply(&SnapStep::Absolute(bad)),
            Err(ChainError::NonFiniteAbsolute { frame: 0, .. })
        ));
        assert_eq!(dec.frames_applied(), 0);
        let good = compress_cframe(Vec3::new(1.0, 2.0, 3.0), Quat::IDENTITY).unwrap();
        dec.apply(&SnapStep::Absolute(good)).unwrap();
        let (p, _) = dec.apply(&delta).unwrap();
        assert_eq!(
            p,
            Vec3::new(1.0, 2.0, 3.0) + Vec3::new(1.0, 2.0, 3.0) / 4096.0
        );
        assert!(matches!(
            dec.apply(&SnapStep::Absolute(bad)),
            Err(ChainError::NonFiniteAbsolute { frame: 2, .. })
        ));
        assert_eq!(dec.state().unwrap().0, p);
    }

    #[test]
    fn encoder_refuses_bad_samples_without_consuming_a_frame() {
        let mut enc = SnapChainEncoder::new();
        assert!(matches!(
            enc.push(Vec3::new(f32::NAN, 0.0, 0.0), Quat::IDENTITY),
            Err(ChainError::Quant(QuantError::NonFinitePosition { .. }))
        ));
        assert!(matches!(
            enc.push(Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
            Err(ChainError::Quant(QuantError::ZeroRotation))
        ));
        assert_eq!(enc.frames_encoded(), 0);
        enc.push(Vec3::ZERO, Quat::IDENTITY).unwrap();
        assert!(enc
            .push(Vec3::ZERO, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0))
            .is_err());
        assert_eq!(enc.frames_encoded(), 1);
    }

    /// Any codes decode to finite state; extreme codes move by at most 8 studs per axis and
    /// about 0.35 rad.
    #[test]
    fn decoder_accepts_any_codes() {
        let extremes = [i16::MIN, -1, 0, 1, i16::MAX];
        for &a in &extremes {
            for &b in &extremes {
                for &c in &extremes {
                    let mut dec = SnapChainDecoder::new();
                    let start = compress_cframe(Vec3::splat(f32::MAX), Quat::IDENTITY).unwrap();
                    dec.apply(&SnapStep::Absolute(start)).unwrap();
                    let (p, r) = dec
                        .apply(&SnapStep::Delta {
                            pos: Some([a, b, c]),
                            rot: Some([a, b, c]),
                        })
                        .unwrap();
                    assert!(p.is_finite() && r.is_finite() && r.is_normalized());
                    assert!(angle_between_rad(DQuat::IDENTITY, r.as_dquat()) < 0.35);
                }
            }
        }
    }

    /// Every i16 code of a position-delta component decodes and re-encodes to itself when it
    /// is a delta the encoder would send (|code| ≥ 5, i.e. at least 1e-3 studs); smaller
    /// codes are below FP_EPSILON and encode as "unchanged".
    #[test]
    fn every_pos_code_round_trips() {
        for prev in [
            Vec3::ZERO,
            Vec3::new(3.5, -7.25, 12.0),
            Vec3::new(-100.0, 64.0, 0.5),
        ] {
            for axis in 0..3 {
                for code in i16::MIN..=i16::MAX {
                    let mut c = [0i16; 3];
                    c[axis] = code;
                    let cur = apply_pos_delta(prev, c);
                    let again = pos_delta_code(prev, cur);
                    if code.unsigned_abs() >= 5 {
                        assert_eq!(again, DeltaCode::Code(c), "{prev:?} {c:?}");
                    } else {
                        assert_eq!(again, DeltaCode::Unchanged, "{prev:?} {c:?}");
                    }
                }
            }
        }
    }

    /// Every i16 code of a rotation-delta component decodes and re-encodes to itself when it
    /// is a delta the encoder would send: angle above ROT_EPSILON (|code| ≥ 17) and below
    /// MAX_ROT_DELTA. At ±32767 the angle is 0.2 rad, exactly the limit, and the `f32`
    /// rounding of the decoded state decides whether it measures as fitting; -32768 is
    /// 0.200006 rad and always too large.
    #[test]
    fn every_rot_code_round_trips() {
        let prevs = [
            Quat::IDENTITY,
            Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 2.5),
            Quat::from_rotation_x(std::f32::consts::PI),
        ];
        for prev in prevs {
            for axis in 0..3 {
                for code in i16::MIN..=i16::MAX {
                    let mut c = [0i16; 3];
                    c[axis] = code;
                    let cur = apply_rot_delta(prev, c);
                    let again = rot_delta_code(prev, cur.as_dquat());
                    if code == i16::MIN {
                        assert_eq!(again, DeltaCode::TooLarge);
                    } else if code.unsigned_abs() == 32767 {
                        assert!(
                            matches!(again, DeltaCode::TooLarge) || again == DeltaCode::Code(c)
                        );
                    } else if code.unsigned_abs() >= 17 {
                        assert_eq!(again, DeltaCode::Code(c), "{prev:?} {c:?}");
                    } else {
                        assert_eq!(again, DeltaCode::Unchanged, "{prev:?} {c:?}");
                    }
                }
            }
        }
    }

    /// Deterministic sweep behind the measured figures in the module documentation: per
    /// scale, 200 paths of 600 frames mixing smooth motion with a jump every seventh frame.
    #[test]
    fn sweep_mixed_paths() {
        // splitmix64, uniform in [-1, 1).
        let mut state = 99u64;
        let mut u = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64 * 2.0 - 1.0
        };
        let mut worst_rot = 0.0f64;
        let mut worst_ratio = 0.0f64;
        for scale in [10.0, 1e3, 1e4, 1e5, 1e6, 1e7] {
            for _ in 0..200 {
                let mut v = |r: f64| DVec3::new(u() * r, u() * r, u() * r);
                let mut p = v(scale);
                let vel = v(2.0);
                let w = v(0.1);
                let mut q = DQuat::from_xyzw(u(), u(), u(), u() + 1e-3).normalize();
                let mut enc = SnapChainEncoder::new();
                for k in 0..600 {
                    let mut v = |r: f64| DVec3::new(u() * r, u() * r, u() * r);
                    let jump = k % 7 == 3;
                    p += if jump { v(3.0) } else { vel + v(1e-3) };
                    let turn = if jump { v(0.15) } else { w + v(1e-4) };
                    q = (q * DQuat::from_scaled_axis(turn)).normalize();
                    let (pos, rot) = (p.as_vec3(), q.as_quat());
                    enc.push(pos, rot).unwrap();
                    worst_ratio = worst_ratio.max(pos_err(&enc, pos) / chain_pos_error_bound(pos));
                    worst_rot = worst_rot.max(rot_err(&enc, rot));
                }
            }
        }
        assert!(worst_ratio <= 1.0, "{worst_ratio}");
        assert!(worst_ratio > 0.99, "{worst_ratio}");
        assert!(worst_rot <= CHAIN_ROT_ERROR_BOUND_RAD, "{worst_rot}");
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// Drives a path through the encoder, a second decoder reading only the steps, and
        /// checks every frame against the documented bounds and rules. Returns the steps.
        fn run_chain(samples: &[(Vec3, Quat)]) -> Result<Vec<SnapStep>, TestCaseError> {
            let mut enc = SnapChainEncoder::new();
            let mut reader = SnapChainDecoder::new();
            let mut steps = Vec::with_capacity(samples.len());
            for (k, &(pos, rot)) in samples.iter().enumerate() {
                let before = enc.reconstructed();
                let step = enc
                    .push(pos, rot)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let read = reader
                    .apply(&step)
                    .map_err(|e| TestCaseError::fail(e.to_string()))?;
                let (p, r) = enc.reconstructed().unwrap();
                // The reader sees exactly what the encoder's loop assumed.
                prop_assert_eq!(
                    read.0.to_array().map(f32::to_bits),
                    p.to_array().map(f32::to_bits)
                );
                prop_assert_eq!(
                    read.1.to_array().map(f32::to_bits),
                    r.to_array().map(f32::to_bits)
                );
                let pe = (p.as_dvec3() - pos.as_dvec3()).length();
                let bound = chain_pos_error_bound(pos);
                prop_assert!(
                    pe <= bound,
                    "frame {}: pos error {} > {} at {:?}",
                    k,
                    pe,
                    bound,
                    pos
                );
                let re = angle_between_rad(unit_rotation(rot).unwrap(), r.as_dquat());
                prop_assert!(
                    re <= CHAIN_ROT_ERROR_BOUND_RAD,
                    "frame {}: rot error {}",
                    k,
                    re
                );
                let absolute = matches!(step, SnapStep::Absolute(_));
                if k % 60 == 0 {
                    prop_assert!(absolute, "frame {} must be a keyframe", k);
                } else {
                    // Off-schedule, a frame is absolute exactly when its motion since the
                    // decoder's state does not fit a delta (checked independently here).
                    let (bp, br) = before.unwrap();
                    let d = pos.as_dvec3() - bp.as_dvec3();
                    let codes = (d * POS_DELTA_SCALE).round();
                    let too_far = d.length_squared() >= FP_EPSILON
                        && (d.length_squared() > MAX_POS_DELTA * MAX_POS_DELTA
                            || codes.max_element() > 32767.0
                            || codes.min_element() < -32768.0);
                    let turn = angle_between_rad(br.as_dquat(), unit_rotation(rot).unwrap());
                    let too_turned = turn > MAX_ROT_DELTA;
                    prop_assert_eq!(absolute, too_far || too_turned, "frame {}", k);
                }
                steps.push(step);
            }
            Ok(steps)
        }

        fn scale() -> impl Strategy<Value = f64> {
            prop_oneof![
                Just(10.0),
                Just(1_000.0),
                Just(30_000.0),
                Just(1.0e6),
                Just(1.0e7)
            ]
        }

        fn dvec(r: f64) -> impl Strategy<Value = DVec3> {
            (-r..r, -r..r, -r..r).prop_map(|(x, y, z)| DVec3::new(x, y, z))
        }

        /// A smooth path: constant acceleration and constant angular velocity, with a little
        /// noise, starting anywhere within the chosen scale.
        fn smooth_path() -> impl Strategy<Value = Vec<(Vec3, Quat)>> {
            (
                scale().prop_flat_map(dvec),
                dvec(3.0),
                dvec(0.02),
                dvec(0.15),
                (-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0),
                1usize..200,
                0.0f64..1e-3,
            )
                .prop_map(|(p0, v, a, w, q0, n, noise)| {
                    let q0 = DQuat::from_xyzw(q0.0, q0.1, q0.2, q0.3 + 1e-3).normalize();
                    (0..n)
                        .map(|k| {
                            let t = k as f64;
                            let wobble =
                                DVec3::new((t * 1.3).sin(), (t * 0.7).cos(), (t * 2.1).sin());
                            let p = p0 + v * t + a * (0.5 * t * t) + wobble * noise;
                            let q = q0 * DQuat::from_scaled_axis(w * t + wobble * noise);
                            (p.as_vec3(), q.as_quat())
                        })
                        .collect()
                })
        }

        /// One jump of a jumpy path: sizes picked around every threshold of the encoding.
        fn jump() -> impl Strategy<Value = (f64, DVec3, f64, DVec3)> {
            let pos_len = prop_oneof![
                Just(0.0),
                Just(5e-4),
                Just(0.99e-3),
                Just(1.01e-3),
                0.0f64..8.0,
                Just(7.9999),
                Just(8.0),
                Just(8.0001),
                Just(8.0 - 1.0 / 8192.0),
                10.0f64..1e4,
                Just(1e6)
            ];
            let rot_angle = prop_oneof![
                Just(0.0),
                Just(5e-5),
                Just(0.99e-4),
                Just(1.01e-4),
                0.0f64..0.2,
                Just(0.1999),
                Just(0.2001),
                0.2f64..std::f64::consts::PI,
                Just(std::f64::consts::PI)
            ];
            let dir = (-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0)
                .prop_map(|(x, y, z)| DVec3::new(x, y, z + 1e-3).normalize());
            (pos_len, dir.clone(), rot_angle, dir)
        }

        fn jumpy_path() -> impl Strategy<Value = Vec<(Vec3, Quat)>> {
            (
                scale().prop_flat_map(dvec),
                prop::collection::vec(jump(), 1..250),
            )
                .prop_map(|(p0, jumps)| {
                    let mut p = p0;
                    let mut q = DQuat::IDENTITY;
                    jumps
                        .into_iter()
                        .map(|(len, pdir, angle, axis)| {
                            p += pdir * len;
                            q = (q * DQuat::from_axis_angle(axis, angle)).normalize();
                            (p.as_vec3(), q.as_quat())
                        })
                        .collect()
                })
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

            #[test]
            fn smooth_paths_stay_within_bounds(path in smooth_path()) {
                run_chain(&path)?;
            }

            #[test]
            fn jumpy_paths_stay_within_bounds(path in jumpy_path()) {
                run_chain(&path)?;
            }

            /// Axis-aligned steps that land on the ±8-stud edge in one coordinate.
            #[test]
            fn edge_steps(base in dvec(1e3), steps in prop::collection::vec((0usize..3, prop_oneof![
                Just(8.0f64), Just(-8.0), Just(8.0 - 1.0 / 8192.0), Just(8.0 - 1.0 / 4096.0),
                Just(-8.0 + 1.0 / 8192.0), -8.0f64..8.0
            ]), 1..120)) {
                let mut p = base.as_vec3();
                let mut path = Vec::new();
                for (axis, d) in steps {
                    p[axis] += d as f32;
                    path.push((p, Quat::IDENTITY));
                }
                run_chain(&path)?;
            }

            /// Arbitrary steps decode without panicking once an absolute frame came first.
            #[test]
            fn decoder_never_panics(
                start in prop::array::uniform18(any::<u8>()),
                deltas in prop::collection::vec(
                    (prop::option::of(any::<[i16; 3]>()), prop::option::of(any::<[i16; 3]>())),
                    0..100,
                ),
            ) {
                let mut dec = SnapChainDecoder::new();
                let first = SnapStep::Absolute(PackedCFrame::from_le_bytes(&start));
                match dec.apply(&first) {
                    Ok(_) => {
                        for (pos, rot) in deltas {
                            let (p, r) = dec.apply(&SnapStep::Delta { pos, rot }).unwrap();
                            prop_assert!(r.is_finite() && r.is_normalized());
                            prop_assert!(p.is_finite());
                        }
                    }
                    Err(e) => {
                        let expected = matches!(e, ChainError::NonFiniteAbsolute { .. });
                        prop_assert!(expected, "{:?}", e);
                    }
                }
            }
        }
    }
}
