//! Quantizers of the world snapshot (spec `world-snapshot-bitpacking.txt`, "Record layout"
//! and "Portability"): grid-origin-relative positions, smallest-three orientation at 10 bits,
//! symmetric fixed-point velocity and angular rate, and the loadout and byte-field clamps.
//!
//! Every quantizer is total: NaN and ±infinity are replaced before any float-to-integer
//! conversion (NaN by zero, infinities by the nearest end of the range), and out-of-range
//! values are clamped, so encoding never fails and never wraps. Rounding is arithmetic
//! (halves away from zero, the result of `f64::round`, computed inline by [`round_clamped`]);
//! no float bit pattern reaches the wire.
//!
//! # Worst-case errors (inputs inside the ranges)
//!
//! | quantity | step | bound |
//! | --- | --- | --- |
//! | position, per axis | 0.125 m | 0.0625 m ([`POS_ERROR_BOUND_M`], 0.108 m as a 3-D distance) |
//! | orientation | 2/√2 / 1023 per kept component | [`ROT_ERROR_BOUND_RAD`] = 4.8e-3 rad (0.28°) |
//! | velocity, per axis | 2000 / 131 071 m/s | [`VEL_ERROR_BOUND_MPS`] = 7.63e-3 m/s |
//! | angular rate, per axis | 20 / 2047 rad/s | [`OMEGA_ERROR_BOUND_RAD_S`] = 4.89e-3 rad/s |
//! | payload mass | 1 kg | 0.5 kg inside [0, 65 535] |
//! | payload Cd0 | 1e-5 | 5e-6 inside [0, 0.65535] |
//!
//! The orientation bound follows the SNAP derivation in [`crate::snap_quant`]: each kept component
//! is off by at most h = (√2 / 1023) / 2 = 6.91e-4, the rebuilt largest component moves by at
//! most 3h, so the 4-D error is at most √12 h and the rotation angle at most 2√12 h = 4.79e-3
//! rad; renormalization only shrinks it.

use crate::quant::smallest3;
use glam::{DQuat, DVec3};

/// Bits per position axis (signed offset binary).
pub const POS_BITS: u32 = 22;
/// Position step: 0.125 m.
pub const POS_STEP_M: f64 = 0.125;
/// Grid cell of the shared origins: 65 536 m (the spec's "~65 km").
pub const ORIGIN_GRID_M: f64 = 65_536.0;
/// Largest position magnitude accepted per axis; beyond it (and for ±infinity) positions are
/// clamped, NaN becomes 0. 1e12 m keeps grid origins exact in `f64`.
pub const POS_LIMIT_M: f64 = 1.0e12;
/// Largest offset code per axis: 2^21 - 1 (±262 km, far more than the 65 km cell).
pub const POS_CODE_MAX: i32 = (1 << (POS_BITS - 1)) - 1;
/// Worst position error per axis for positions within [`POS_LIMIT_M`]: half a step.
pub const POS_ERROR_BOUND_M: f64 = POS_STEP_M / 2.0;

/// Bits per kept quaternion component.
pub const QUAT_BITS: u32 = 10;
/// Largest code of a kept component (1023).
pub const QUAT_CODE_MAX: u16 = (1 << QUAT_BITS) - 1;
/// Worst rotation error of smallest-three at 10 bits, in radians (see the module docs).
pub const ROT_ERROR_BOUND_RAD: f64 = 4.8e-3;

/// Bits per velocity axis (signed offset binary).
pub const VEL_BITS: u32 = 18;
/// Velocity range per axis: ±2000 m/s.
pub const VEL_MAX_MPS: f64 = 2000.0;
/// Worst velocity error per axis inside the range: half a step (2000 / 131 071 / 2).
pub const VEL_ERROR_BOUND_MPS: f64 = VEL_MAX_MPS / ((1 << (VEL_BITS - 1)) - 1) as f64 / 2.0;

/// Bits per angular-rate axis (signed offset binary).
pub const OMEGA_BITS: u32 = 12;
/// Angular-rate range per axis: ±20 rad/s.
pub const OMEGA_MAX_RAD_S: f64 = 20.0;
/// Worst angular-rate error per axis inside the range: half a step (20 / 2047 / 2).
pub const OMEGA_ERROR_BOUND_RAD_S: f64 =
    OMEGA_MAX_RAD_S / ((1 << (OMEGA_BITS - 1)) - 1) as f64 / 2.0;

/// Payload Cd0 step: 1e-5.
pub const CD0_STEP: f64 = 1.0e-5;

/// `v` with NaN replaced by `nan` and everything else clamped to `[lo, hi]` (infinities to
/// the ends).
#[inline]
pub fn clamp_finite(v: f64, nan: f64, lo: f64, hi: f64) -> f64 {
    if v.is_nan() {
        nan
    } else {
        v.clamp(lo, hi)
    }
}

pub use crate::quant::round_clamped;

/// A position with NaN axes set to 0 and every axis clamped to ±[`POS_LIMIT_M`].
#[inline]
pub fn clamp_position(p: DVec3) -> DVec3 {
    DVec3::new(
        clamp_finite(p.x, 0.0, -POS_LIMIT_M, POS_LIMIT_M),
        clamp_finite(p.y, 0.0, -POS_LIMIT_M, POS_LIMIT_M),
        clamp_finite(p.z, 0.0, -POS_LIMIT_M, POS_LIMIT_M),
    )
}

/// The shared grid origin of a position: the floor of each (clamped) axis onto the
/// [`ORIGIN_GRID_M`] grid. Exact in `f64` for every clamped position.
#[inline]
pub fn origin_for_pos(p: DVec3) -> DVec3 {
    (clamp_position(p) / ORIGIN_GRID_M).floor() * ORIGIN_GRID_M
}

/// Position offset codes from `origin`, in [`POS_STEP_M`] steps, each clamped to
/// ±[`POS_CODE_MAX`]. For `origin == origin_for_pos(p)` the offset is in `[0, 65 536)` m and
/// never clamps.
#[inline]
pub fn quantize_offset(p: DVec3, origin: DVec3) -> [i32; 3] {
    let d = (clamp_position(p) - origin) / POS_STEP_M;
    let m = f64::from(POS_CODE_MAX);
    // Written out per axis: `array::map` is not always inlined and shows in profiles.
    [
        round_clamped(d.x, -m, m) as i32,
        round_clamped(d.y, -m, m) as i32,
        round_clamped(d.z, -m, m) as i32,
    ]
}

/// The position a client rebuilds: origin + codes × [`POS_STEP_M`].
#[inline]
pub fn dequantize_position(origin: DVec3, codes: [i32; 3]) -> DVec3 {
    origin + DVec3::new(codes[0] as f64, codes[1] as f64, codes[2] as f64) * POS_STEP_M
}

pub use crate::quant::{dequantize_symmetric, quantize_symmetric};

/// Velocity codes (18 bits per axis over ±2000 m/s).
#[inline]
pub fn quantize_velocity(v: DVec3) -> [i32; 3] {
    let q = |c| quantize_symmetric(c, VEL_MAX_MPS, VEL_BITS);
    [q(v.x), q(v.y), q(v.z)]
}

/// Velocity from its codes, m/s.
#[inline]
pub fn dequantize_velocity(c: [i32; 3]) -> DVec3 {
    let f = |x| dequantize_symmetric(x, VEL_MAX_MPS, VEL_BITS);
    DVec3::new(f(c[0]), f(c[1]), f(c[2]))
}

/// Angular-rate codes (12 bits per axis over ±20 rad/s).
#[inline]
pub fn quantize_omega(w: DVec3) -> [i32; 3] {
    let q = |c| quantize_symmetric(c, OMEGA_MAX_RAD_S, OMEGA_BITS);
    [q(w.x), q(w.y), q(w.z)]
}

/// Angular rate from its codes, rad/s.
#[inline]
pub fn dequantize_omega(c: [i32; 3]) -> DVec3 {
    let f = |x| dequantize_symmetric(x, OMEGA_MAX_RAD_S, OMEGA_BITS);
    DVec3::new(f(c[0]), f(c[1]), f(c[2]))
}

#[cfg(test)]
const INV_SQRT2: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// Smallest-three at 10 bits: the index (0 = x, 1 = y, 2 = z, 3 = w) of the largest
/// component in magnitude (the first on a tie), made positive by flipping the quaternion, and
/// the other three in x, y, z, w order as codes `round((c + 1/√2) / √2 × 1023)`, clamped to
/// 0..=1023 ([`crate::quant::smallest3::WORLD_SNAPSHOT`]). A non-finite or zero quaternion is
/// sent as the identity.
#[inline]
pub fn smallest_three(q: DQuat) -> (u8, [u16; 3]) {
    let v = [q.x, q.y, q.z, q.w];
    let len2: f64 = v.iter().map(|c| c * c).sum();
    let v = if len2.is_finite() && len2 > 0.0 {
        let l = len2.sqrt();
        [v[0] / l, v[1] / l, v[2] / l, v[3] / l]
    } else {
        [0.0, 0.0, 0.0, 1.0]
    };
    let (idx, c) = smallest3::WORLD_SNAPSHOT.encode(v);
    // Offset codes are 0..=1023.
    (idx, c.map(|x| x as u16))
}

/// The unit quaternion of a smallest-three code: kept components decoded, the dropped one
/// rebuilt as `sqrt(max(0, 1 - sum of squares))` (never below the largest kept magnitude, so
/// that re-encoding gives the same code; see [`crate::quant::smallest3`]), then normalized. Codes above 1023 (which
/// the 10-bit field cannot hold) are clamped.
#[inline]
pub fn from_smallest_three(index: u8, codes: [u16; 3]) -> DQuat {
    smallest3::WORLD_SNAPSHOT.decode_quat(index, codes.map(i32::from))
}

/// Payload mass code: kilograms rounded to 1 kg, clamped to 0..=65 535 (NaN → 0).
#[inline]
pub fn quantize_mass_kg(kg: f64) -> u16 {
    round_clamped(kg, 0.0, 65_535.0) as u16
}

/// Payload Cd0 code: the coefficient in 1e-5 steps, clamped to 0..=65 535 (0 ..= 0.65535;
/// NaN → 0).
#[inline]
pub fn quantize_cd0(cd0: f64) -> u16 {
    round_clamped(cd0 / CD0_STEP, 0.0, 65_535.0) as u16
}

/// A fraction in [0, 1] as a whole percent 0..=100 (NaN → 0; clamped).
#[inline]
pub fn quantize_pct(fraction: f64) -> u8 {
    round_clamped(fraction * 100.0, 0.0, 100.0) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_grid_floors() {
        let p = DVec3::new(-1.0, 65_536.0, 131_071.9);
        assert_eq!(origin_for_pos(p), DVec3::new(-65_536.0, 65_536.0, 65_536.0));
        let c = quantize_offset(p, origin_for_pos(p));
        assert_eq!(c, [524_280, 0, 524_287]);
        // 131 071.9 - 65 536 = 65 535.9 -> 524 287.2 steps -> 524 287.
        let back = dequantize_position(origin_for_pos(p), c);
        assert!((back - p).abs().max_element() <= POS_ERROR_BOUND_M);
    }

    #[test]
    fn non_finite_inputs_are_clamped_first() {
        let p = DVec3::new(f64::NAN, f64::INFINITY, f64::NEG_INFINITY);
        assert_eq!(
            origin_for_pos(p),
            DVec3::new(
                0.0,
                (1.0e12f64 / 65_536.0).floor() * 65_536.0,
                -(1.0e12f64 / 65_536.0).ceil() * 65_536.0
            )
        );
        assert_eq!(
            quantize_velocity(DVec3::new(f64::NAN, f64::INFINITY, -1e9)),
            [0, 131_071, -131_071]
        );
        assert_eq!(
            quantize_omega(DVec3::new(f64::NEG_INFINITY, 25.0, f64::NAN)),
            [-2047, 2047, 0]
        );
        assert_eq!(quantize_mass_kg(f64::NAN), 0);
        assert_eq!(quantize_mass_kg(-3.0), 0);
        assert_eq!(quantize_mass_kg(1e9), 65_535);
        assert_eq!(quantize_cd0(0.7), 65_535);
        assert_eq!(quantize_cd0(f64::INFINITY), 65_535);
        assert_eq!(quantize_cd0(0.00012), 12);
        assert_eq!(quantize_pct(f64::NAN), 0);
        assert_eq!(quantize_pct(1.5), 100);
        assert_eq!(
            smallest_three(DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0)),
            (3, [512, 512, 512])
        );
        assert_eq!(
            smallest_three(DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
            (3, [512, 512, 512])
        );
    }

    #[test]
    fn round_clamped_is_round_then_clamp() {
        let old = |v: f64, lo: f64, hi: f64| clamp_finite(v.round(), 0.0, lo, hi) as i64;
        let mut vals = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.499_999_999_999_999_94,
            -0.499_999_999_999_999_94,
            1023.5,
            1022.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            4_503_599_627_370_495.5,
            2_097_151.5,
            -2_097_151.5,
            2_097_152.5,
        ];
        for k in -3000..3000 {
            let h = f64::from(k) + 0.5;
            vals.extend([h, h.next_up(), h.next_down(), f64::from(k) * 0.37]);
        }
        let m = f64::from(POS_CODE_MAX);
        for v in vals {
            for (lo, hi) in [(-m, m), (0.0, 1023.0), (0.0, 100.0), (-2047.0, 2047.0)] {
                assert_eq!(
                    round_clamped(v, lo, hi),
                    old(v, lo, hi),
                    "{v} in [{lo}, {hi}]"
                );
            }
        }
    }

    #[test]
    fn symmetric_codes_round_trip_within_half_a_step() {
        for i in -2000..=2000 {
            let v = i as f64 * 0.999_7;
            let c = quantize_symmetric(v, VEL_MAX_MPS, VEL_BITS);
            assert!(
                (dequantize_symmetric(c, VEL_MAX_MPS, VEL_BITS) - v).abs()
                    <= VEL_ERROR_BOUND_MPS + 1e-12
            );
        }
        assert!((VEL_ERROR_BOUND_MPS - 0.007_629_4).abs() < 1e-6);
        assert!((OMEGA_ERROR_BOUND_RAD_S - 0.004_885_2).abs() < 1e-6);
    }

    #[test]
    fn smallest_three_all_four_largest_components() {
        let cases = [
            DQuat::from_xyzw(0.9, 0.1, -0.2, 0.3),
            DQuat::from_xyzw(0.1, -0.9, -0.2, 0.3),
            DQuat::from_xyzw(0.1, 0.2, 0.9, -0.3),
            DQuat::from_xyzw(-0.1, 0.2, -0.3, -0.9),
        ];
        for (want, q) in cases.iter().enumerate() {
            let q = q.normalize();
            let (i, c) = smallest_three(q);
            assert_eq!(usize::from(i), want);
            let back = from_smallest_three(i, c);
            let angle = crate::quant::angle_between_rad(back, q);
            assert!(angle <= ROT_ERROR_BOUND_RAD, "{want}: {angle}");
        }
    }

    #[test]
    fn smallest_three_near_the_one_over_root_two_edge() {
        // Two components of 1/sqrt(2) (a 90° turn): the first is dropped, the other sits at
        // the top code; a hair either side behaves the same.
        for eps in [0.0, 1e-9, -1e-9, 1e-4] {
            let q = DQuat::from_xyzw(INV_SQRT2 + eps, 0.0, 0.0, INV_SQRT2 - eps).normalize();
            let (i, c) = smallest_three(q);
            assert_eq!(i, if eps < 0.0 { 3 } else { 0 });
            assert!(c.contains(&1023) || c.contains(&1022) || i == 3);
            let back = from_smallest_three(i, c);
            let angle = crate::quant::angle_between_rad(back, q);
            assert!(angle <= ROT_ERROR_BOUND_RAD, "{eps}: {angle}");
        }
        // An exact tie goes to the first component; a negative largest component flips the
        // quaternion (same rotation), so w = 1/sqrt(2) is sent as -1/sqrt(2), code 0.
        let q = DQuat::from_xyzw(-INV_SQRT2, 0.0, 0.0, INV_SQRT2);
        let (i, c) = smallest_three(q);
        assert_eq!((i, c), (0, [512, 512, 0]));
    }

    #[test]
    fn smallest_three_bound_over_many_rotations() {
        let mut worst = 0.0f64;
        let mut s = 0x1234_5678_u64;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        for _ in 0..20_000 {
            let q = DQuat::from_xyzw(r(), r(), r(), r());
            if q.length() < 1e-3 {
                continue;
            }
            let q = q.normalize();
            let (i, c) = smallest_three(q);
            let back = from_smallest_three(i, c);
            worst = worst.max(crate::quant::angle_between_rad(back, q));
        }
        assert!(worst <= ROT_ERROR_BOUND_RAD, "{worst}");
        assert!(worst > ROT_ERROR_BOUND_RAD / 4.0, "{worst}");
    }
}
