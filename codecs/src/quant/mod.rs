//! The quantizers every format shares, each written once and parameterised by what the
//! formats differ in.
//!
//! - [`smallest3`]: one smallest-three rotation codec (bits per component, symmetric or
//!   offset scaling, how a kept component is rebuilt, when the result is renormalised), with a
//!   named preset per format: [`smallest3::SNAP`], [`smallest3::WORLD_SNAPSHOT`],
//!   [`smallest3::STUDY`] and [`smallest3::cbtk`] for CBTK's 8 to 16 bits.
//! - [`half`]: one IEEE 754 binary16 codec whose rounding (ties to even or away from zero)
//!   and overflow rule (refuse or saturate) are parameters, so each format keeps its bytes.
//! - [`round_clamped`], [`quantize_symmetric`] / [`dequantize_symmetric`] and
//!   [`quantize_scaled`]: scalar fixed point; offset binary is the runtime's
//!   `statepack_runtime::bits::to_offset_binary` (bit fields use it too).
//! - [`angle_between_rad`]: the one rotation error metric, in radians; the study's own
//!   `2 acos |a·b|` is [`angle_between_acos_rad`] beside it.
//! - [`quantize_range`] / [`dequantize_range`]: unsigned fixed point over a per-track range
//!   (animation clips, the study's scalar keys).
//! - [`lerp`]: scalar linear interpolation in the `a + (b - a) t` form.
//!
//! Format-specific steps stay with their format: SNAP's axis-angle pre-step and Z packing in
//! [`crate::snap_quant`], RPLY's transform deltas in [`crate::rply_xform`], the world
//! snapshot's record math in [`crate::netquant`], CBTK's front/up construction in
//! [`crate::smallest3`].

pub mod half;
pub mod smallest3;

use glam::{DQuat, DVec3};

/// The angle in radians (`[0, π]`) of the rotation that takes `a` to `b`: the error metric
/// used for every rotation bound in this workspace. Both inputs should be unit quaternions
/// (their length is not corrected); `q` and `-q` count as the same rotation. Uses `atan2` of
/// the relative rotation's vector length and scalar part, which stays accurate for tiny
/// angles (where `2 acos(|a·b|)` loses half its digits). Never fails; NaN inputs give NaN.
pub fn angle_between_rad(a: DQuat, b: DQuat) -> f64 {
    let rel = a.conjugate() * b;
    let v = DVec3::new(rel.x, rel.y, rel.z).length();
    2.0 * v.atan2(rel.w.abs())
}

/// The angle in radians (`[0, π]`) between two rotations given as `[x, y, z, w]` by the
/// keyframe-compression study's formula `2 acos(min(1, |a·b|))` (the dot product summed in
/// x, y, z, w order). The study's tables are defined with it, so its pipeline keeps it; it
/// loses about half its digits for tiny angles and does not correct inputs that are not unit
/// length, which is why everything else uses [`angle_between_rad`]. A NaN dot product gives
/// 0 (`f64::min` returns its other operand for NaN), as the study's pipeline always did.
#[inline]
pub fn angle_between_acos_rad(a: [f64; 4], b: [f64; 4]) -> f64 {
    let dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
    2.0 * dot.abs().min(1.0).acos()
}

/// `v` rounded to the nearest integer (halves away from zero, exactly as `f64::round`) and
/// clamped to `[lo, hi]`; NaN gives 0 and infinities the nearest end. `lo` and `hi` must be
/// whole numbers with magnitude below 2^52 (every quantizer's range is).
///
/// The value is clamped first (which commutes with rounding for whole-number bounds), then
/// truncated toward zero and moved one step away from zero when the dropped fraction, exact
/// in `f64`, is at least one half. This is the same integer as rounding with `f64::round`
/// and clamping afterwards (tested over halves, near-halves and non-finite inputs), without
/// the `round` library call that baseline x86-64 makes for every rounding.
#[inline(always)]
pub fn round_clamped(v: f64, lo: f64, hi: f64) -> i64 {
    if v.is_nan() {
        return 0;
    }
    let c = v.clamp(lo, hi);
    let t = c as i64;
    let frac = c - t as f64;
    t + i64::from(frac >= 0.5) - i64::from(frac <= -0.5)
}

/// Symmetric fixed point: `v` in `±max` as a signed code in `±(2^(bits-1) - 1)` (`bits` in
/// 2..=32), `round(v / max × n)`; NaN → 0, out-of-range (and infinite) values clamp to the
/// ends.
#[inline]
pub fn quantize_symmetric(v: f64, max: f64, bits: u32) -> i32 {
    let n = ((1i64 << (bits - 1)) - 1) as f64;
    round_clamped(v / max * n, -n, n) as i32
}

/// Symmetric fixed point given by its scale: `round(v × scale)` (halves away from zero)
/// clamped to `±max_code` (a whole number below 2^52); NaN → 0, infinities to the ends. The
/// form of SNAP's and CBTK's smallest-three components and RPLY's axis-angle and yaw codes.
#[inline(always)]
pub fn quantize_scaled(v: f64, scale: f64, max_code: f64) -> i64 {
    round_clamped(v * scale, -max_code, max_code)
}

/// The value of a [`quantize_symmetric`] code: `code / n × max`.
#[inline]
pub fn dequantize_symmetric(code: i32, max: f64, bits: u32) -> f64 {
    let n = ((1i64 << (bits - 1)) - 1) as f64;
    f64::from(code) / n * max
}

/// Unsigned fixed point over a range: `v` in `[lo, lo + extent]` as the code
/// `round((v − lo) / extent × max_code)` (halves away from zero) clamped to `0..=max_code`
/// (`max_code` a whole number below 2^52, normally `2^bits − 1`). A range whose `extent` is
/// not positive (a constant channel, or NaN) codes every value as 0; NaN values code as 0.
/// Used by the animation clips' per-track widths and the study's 16-bit scalar keys.
#[inline]
pub fn quantize_range(v: f64, lo: f64, extent: f64, max_code: f64) -> u64 {
    if extent.is_nan() || extent <= 0.0 {
        return 0;
    }
    round_clamped((v - lo) / extent * max_code, 0.0, max_code) as u64
}

/// The value of a [`quantize_range`] code: `lo + code / max_code × extent`, in `f64`.
#[inline]
pub fn dequantize_range(code: u64, lo: f64, extent: f64, max_code: f64) -> f64 {
    lo + code as f64 / max_code * extent
}

/// [`dequantize_range`] in `f32` arithmetic (the animation clip decoder's precision).
#[inline]
pub fn dequantize_range_f32(code: u32, lo: f32, extent: f32, max_code: f32) -> f32 {
    lo + code as f32 / max_code * extent
}

/// Linear interpolation `a + (b - a) × t` of two scalars (any unit). `t` is the blend
/// fraction, normally in `[0, 1]`; outside it extrapolates. This form is the one CBTK's
/// sampling rules state; it gives `a` exactly at `t = 0` (and `b` at `t = 1` up to one
/// rounding). Never fails; NaN in gives NaN out.
#[inline]
pub fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + (b - a) * t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn angle_metric_edges() {
        let q = DQuat::from_rotation_y(0.3);
        assert_eq!(angle_between_rad(q, q), 0.0);
        assert!((angle_between_rad(q, -q)).abs() < 1e-15);
        let tiny = DQuat::from_rotation_x(1e-9);
        assert!((angle_between_rad(DQuat::IDENTITY, tiny) - 1e-9).abs() < 1e-20);
        let half = DQuat::from_rotation_z(std::f64::consts::PI);
        assert!((angle_between_rad(DQuat::IDENTITY, half) - std::f64::consts::PI).abs() < 1e-15);
        assert!(angle_between_rad(DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0), q).is_nan());
    }

    #[test]
    fn round_clamped_matches_round_then_clamp() {
        let vals = [
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            0.499_999_999_999_999_94,
            -0.499_999_999_999_999_94,
            1023.4,
            1023.5,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            0.0,
        ];
        for v in vals {
            let want = v.round().clamp(-1023.0, 1023.0) as i64;
            assert_eq!(round_clamped(v, -1023.0, 1023.0), want, "{v}");
        }
        assert_eq!(round_clamped(f64::NAN, -3.0, 3.0), 0);
    }

    /// Every code of every width from 2 to 24 bits decodes and re-encodes to itself, and the
    /// ends clamp: ±max and beyond, infinities, NaN → 0.
    #[test]
    fn symmetric_fixed_point_every_code() {
        for bits in 2..=24u32 {
            let n = (1i32 << (bits - 1)) - 1;
            for code in -n..=n {
                let v = dequantize_symmetric(code, 2000.0, bits);
                assert_eq!(quantize_symmetric(v, 2000.0, bits), code, "{bits} {code}");
            }
            assert_eq!(quantize_symmetric(2000.0, 2000.0, bits), n);
            assert_eq!(quantize_symmetric(-2000.0, 2000.0, bits), -n);
            assert_eq!(quantize_symmetric(1e9, 2000.0, bits), n);
            assert_eq!(quantize_symmetric(f64::NEG_INFINITY, 2000.0, bits), -n);
            assert_eq!(quantize_symmetric(f64::NAN, 2000.0, bits), 0);
            assert_eq!(quantize_symmetric(-0.0, 2000.0, bits), 0);
        }
    }

    /// Every code of every width from 1 to 20 bits over a range decodes and re-encodes to
    /// itself; the ends clamp, a constant range and NaN code as 0; the f32 decoder agrees with
    /// the f64 one to f32 precision.
    #[test]
    fn range_fixed_point_every_code() {
        let (lo, extent) = (-1.25, 3.5);
        for bits in 1..=20u32 {
            let m = ((1u64 << bits) - 1) as f64;
            for code in 0..=(1u64 << bits) - 1 {
                let v = dequantize_range(code, lo, extent, m);
                assert_eq!(quantize_range(v, lo, extent, m), code, "{bits} {code}");
                let v32 = dequantize_range_f32(code as u32, lo as f32, extent as f32, m as f32);
                assert!((f64::from(v32) - v).abs() <= 4e-7 * (1.0 + v.abs()));
            }
            assert_eq!(quantize_range(lo - 1.0, lo, extent, m), 0);
            assert_eq!(quantize_range(lo + extent * 2.0, lo, extent, m), m as u64);
            assert_eq!(quantize_range(f64::INFINITY, lo, extent, m), m as u64);
            assert_eq!(quantize_range(f64::NAN, lo, extent, m), 0);
            assert_eq!(quantize_range(7.0, 7.0, 0.0, m), 0);
            assert_eq!(quantize_range(7.0, 7.0, f64::NAN, m), 0);
        }
        // Halves round away from zero: 0.5 of a step up is the next code.
        assert_eq!(quantize_range(0.5, 0.0, 3.0, 3.0), 1);
        assert_eq!(quantize_range(2.5, 0.0, 3.0, 3.0), 3);
    }

    #[test]
    fn acos_angle_is_the_study_formula() {
        let a = [0.0, 0.0, 0.0, 1.0];
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let b = [0.0, h, 0.0, h];
        assert!((angle_between_acos_rad(a, b) - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
        assert_eq!(angle_between_acos_rad(a, a), 0.0);
        assert_eq!(angle_between_acos_rad(a, [0.0, 0.0, 0.0, -1.0]), 0.0);
        // Not unit: the dot is clamped to 1.
        assert_eq!(angle_between_acos_rad(a, [0.0, 0.0, 0.0, 2.0]), 0.0);
        // NaN: `min(1)` takes the 1, so the angle is 0 (the study's behaviour, kept).
        assert_eq!(angle_between_acos_rad(a, [f64::NAN, 0.0, 0.0, 1.0]), 0.0);
    }

    #[test]
    fn scaled_fixed_point_is_round_then_clamp() {
        let scale = 32767.0 / std::f64::consts::PI;
        let mut vals = vec![0.0, -0.0, f64::NAN, f64::INFINITY, -1e300, 3.5, -3.5];
        for k in -40_000..40_000 {
            let h = (f64::from(k) + 0.5) / scale;
            vals.extend([h, h.next_up(), h.next_down()]);
        }
        for v in vals {
            let old = (v * scale).round().clamp(-32767.0, 32767.0) as i16;
            assert_eq!(quantize_scaled(v, scale, 32767.0) as i16, old, "{v}");
        }
    }

    #[test]
    fn lerp_form() {
        assert_eq!(lerp(1.0, 3.0, 0.0), 1.0);
        assert_eq!(lerp(1.0, 3.0, 0.5), 2.0);
        assert_eq!(lerp(1.0, 3.0, 2.0), 5.0);
        assert!(lerp(f64::NAN, 1.0, 0.5).is_nan());
    }
}
