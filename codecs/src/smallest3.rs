//! Smallest-three rotations at any width from 8 to 16 bits, with the CBTK v1 scaling.
//!
//! CBTK v1 ("Rotation"): the component of largest magnitude is dropped (the quaternion is
//! negated first when it is negative), and the other three, in x, y, z, w order, are stored
//! as `n = round(c * (2^(bits-1) - 1) / sqrt(1/2))`. A kept component is at most sqrt(1/2) in
//! magnitude, so `|n| <= 2^(bits-1) - 1`. The reader rebuilds the dropped one as
//! `sqrt(1 - a² - b² - c²)`.
//!
//! Worst-case error: each kept component is off by at most `h = sqrt(1/2) / (2 (2^(bits-1)-1))`;
//! the spec bounds the turn this causes by `sqrt(6) / (2^(bits-1) - 1)` radians, which
//! [`turn_bound_rad`] returns and a test checks on random rotations at every width.
//!
//! Ties for the largest magnitude go to the first in x, y, z, w order. The codec itself is
//! [`crate::quant::smallest3`]'s core with the [`crate::quant::smallest3::cbtk`] preset;
//! this module adds CBTK's front/up construction.

use crate::quant::{angle_between_rad, smallest3};
use glam::{DMat3, DQuat, DVec3};

/// Largest code magnitude at `bits`: `2^(bits-1) - 1`.
pub fn max_code(bits: u8) -> i32 {
    (1i32 << (bits.clamp(2, 16) - 1)) - 1
}

/// The spec's bound on the turn (radians) that rounding at `bits` can cause.
pub fn turn_bound_rad(bits: u8) -> f64 {
    6f64.sqrt() / max_code(bits) as f64
}

/// Packs a unit quaternion (normalized first) at `bits` (8..=16): the dropped index (0..=3
/// for x, y, z, w) and the three kept codes, with [`crate::quant::smallest3::cbtk`]. A zero
/// or non-finite quaternion packs as the identity's codes; callers check their input first.
pub fn encode(q: DQuat, bits: u8) -> (u8, [i32; 3]) {
    let q = if q.length_squared() > 0.0 && q.is_finite() {
        q.normalize()
    } else {
        DQuat::IDENTITY
    };
    smallest3::cbtk(bits).encode([q.x, q.y, q.z, q.w])
}

/// Unpacks codes packed at `bits` with [`crate::quant::smallest3::cbtk`]. A dropped index
/// above 3 is read as 3 (w); codes whose squares sum past 1 give a dropped component of 0
/// and the result is normalized.
pub fn decode(dropped: u8, n: [i32; 3], bits: u8) -> DQuat {
    smallest3::cbtk(bits).decode_quat(dropped.min(3), n)
}

/// The rotation that turns front (0, 0, 1) and up (0, 1, 0) into the given directions:
/// right = up x front, the matrix with columns right, up, front, converted to a quaternion.
/// Both are normalized and up is made perpendicular to front first. Returns `None` when
/// either is zero, not finite, or they are parallel.
pub fn from_front_up(front: DVec3, up: DVec3) -> Option<DQuat> {
    if !front.is_finite() || !up.is_finite() {
        return None;
    }
    let f = front.try_normalize()?;
    let r = up.cross(f).try_normalize()?;
    let u = f.cross(r);
    Some(DQuat::from_mat3(&DMat3::from_cols(r, u, f)).normalize())
}

/// The front direction of rotation `q`, by the spec's formula.
pub fn front(q: DQuat) -> DVec3 {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    DVec3::new(
        2.0 * (x * z + w * y),
        2.0 * (y * z - w * x),
        1.0 - 2.0 * (x * x + y * y),
    )
}

/// The up direction of rotation `q`, by the spec's formula.
pub fn up(q: DQuat) -> DVec3 {
    let (x, y, z, w) = (q.x, q.y, q.z, q.w);
    DVec3::new(
        2.0 * (x * y - w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z + w * x),
    )
}

/// Angle in radians between two rotations (0..=π), sign of either quaternion ignored: both
/// are normalized, then measured with [`crate::quant::angle_between_rad`].
pub fn angle_between(a: DQuat, b: DQuat) -> f64 {
    angle_between_rad(a.normalize(), b.normalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_component() {
        let q = from_front_up(DVec3::new(0.866_025_4, 0.0, 0.5), DVec3::Y).unwrap();
        let (d, n) = encode(q, 12);
        assert_eq!((d, n), (3, [0, 1447, 0]));
        let back = decode(3, [0, 1447, 0], 12);
        assert!((back.y - 0.49985).abs() < 5e-6);
        assert!((back.w - 0.86611).abs() < 5e-6);
        let f = front(back);
        assert!((f.x - 0.86585).abs() < 5e-6 && f.y.abs() < 1e-12 && (f.z - 0.50031).abs() < 5e-6);
    }

    #[test]
    fn identity_and_directions() {
        assert_eq!(encode(DQuat::IDENTITY, 12), (3, [0, 0, 0]));
        let q = DQuat::from_rotation_y(0.3) * DQuat::from_rotation_x(-0.7);
        let q2 = from_front_up(front(q), up(q)).unwrap();
        assert!(angle_between(q, q2) < 1e-9);
        assert!(from_front_up(DVec3::Y, DVec3::Y).is_none());
    }

    #[test]
    fn rounding_within_bound_at_every_width() {
        let mut s = 12345u64;
        let mut rnd = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        for bits in 8..=16u8 {
            for _ in 0..5000 {
                let q = DQuat::from_xyzw(rnd(), rnd(), rnd(), rnd());
                if q.length() < 0.1 {
                    continue;
                }
                let (d, n) = encode(q, bits);
                assert!(n.iter().all(|v| v.abs() <= max_code(bits)));
                let back = decode(d, n, bits);
                assert!(angle_between(q.normalize(), back) <= turn_bound_rad(bits));
            }
        }
    }
}
