//! Interpolation between recorded frames: linear interpolation of positions and normalized
//! linear interpolation (nlerp) of rotations.
//!
//! A SNAP recording stores one state per frame; a player that needs the state between two
//! frames blends them with these functions, `t` being the fraction of the frame interval
//! elapsed (`0` at the earlier frame, `1` at the later one).

use glam::{Quat, Vec3, Vec4};

/// Linear interpolation of two positions (any unit, e.g. studs): `a · (1 - t) + b · t`.
///
/// `t` is the blend fraction, normally in `[0, 1]`; values outside extrapolate along the
/// line. The form used returns `a` exactly at `t = 0` and `b` exactly at `t = 1`. Never
/// fails; NaN in gives NaN out.
pub fn lerp(a: Vec3, b: Vec3, t: f32) -> Vec3 {
    a * (1.0 - t) + b * t
}

/// Normalized linear interpolation of two rotations (nlerp), taking the short way.
///
/// `a` and `b` are unit quaternions (x, y, z, w); `t` is the blend fraction, normally in
/// `[0, 1]`. Hemisphere check: when `a · b < 0`, `b` is negated first (it names the same
/// rotation), so the blend never goes the long way round. The blend `a · (1 - t) + b · t`
/// is then normalized to unit length. Its angular speed is not constant (unlike slerp), but
/// for the small steps between frames the difference is negligible.
///
/// Returns `a` (as a unit quaternion) at `t = 0` and `±b` at `t = 1`. When the blend has no
/// direction (zero length or non-finite, possible only with zero or non-finite inputs) it
/// returns `Quat::IDENTITY`. Never fails.
pub fn nlerp(a: Quat, b: Quat, t: f32) -> Quat {
    let va = Vec4::from(a);
    let mut vb = Vec4::from(b);
    if va.dot(vb) < 0.0 {
        vb = -vb;
    }
    let blend = va * (1.0 - t) + vb * t;
    let len = blend.length();
    if len.is_finite() && len > 0.0 {
        Quat::from_vec4(blend / len)
    } else {
        Quat::IDENTITY
    }
}

/// Normalized blend of two rotations in `f64`: `b` is negated first when the dot product is
/// negative, the two are mixed in proportion `t` (0 gives `a`) and scaled back to unit length.
/// This is how CBTK v1 reads a rotation between two transform keys.
pub fn nlerp_d(a: glam::DQuat, b: glam::DQuat, t: f64) -> glam::DQuat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let v = a * (1.0 - t) + b * t;
    let l = v.length();
    if l > 0.0 {
        v * (1.0 / l)
    } else {
        a
    }
}

/// The cubic Hermite of CBTK v1's projectiles: position at the fraction `s` (0..=1) between
/// keys `n` frames apart, with positions `p0`, `p1` and velocities (per frame) `v0`, `v1` as
/// the slopes: `(2s³-3s²+1)p0 + (s³-2s²+s)n v0 + (-2s³+3s²)p1 + (s³-s²)n v1`.
pub fn hermite(
    p0: glam::DVec3,
    v0: glam::DVec3,
    p1: glam::DVec3,
    v1: glam::DVec3,
    n: f64,
    s: f64,
) -> glam::DVec3 {
    let s2 = s * s;
    let s3 = s2 * s;
    p0 * (2.0 * s3 - 3.0 * s2 + 1.0)
        + v0 * ((s3 - 2.0 * s2 + s) * n)
        + p1 * (-2.0 * s3 + 3.0 * s2)
        + v1 * ((s3 - s2) * n)
}

/// The velocity (per frame) of [`hermite`] at `s`: its derivative by `s`, divided by `n`.
pub fn hermite_velocity(
    p0: glam::DVec3,
    v0: glam::DVec3,
    p1: glam::DVec3,
    v1: glam::DVec3,
    n: f64,
    s: f64,
) -> glam::DVec3 {
    if n <= 0.0 {
        return v0;
    }
    let s2 = s * s;
    (p0 * (6.0 * s2 - 6.0 * s)
        + v0 * ((3.0 * s2 - 4.0 * s + 1.0) * n)
        + p1 * (-6.0 * s2 + 6.0 * s)
        + v1 * ((3.0 * s2 - 2.0 * s) * n))
        / n
}

#[cfg(test)]
// The spec example's decimal digits are kept as printed, beyond f32 precision.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use crate::quant::angle_between_rad;

    fn angle(a: Quat, b: Quat) -> f64 {
        angle_between_rad(a.as_dquat(), b.as_dquat())
    }

    #[test]
    fn lerp_endpoints_and_midpoint() {
        let a = Vec3::new(-86.98088, 447.52756, -216.12019);
        let b = Vec3::new(10.0, 0.5, 3.25);
        assert_eq!(lerp(a, b, 0.0), a);
        assert_eq!(lerp(a, b, 1.0), b);
        let mid = lerp(Vec3::ZERO, Vec3::new(2.0, -4.0, 6.0), 0.5);
        assert_eq!(mid, Vec3::new(1.0, -2.0, 3.0));
    }

    #[test]
    fn nlerp_midpoint_and_endpoints() {
        let a = Quat::IDENTITY;
        let b = Quat::from_rotation_y(1.0);
        let mid = nlerp(a, b, 0.5);
        assert!(mid.is_normalized());
        assert!(angle(mid, Quat::from_rotation_y(0.5)) < 1e-6);
        assert!(angle(nlerp(a, b, 0.0), a) < 1e-7);
        assert!(angle(nlerp(a, b, 1.0), b) < 1e-7);
    }

    #[test]
    fn nlerp_takes_the_short_way() {
        let a = Quat::from_rotation_z(0.2);
        // -b is the same rotation as b; without the hemisphere check the blend would swing
        // through the long way round.
        let b = -Quat::from_rotation_z(0.6);
        let mid = nlerp(a, b, 0.5);
        assert!(angle(mid, Quat::from_rotation_z(0.4)) < 1e-6);
        // Without the check the blend of a and b (as given) is far off.
        let naive = (Vec4::from(a) + Vec4::from(b)).normalize();
        assert!(angle(Quat::from_vec4(naive), Quat::from_rotation_z(0.4)) > 1.0);
    }

    #[test]
    fn nlerp_degenerate_inputs() {
        let zero = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        assert_eq!(nlerp(zero, zero, 0.5), Quat::IDENTITY);
        let nan = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
        assert_eq!(nlerp(nan, Quat::IDENTITY, 0.5), Quat::IDENTITY);
    }
}
