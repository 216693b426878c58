//! SNAP v1.3 CFrame compression: a position in studs plus a smallest-three rotation, 18 bytes.
//!
//! Spec sections implemented here (`specs/snap-v1.3.txt`): "CFrame Schema (non-delta
//! encoded)", "Z-component packing", "Compression", "Decompression" and the paragraph on
//! fatal (de)compression errors.
//!
//! # Layout, in numbers
//!
//! A [`PackedCFrame`] holds X and Y as plain `f32` studs, Z as the raw `u32` bit pattern of
//! an `f32` whose two least-significant bits carry the index (0 = qx, 1 = qy, 2 = qz,
//! 3 = qw) of the dropped quaternion component, and the three kept components as `i16`
//! codes, each the component times 32767 rounded to the nearest integer (halves away from
//! zero). The bytes themselves are written by the generated raw layer;
//! [`PackedCFrame::to_le_bytes`] exists for goldens and tests.
//!
//! # Worst-case errors
//!
//! - **Rotation**: at most [`CFRAME_ROT_ERROR_BOUND_RAD`] = 1.1e-4 rad (about 0.0063°)
//!   between the rotation given to [`compress_cframe`] and the one
//!   [`decompress_cframe`] returns. Derivation: each kept component is off by at most
//!   h = 0.5 / 32767 ≈ 1.526e-5. The dropped component d is rebuilt as
//!   `sqrt(1 - sum of squares)`, so the decoded 4-vector lies on the unit sphere and d
//!   moves by about `sum(|q_i| h) / |d|`, which is at most 3h because the dropped component
//!   is the largest in magnitude. The 4-D error is then at most `sqrt(3 h² + 9 h²) =
//!   sqrt(12) h`, and a rotation angle is twice the 4-D angle: `2 sqrt(12) h ≈ 1.0572e-4`
//!   rad, reached at the 120° rotation with all four components equal to 1/2 (a unit test
//!   pins that case). Measured: 9.45e-5 rad at most over one million random unit
//!   quaternions, 1.028e-4 over 100 000 rotations near the all-1/2 corner, 1.0572e-4 at the
//!   corner itself. The margin up to 1.1e-4 covers the `f32` rounding of the result.
//! - **Z**: the index overwrites Z's two low mantissa bits, which moves Z by up to 3 units
//!   in the last place: `3 · 2^(k-23)` studs when `2^k ≤ |Z| < 2^(k+1)`, about 1.8e-4 studs
//!   at |Z| = 1000 (see [`z_index_error_bound`]). The spec's "~1e-5" holds only below
//!   |Z| = 32 studs. X and Y are stored exactly.
//!
//! # Decisions where the spec is silent or contradicts itself
//!
//! - "Largest" component means largest in magnitude (the sign step only makes sense then);
//!   on an exact tie the first in x, y, z, w order wins.
//! - Input rotations are `glam::Quat`; any finite non-zero quaternion is accepted and
//!   normalized, and the steps run in `f64`. The axis-angle step takes the short way
//!   (angle in `[0, π]`), and `q` and `-q` compress to the same bytes.
//! - An all-zero quaternion names no rotation and is refused ([`QuantError::ZeroRotation`])
//!   rather than silently stored as the identity.
//! - The decoder clears the index bits of Z (masked Z) and normalizes the rebuilt
//!   quaternion, so damaged codes still give a rotation.
//! - The spec's worked example prints Z's bytes as `C0 1E 58 C3`, whose low bits name index
//!   0, while its text gives index 3. We follow the text: the f32 of -216.12019 is
//!   0xC3581EC5 and with index 3 it is stored as 0xC3581EC7 (`C7 1E 58 C3`). Both facts are
//!   pinned by tests.

use crate::quant::smallest3;
use glam::{DQuat, DVec3, Quat, Vec3};
use serde::{Deserialize, Serialize};

/// Scale of a kept quaternion component: code = round(component × 32767), a unitless
/// integer in `-32767..=32767` (SNAP v1.3, "Compression", step 6).
pub const SMALLEST_THREE_SCALE: f64 = 32767.0;

/// Mask of the dropped-component index inside [`PackedCFrame::z_bits`] (the two
/// least-significant bits; SNAP v1.3, "Z-component packing").
pub const Z_INDEX_MASK: u32 = 0b11;

/// Worst-case rotation error of [`compress_cframe`] followed by [`decompress_cframe`], in
/// radians (the angle of the rotation between input and output). The analytic worst case
/// is `2 · sqrt(12) · 0.5 / 32767 ≈ 1.0572e-4` rad; the constant adds margin for `f32`
/// rounding. See the module documentation for the derivation.
pub const CFRAME_ROT_ERROR_BOUND_RAD: f64 = 1.1e-4;

/// Below this length an axis returned by the axis-angle step counts as insignificant and
/// the spec's X fallback is taken ("Compression", step 2). Our axis is either unit length
/// or exactly zero, so any value in (0, 1) behaves the same.
const AXIS_SIGNIFICANT: f64 = 1e-6;

/// Below this squared length the rebuilt quaternion counts as insignificant and becomes
/// the identity ("Compression", step 4).
const LENGTH_SQ_SIGNIFICANT: f64 = 1e-12;

/// A compressed CFrame exactly as SNAP v1.3 stores it (section "CFrame Schema"): 18 bytes
/// once written little-endian as X, Y, Z, q0, q1, q2.
///
/// - `x`, `y`: position in studs, stored as given (any `f32` bit pattern can appear when
///   read from bytes; [`compress_cframe`] only produces finite values).
/// - `z_bits`: the `f32` bit pattern of Z in studs, with its two least-significant bits
///   replaced by the index of the dropped quaternion component (0 = qx, 1 = qy, 2 = qz,
///   3 = qw). Read Z with [`PackedCFrame::z_studs_masked`] or
///   [`PackedCFrame::z_studs_raw`].
/// - `q`: the three kept components in x, y, z, w order, each multiplied by the sign of
///   the dropped component and by 32767, rounded. Encoder output lies in
///   `-23170..=23170` (a kept component is at most 1/√2 in magnitude); any `i16` decodes.
///
/// `PartialEq` compares the floats by value, so a NaN X or Y never compares equal; compare
/// [`PackedCFrame::to_le_bytes`] for bit-exact equality.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PackedCFrame {
    /// X position in studs.
    pub x: f32,
    /// Y position in studs.
    pub y: f32,
    /// Bit pattern of the Z position (studs) with the dropped-component index in bits 0..2.
    pub z_bits: u32,
    /// The kept quaternion components, scaled by 32767 (unitless codes).
    pub q: [i16; 3],
}

impl PackedCFrame {
    /// Size of the stored CFrame in bytes (SNAP v1.3, "CFrame Schema": 18).
    pub const SIZE: usize = 18;

    /// Index of the dropped quaternion component, `0..=3` (0 = qx ... 3 = qw), read from the
    /// two low bits of `z_bits` (SNAP v1.3, "Decompression", step 1). Never fails.
    pub fn dropped_index(&self) -> u8 {
        (self.z_bits & Z_INDEX_MASK) as u8
    }

    /// Z in studs with the index bits left in place: the stored `f32` as is. It differs from
    /// the Z given to [`compress_cframe`] by at most [`z_index_error_bound`]`(z)`. The spec
    /// allows reading Z this way ("masking the LSBs is optional").
    pub fn z_studs_raw(&self) -> f32 {
        f32::from_bits(self.z_bits)
    }

    /// Z in studs with the two index bits cleared. This is the Z that [`decompress_cframe`]
    /// returns, so a decoded position does not depend on the rotation stored beside it. It
    /// differs from the compressed Z by at most [`z_index_error_bound`]`(z)`.
    pub fn z_studs_masked(&self) -> f32 {
        f32::from_bits(self.z_bits & !Z_INDEX_MASK)
    }

    /// True when X, Y and the masked Z are all finite. Bytes read from a file can hold NaN or
    /// infinities; the SNAP chain decoder refuses such a frame (the spec makes errors during
    /// decompression fatal).
    pub fn is_finite(&self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.z_studs_masked().is_finite()
    }

    /// The 18 stored bytes, little-endian: X, Y, Z (with index bits), q0, q1, q2
    /// (SNAP v1.3, "CFrame Schema"). Never fails.
    pub fn to_le_bytes(&self) -> [u8; Self::SIZE] {
        let mut out = [0u8; Self::SIZE];
        out[0..4].copy_from_slice(&self.x.to_le_bytes());
        out[4..8].copy_from_slice(&self.y.to_le_bytes());
        out[8..12].copy_from_slice(&self.z_bits.to_le_bytes());
        for (i, code) in self.q.iter().enumerate() {
            let at = 12 + 2 * i;
            out[at..at + 2].copy_from_slice(&code.to_le_bytes());
        }
        out
    }

    /// Reads the 18 stored bytes (little-endian X, Y, Z, q0, q1, q2). Every bit pattern is
    /// accepted and kept exactly, so `from_le_bytes(b).to_le_bytes() == b` for all `b`.
    pub fn from_le_bytes(bytes: &[u8; Self::SIZE]) -> Self {
        let word = |at: usize| [bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]];
        let half = |at: usize| i16::from_le_bytes([bytes[at], bytes[at + 1]]);
        Self {
            x: f32::from_le_bytes(word(0)),
            y: f32::from_le_bytes(word(4)),
            z_bits: u32::from_le_bytes(word(8)),
            q: [half(12), half(14), half(16)],
        }
    }
}

/// Errors of the quantizers in this module. The spec makes every (de)compression error
/// fatal; a writer returns one of these instead of storing a value it cannot represent.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum QuantError {
    /// A position coordinate is NaN or infinite.
    #[error("position ({x}, {y}, {z}) studs is not finite; SNAP v1.3 cannot store it")]
    NonFinitePosition {
        /// X as given, studs.
        x: f32,
        /// Y as given, studs.
        y: f32,
        /// Z as given, studs.
        z: f32,
    },
    /// A quaternion component is NaN or infinite.
    #[error("rotation quaternion ({x}, {y}, {z}, {w}) is not finite")]
    NonFiniteRotation {
        /// Component x as given.
        x: f32,
        /// Component y as given.
        y: f32,
        /// Component z as given.
        z: f32,
        /// Component w as given.
        w: f32,
    },
    /// All four quaternion components are zero, which names no rotation.
    #[error("rotation quaternion is all zeros and names no rotation")]
    ZeroRotation,
}

/// Checks that `pos_studs` is finite.
///
/// Errors: [`QuantError::NonFinitePosition`] when any coordinate is NaN or infinite.
pub fn check_position(pos_studs: Vec3) -> Result<(), QuantError> {
    if pos_studs.is_finite() {
        Ok(())
    } else {
        Err(QuantError::NonFinitePosition {
            x: pos_studs.x,
            y: pos_studs.y,
            z: pos_studs.z,
        })
    }
}

/// Checks that `rot` names a rotation and returns it in `f64`, normalized to unit length.
/// Any finite, non-zero quaternion is accepted: a quaternion and its positive multiples
/// (and their negations) name the same rotation.
///
/// Errors: [`QuantError::NonFiniteRotation`] for NaN or infinite components,
/// [`QuantError::ZeroRotation`] for the all-zero quaternion.
pub fn unit_rotation(rot: Quat) -> Result<DQuat, QuantError> {
    if !rot.is_finite() {
        return Err(QuantError::NonFiniteRotation {
            x: rot.x,
            y: rot.y,
            z: rot.z,
            w: rot.w,
        });
    }
    let q = rot.as_dquat();
    // Squares of f32 values cannot overflow or vanish in f64, so the length is exact enough
    // and is zero only for the all-zero quaternion.
    let len = q.length();
    if len == 0.0 {
        return Err(QuantError::ZeroRotation);
    }
    Ok(q / len)
}

/// Axis-angle form of a rotation, taking the short way: the returned angle is in
/// `[0, π]` radians and the axis is a unit vector, or the zero vector for the identity.
///
/// `q` must be finite and non-zero (its length does not matter); `q` and `-q` give the
/// same result. Used by SNAP v1.3 "Compression" step 1 and by the rotation delta.
pub fn to_axis_angle(q: DQuat) -> (DVec3, f64) {
    let q = if q.w < 0.0 { -q } else { q };
    let v = DVec3::new(q.x, q.y, q.z);
    let s = v.length();
    let angle = 2.0 * s.atan2(q.w);
    let axis = if s > 0.0 { v / s } else { DVec3::ZERO };
    (axis, angle)
}

/// Steps 2 to 4 of SNAP v1.3 "Compression": rebuild (qx, qy, qz, qw) from an axis and an
/// angle, with the spec's fallbacks, normalized.
fn quaternion_from_axis_angle_steps(axis: DVec3, angle: f64) -> [f64; 4] {
    let (sin_half, cos_half) = (0.5 * angle).sin_cos();
    let magnitude = axis.length();
    let (x, y, z) = if magnitude > AXIS_SIGNIFICANT {
        let k = sin_half / magnitude;
        (axis.x * k, axis.y * k, axis.z * k)
    } else {
        (sin_half, 0.0, 0.0)
    };
    let w = cos_half;
    let len_sq = x * x + y * y + z * z + w * w;
    if len_sq < LENGTH_SQ_SIGNIFICANT {
        [0.0, 0.0, 0.0, 1.0]
    } else {
        let len = len_sq.sqrt();
        [x / len, y / len, z / len, w / len]
    }
}

/// Compresses a rotation to its smallest-three form: the dropped-component index `0..=3`
/// (0 = qx ... 3 = qw) and the three kept codes (SNAP v1.3 "Compression", steps 1 to 6).
///
/// `rot` is any finite, non-zero quaternion (x, y, z, w); it is normalized first and the
/// steps run in `f64`. The largest component is chosen by magnitude (the first in x, y, z,
/// w order on an exact tie) and the kept components are multiplied by its sign, so `rot`
/// and `-rot` give identical output. Codes lie in `-23170..=23170`.
///
/// Errors: [`QuantError::NonFiniteRotation`], [`QuantError::ZeroRotation`].
pub fn compress_rotation(rot: Quat) -> Result<(u8, [i16; 3]), QuantError> {
    let unit = unit_rotation(rot)?;
    let (axis, angle) = to_axis_angle(unit);
    let c = quaternion_from_axis_angle_steps(axis, angle);
    // Steps 5 and 6: the shared core with SNAP's preset; codes are within ±32767.
    let (index, codes) = smallest3::SNAP.encode(c);
    Ok((index, codes.map(|v| v as i16)))
}

/// Rebuilds a rotation from its smallest-three form (SNAP v1.3 "Decompression", steps 2 to
/// 4): each code divided by 32767, the dropped component set to
/// `sqrt(max(0, 1 - (q0² + q1² + q2²)))` and placed at `index` (only the two low bits of
/// `index` are used, as when it comes from `z_bits & 3`).
///
/// The result is normalized, so any three `i16` codes (including out-of-range ones read
/// from a damaged file, where the clamp under the root applies) give a unit quaternion; it
/// never fails and never returns NaN. For encoder output the normalization changes nothing
/// beyond rounding.
pub fn decompress_rotation(index: u8, q: [i16; 3]) -> Quat {
    smallest3::SNAP
        .decode_quat(index & 0b11, q.map(i32::from))
        .as_quat()
}

/// Writes a dropped-component index into the two least-significant bits of Z, treating Z as
/// a `u32` (SNAP v1.3 "Z-component packing"). A finite Z stays finite: only mantissa bits
/// change.
fn pack_z(z_studs: f32, index: u8) -> u32 {
    (z_studs.to_bits() & !Z_INDEX_MASK) | (u32::from(index) & Z_INDEX_MASK)
}

/// Compresses a position and a rotation into SNAP v1.3's 18-byte CFrame (sections
/// "Compression" and "Z-component packing").
///
/// - `pos_studs`: position in studs, any finite `f32`s. X and Y are stored exactly; Z loses
///   its two low mantissa bits to the index (error at most [`z_index_error_bound`]).
/// - `rot`: rotation as a `glam::Quat` (x, y, z, w), any finite non-zero quaternion; it is
///   normalized and processed in `f64` (see [`compress_rotation`]). An `f32` quaternion is
///   the type the rest of the semantic layer uses, and its ~6e-8 rounding is far below the
///   1.5e-5 step of the codes.
///
/// Worst-case rotation error after [`decompress_cframe`]: [`CFRAME_ROT_ERROR_BOUND_RAD`].
///
/// Errors (all fatal per the spec): [`QuantError::NonFinitePosition`],
/// [`QuantError::NonFiniteRotation`], [`QuantError::ZeroRotation`].
pub fn compress_cframe(pos_studs: Vec3, rot: Quat) -> Result<PackedCFrame, QuantError> {
    check_position(pos_studs)?;
    let (index, q) = compress_rotation(rot)?;
    Ok(PackedCFrame {
        x: pos_studs.x,
        y: pos_studs.y,
        z_bits: pack_z(pos_studs.z, index),
        q,
    })
}

/// Decompresses a SNAP v1.3 CFrame (section "Decompression") into a position in studs and
/// a unit rotation quaternion.
///
/// The returned Z is [`PackedCFrame::z_studs_masked`] (index bits cleared), so the decoded
/// position does not depend on which component was dropped. The rotation comes from
/// [`decompress_rotation`] with `z_bits & 3` as the index.
///
/// Never fails: the rotation is always a finite unit quaternion. The position is passed
/// through as stored, so a frame read from damaged bytes may carry NaN or infinite
/// coordinates; check [`PackedCFrame::is_finite`] where the spec's fatal rule applies (the
/// SNAP chain decoder does).
pub fn decompress_cframe(packed: &PackedCFrame) -> (Vec3, Quat) {
    let pos = Vec3::new(packed.x, packed.y, packed.z_studs_masked());
    let rot = decompress_rotation(packed.dropped_index(), packed.q);
    (pos, rot)
}

/// Spacing of `f32` values (one unit in the last place) at the binade of `v`, in the units
/// of `v`; `2^-149` for zero and subnormals. Non-finite input gives infinity.
fn ulp(v: f32) -> f32 {
    if !v.is_finite() {
        return f32::INFINITY;
    }
    let exp = (v.to_bits() >> 23) & 0xff;
    if exp > 23 {
        // Normal result: 2^(exp - 150) with a biased exponent field of exp - 23.
        f32::from_bits((exp - 23) << 23)
    } else if exp >= 1 {
        // Subnormal result: 2^(exp - 150) = 2^(exp - 1) · 2^-149.
        f32::from_bits(1 << (exp - 1))
    } else {
        f32::from_bits(1)
    }
}

/// Worst-case change of Z, in studs, caused by storing the dropped-component index in Z's
/// two least-significant bits (SNAP v1.3 "Z-component packing"), for either way of reading
/// Z back ([`PackedCFrame::z_studs_raw`] or [`PackedCFrame::z_studs_masked`]).
///
/// The low two bits change by at most 3, so the bound is 3 units in the last place of `z`:
/// `3 · 2^(k-23)` when `2^k ≤ |z| < 2^(k+1)`, for example 4.5e-7 at 1 stud, 2.9e-5 at 100,
/// 1.83e-4 at 1000 and 0.1875 at 500 000 studs; `3 · 2^-149` for zero and subnormals. The
/// spec's "~1e-5" is only true below 32 studs. Returns infinity for NaN or infinite `z`
/// (which [`compress_cframe`] refuses anyway). Never fails.
pub fn z_index_error_bound(z: f32) -> f32 {
    3.0 * ulp(z)
}

#[cfg(test)]
// The spec example's decimal digits are kept as printed, beyond f32 precision.
#[allow(clippy::excessive_precision)]
mod tests {
    use super::*;
    use crate::quant::angle_between_rad;
    use glam::EulerRot;

    /// Small deterministic generator (splitmix64) for the measurement tests.
    struct Rng(u64);
    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        /// Uniform in [-1, 1).
        fn unit(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
        }
        /// A unit quaternion, uniform over rotations (rejection sampling in the 4-ball).
        fn quat(&mut self) -> Quat {
            loop {
                let v = [self.unit(), self.unit(), self.unit(), self.unit()];
                let n2: f64 = v.iter().map(|c| c * c).sum();
                if n2 > 1e-6 && n2 <= 1.0 {
                    let n = n2.sqrt();
                    return Quat::from_xyzw(
                        (v[0] / n) as f32,
                        (v[1] / n) as f32,
                        (v[2] / n) as f32,
                        (v[3] / n) as f32,
                    );
                }
            }
        }
    }

    /// Rotation error of one compress/decompress round trip, radians.
    fn round_trip_error(rot: Quat) -> f64 {
        let (index, q) = compress_rotation(rot).unwrap();
        let back = decompress_rotation(index, q);
        angle_between_rad(unit_rotation(rot).unwrap(), back.as_dquat())
    }

    /// Roblox `CFrame.fromOrientation(rx, ry, rz)` = rotY(ry) · rotX(rx) · rotZ(rz).
    fn from_orientation_deg(rx: f64, ry: f64, rz: f64) -> Quat {
        DQuat::from_euler(
            EulerRot::YXZ,
            ry.to_radians(),
            rx.to_radians(),
            rz.to_radians(),
        )
        .as_quat()
    }

    #[test]
    fn from_orientation_is_y_then_x_then_z() {
        let (rx, ry, rz) = (0.3f64, -1.1f64, 0.7f64);
        let composed =
            DQuat::from_rotation_y(ry) * DQuat::from_rotation_x(rx) * DQuat::from_rotation_z(rz);
        let built = from_orientation_deg(rx.to_degrees(), ry.to_degrees(), rz.to_degrees());
        assert!(angle_between_rad(composed, built.as_dquat()) < 1e-6);
    }

    #[test]
    fn spec_example_values_and_bytes() {
        let pos = Vec3::new(-86.98088, 447.52756, -216.12019);
        let rot = from_orientation_deg(-13.207, 58.252, 0.0);
        let packed = compress_cframe(pos, rot).unwrap();
        assert_eq!(packed.dropped_index(), 3);
        assert_eq!(packed.q, [-3292, 15843, 1834]);
        assert_eq!(
            packed.to_le_bytes(),
            [
                0x36, 0xF6, 0xAD, 0xC2, 0x87, 0xC3, 0xDF, 0x43, 0xC7, 0x1E, 0x58, 0xC3, 0x24, 0xF3,
                0xE3, 0x3D, 0x2A, 0x07
            ]
        );
        assert_eq!(PackedCFrame::from_le_bytes(&packed.to_le_bytes()), packed);
    }

    /// The spec's table prints Z as `C0 1E 58 C3`. The f32 nearest -216.12019 is 0xC3581EC5;
    /// writing index 3 into its two low bits gives 0xC3581EC7 (low byte C7). A low byte of
    /// C0 carries index 0 (qx), which contradicts the example's own i = 3. We follow the text
    /// and pin both facts here.
    #[test]
    fn spec_table_z_byte_contradicts_its_index() {
        let z = -216.12019f32;
        assert_eq!(z.to_bits(), 0xC358_1EC5);
        assert_eq!(pack_z(z, 3), 0xC358_1EC7);
        let table_z = u32::from_le_bytes([0xC0, 0x1E, 0x58, 0xC3]);
        assert_eq!(
            table_z & Z_INDEX_MASK,
            0,
            "the table's Z byte names index 0"
        );
        let packed = PackedCFrame {
            x: 0.0,
            y: 0.0,
            z_bits: table_z,
            q: [-3292, 15843, 1834],
        };
        assert_eq!(packed.dropped_index(), 0);
        // Decoding the table's bytes with index 0 gives a different rotation from the text's.
        let text = decompress_rotation(3, [-3292, 15843, 1834]);
        let table = decompress_rotation(0, [-3292, 15843, 1834]);
        assert!(angle_between_rad(text.as_dquat(), table.as_dquat()) > 1.0);
    }

    #[test]
    fn spec_example_round_trip() {
        let pos = Vec3::new(-86.98088, 447.52756, -216.12019);
        let rot = from_orientation_deg(-13.207, 58.252, 0.0);
        let (p, r) = decompress_cframe(&compress_cframe(pos, rot).unwrap());
        assert_eq!(p.x, pos.x);
        assert_eq!(p.y, pos.y);
        assert!((p.z - pos.z).abs() <= z_index_error_bound(pos.z));
        assert_eq!(p.z.to_bits(), 0xC358_1EC4);
        assert!(angle_between_rad(rot.as_dquat(), r.as_dquat()) <= CFRAME_ROT_ERROR_BOUND_RAD);
    }

    #[test]
    fn z_raw_and_masked() {
        let packed = compress_cframe(Vec3::new(1.0, 2.0, 3.0), Quat::IDENTITY).unwrap();
        assert_eq!(packed.dropped_index(), 3);
        assert_eq!(packed.z_bits, 3.0f32.to_bits() | 3);
        assert_eq!(packed.z_studs_masked(), 3.0);
        assert_eq!(packed.z_studs_raw(), f32::from_bits(3.0f32.to_bits() | 3));
        assert_eq!(decompress_cframe(&packed).0.z, 3.0);
    }

    #[test]
    fn z_index_error_bound_values() {
        // |Z| = 1000 lies in [512, 1024): ulp = 2^-14, bound = 3 · 2^-14.
        assert_eq!(z_index_error_bound(1000.0), 3.0 * 2f32.powi(-14));
        assert!((z_index_error_bound(-1000.0) - 1.83e-4).abs() < 1e-6);
        assert!(z_index_error_bound(1000.0) > 1e-5 * 10.0);
        assert_eq!(z_index_error_bound(1.0), 3.0 * 2f32.powi(-23));
        assert_eq!(z_index_error_bound(1.999), 3.0 * 2f32.powi(-23));
        assert_eq!(z_index_error_bound(2.0), 3.0 * 2f32.powi(-22));
        assert_eq!(z_index_error_bound(0.0), 3.0 * f32::from_bits(1));
        assert_eq!(
            z_index_error_bound(f32::MIN_POSITIVE),
            3.0 * f32::from_bits(1)
        );
        assert_eq!(z_index_error_bound(f32::MAX), 3.0 * 2f32.powi(104));
        assert_eq!(z_index_error_bound(f32::NAN), f32::INFINITY);
        assert_eq!(z_index_error_bound(f32::NEG_INFINITY), f32::INFINITY);
        // The spec's "~1e-5" holds below 32 studs and fails from 32 on.
        assert!(z_index_error_bound(31.9) < 1e-5);
        assert!(z_index_error_bound(32.0) > 1e-5);
    }

    /// The bound is reached (index 3 over low bits 00, or index 0 over low bits 11) and never
    /// exceeded, for both ways of reading Z, across the binades.
    #[test]
    fn z_index_error_bound_is_tight_and_holds() {
        let mut rng = Rng(7);
        for exp in -126i32..=127 {
            let base = 2f32.powi(exp);
            let tight_up = f32::from_bits(base.to_bits() & !3);
            let bound = z_index_error_bound(tight_up);
            assert_eq!(
                (f32::from_bits(pack_z(tight_up, 3)) - tight_up).abs(),
                bound
            );
            for _ in 0..16 {
                let bits = (base.to_bits() & 0xFF80_0000) | (rng.next_u64() as u32 & 0x007F_FFFF);
                let z = f32::from_bits(bits);
                for index in 0..4u8 {
                    let p = PackedCFrame {
                        x: 0.0,
                        y: 0.0,
                        z_bits: pack_z(z, index),
                        q: [0; 3],
                    };
                    assert!((p.z_studs_raw() - z).abs() <= z_index_error_bound(z));
                    assert!((p.z_studs_masked() - z).abs() <= z_index_error_bound(z));
                }
            }
        }
    }

    #[test]
    fn refuses_non_finite_and_zero() {
        let ok = Quat::IDENTITY;
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            assert!(matches!(
                compress_cframe(Vec3::new(bad, 0.0, 0.0), ok),
                Err(QuantError::NonFinitePosition { .. })
            ));
            assert!(matches!(
                compress_cframe(Vec3::new(0.0, 0.0, bad), ok),
                Err(QuantError::NonFinitePosition { .. })
            ));
            assert!(matches!(
                compress_cframe(Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, bad)),
                Err(QuantError::NonFiniteRotation { .. })
            ));
            assert!(matches!(
                compress_cframe(Vec3::ZERO, Quat::from_xyzw(bad, 0.0, 0.0, 1.0)),
                Err(QuantError::NonFiniteRotation { .. })
            ));
        }
        assert_eq!(
            compress_cframe(Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
            Err(QuantError::ZeroRotation)
        );
        assert_eq!(
            compress_cframe(Vec3::ZERO, Quat::from_xyzw(-0.0, 0.0, -0.0, 0.0)),
            Err(QuantError::ZeroRotation)
        );
        // Extreme but finite values are fine.
        let big = compress_cframe(
            Vec3::splat(f32::MAX),
            Quat::from_xyzw(f32::MAX, f32::MAX, 0.0, 0.0),
        )
        .unwrap();
        assert!(big.is_finite());
        let tiny = Quat::from_xyzw(f32::from_bits(1), 0.0, 0.0, 0.0);
        let (i, q) = compress_rotation(tiny).unwrap();
        assert_eq!((i, q), (0, [0, 0, 0]));
        assert!(round_trip_error(tiny) < 1e-9);
    }

    #[test]
    fn finite_z_stays_finite_with_any_index() {
        for z in [
            0.0,
            -0.0,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            1.0,
        ] {
            for index in 0..4 {
                assert!(f32::from_bits(pack_z(z, index)).is_finite());
            }
        }
    }

    #[test]
    fn index_for_each_case() {
        let cases = [
            (Quat::from_xyzw(0.9, 0.3, -0.2, 0.1), 0u8),
            (Quat::from_xyzw(0.1, -0.9, 0.3, 0.2), 1),
            (Quat::from_xyzw(0.2, 0.1, 0.9, -0.3), 2),
            (Quat::from_xyzw(-0.3, 0.2, 0.1, 0.9), 3),
            // Negative largest components: chosen by magnitude, sign folded into the others.
            (Quat::from_xyzw(-0.9, 0.3, -0.2, 0.1), 0),
            (Quat::from_xyzw(0.1, 0.3, -0.2, -0.9), 3),
        ];
        for (rot, want) in cases {
            let (index, _) = compress_rotation(rot).unwrap();
            assert_eq!(index, want, "{rot:?}");
            assert!(round_trip_error(rot) <= CFRAME_ROT_ERROR_BOUND_RAD);
        }
    }

    #[test]
    fn sign_of_dropped_is_folded_into_kept() {
        let rot = Quat::from_xyzw(-0.9, 0.3, -0.2, 0.1).normalize();
        let (index, q) = compress_rotation(rot).unwrap();
        assert_eq!(index, 0);
        let n = DQuat::from_xyzw(-0.9, 0.3, -0.2, 0.1).normalize();
        let want = [-n.y, -n.z, -n.w].map(|v| (v * 32767.0).round() as i16);
        assert_eq!(q, want);
        // q and -q are the same rotation and compress identically.
        assert_eq!(compress_rotation(-rot).unwrap(), (index, q));
    }

    #[test]
    fn identity_rotation() {
        let (index, q) = compress_rotation(Quat::IDENTITY).unwrap();
        assert_eq!((index, q), (3, [0, 0, 0]));
        assert_eq!(decompress_rotation(3, [0, 0, 0]), Quat::IDENTITY);
        assert_eq!(compress_rotation(-Quat::IDENTITY).unwrap(), (3, [0, 0, 0]));
        // Scaled quaternions name the same rotation.
        assert_eq!(
            compress_rotation(Quat::from_xyzw(0.0, 0.0, 0.0, 5.0)).unwrap(),
            (3, [0, 0, 0])
        );
    }

    #[test]
    fn half_turns() {
        // 180° about each axis: w = 0, the axis component is dropped.
        for (axis, index) in [(Vec3::X, 0u8), (Vec3::Y, 1), (Vec3::Z, 2)] {
            let rot = Quat::from_axis_angle(axis, std::f32::consts::PI);
            let (i, q) = compress_rotation(rot).unwrap();
            assert_eq!((i, q), (index, [0, 0, 0]), "{axis:?}");
            assert!(round_trip_error(rot) < 1e-6);
            assert!(round_trip_error(-rot) < 1e-6);
        }
        // 180° about a diagonal axis.
        let rot =
            Quat::from_axis_angle(Vec3::new(1.0, -2.0, 0.5).normalize(), std::f32::consts::PI);
        assert!(round_trip_error(rot) <= CFRAME_ROT_ERROR_BOUND_RAD);
        assert!(round_trip_error(-rot) <= CFRAME_ROT_ERROR_BOUND_RAD);
    }

    #[test]
    fn exact_ties_pick_the_first_component() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let largest_index = |c: &[f64; 4]| smallest3::SNAP.encode(*c).0;
        assert_eq!(largest_index(&[h, 0.0, 0.0, h]), 0);
        assert_eq!(largest_index(&[0.0, -h, h, 0.0]), 1);
        assert_eq!(largest_index(&[0.0, 0.0, h, -h]), 2);
        assert_eq!(largest_index(&[0.5, 0.5, -0.5, 0.5]), 0);
        assert_eq!(largest_index(&[0.0, 0.0, 0.0, 1.0]), 3);
    }

    /// Rotations whose two or four largest components tie at ±1/√2 or ±1/2: whichever one
    /// the rounding of the axis-angle step makes largest, the result decodes within the bound.
    #[test]
    fn ties_decode_within_bound() {
        let h = std::f32::consts::FRAC_1_SQRT_2;
        let mut cases = Vec::new();
        for i in 0..4 {
            for j in (i + 1)..4 {
                for (si, sj) in [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)] {
                    let mut c = [0.0f32; 4];
                    c[i] = si * h;
                    c[j] = sj * h;
                    cases.push(Quat::from_array(c));
                }
            }
        }
        for signs in 0..16u32 {
            let c: [f32; 4] = std::array::from_fn(|k| if signs >> k & 1 == 1 { -0.5 } else { 0.5 });
            cases.push(Quat::from_array(c));
        }
        for rot in cases {
            let (index, q) = compress_rotation(rot).unwrap();
            let largest = rot.to_array()[usize::from(index)].abs();
            assert!(
                rot.to_array().iter().all(|c| c.abs() <= largest + 1e-6),
                "{rot:?}"
            );
            assert!(q.iter().all(|c| c.unsigned_abs() <= 23170), "{rot:?} {q:?}");
            let err = round_trip_error(rot);
            assert!(err <= CFRAME_ROT_ERROR_BOUND_RAD, "{rot:?}: {err}");
        }
    }

    /// The 120° rotation with all components 1/2: every kept code sits on a .5 rounding tie
    /// (16384) and the rebuilt component would come out below the kept ones, three times
    /// their error; the decoder raises it to the largest kept magnitude (so that the index
    /// does not flip on re-encoding), which lands almost exactly on the input. A neighbour
    /// whose rebuilt component is not raised shows the analytic error.
    #[test]
    fn worst_case_is_reached_and_bounded() {
        let rot = Quat::from_xyzw(0.5, 0.5, 0.5, 0.5);
        let (index, q) = compress_rotation(rot).unwrap();
        // The axis-angle step decides which of the four equal components comes out largest.
        assert_eq!(q, [16384, 16384, 16384]);
        let err = round_trip_error(rot);
        assert!(err < 1e-6, "{err}");
        let (i2, _) = compress_rotation(decompress_rotation(index, q)).unwrap();
        assert_eq!(i2, index);
        // Kept codes 16383 (0.499985): the rebuilt x (0.500046) is the largest, nothing is
        // raised, and the error against the all-1/2 rotation is the analytic one.
        let back = decompress_rotation(0, [16383, 16383, 16383]).as_dquat();
        let centre = DQuat::from_xyzw(0.5, 0.5, 0.5, 0.5);
        let analytic = 2.0 * 12f64.sqrt() * 0.5 / 32767.0;
        let e = angle_between_rad(centre, back);
        assert!(
            e > 0.9 * analytic && e <= analytic * 1.001 + 1e-7,
            "{e} vs {analytic}"
        );
        assert!(e <= CFRAME_ROT_ERROR_BOUND_RAD);
    }

    /// Measured worst case over one million random unit quaternions (uniform over rotations)
    /// and over a dense sweep near the all-1/2 corner: 9.45e-5 rad and 1.028e-4 rad when
    /// this was written; the documented bound is 1.1e-4.
    #[test]
    fn measured_rotation_error_over_random_quaternions() {
        let mut rng = Rng(0x5EED);
        let mut worst = 0.0f64;
        for _ in 0..1_000_000 {
            worst = worst.max(round_trip_error(rng.quat()));
        }
        assert!(worst <= CFRAME_ROT_ERROR_BOUND_RAD, "{worst}");
        assert!(worst > 5e-5, "{worst}");
        let mut near = 0.0f64;
        for _ in 0..100_000 {
            let c = [
                0.5 + 1e-3 * rng.unit(),
                0.5 + 1e-3 * rng.unit(),
                0.5 + 1e-3 * rng.unit(),
                0.5,
            ];
            let rot = Quat::from_array(c.map(|v| v as f32)).normalize();
            near = near.max(round_trip_error(rot));
        }
        assert!(near <= CFRAME_ROT_ERROR_BOUND_RAD, "{near}");
    }

    /// Every i16 code of every kept slot, for every index, with the other two codes zero:
    /// decode then encode gives the same index and codes whenever that is meaningful, i.e. the
    /// dropped component (rebuilt from the code) is strictly the largest. Beyond that point
    /// (|code| > 23169) the encoder correctly drops another component, and the decoded
    /// rotation still round-trips within the bound.
    #[test]
    fn every_code_round_trips() {
        for index in 0..4u8 {
            for slot in 0..3 {
                for code in i16::MIN..=i16::MAX {
                    let mut q = [0i16; 3];
                    q[slot] = code;
                    let rot = decompress_rotation(index, q);
                    assert!(rot.is_normalized(), "{index} {q:?}");
                    let (i2, q2) = compress_rotation(rot).unwrap();
                    if code.unsigned_abs() <= 23169 {
                        assert_eq!((i2, q2), (index, q));
                    } else {
                        let back = decompress_rotation(i2, q2);
                        assert!(
                            angle_between_rad(rot.as_dquat(), back.as_dquat())
                                <= CFRAME_ROT_ERROR_BOUND_RAD
                        );
                    }
                }
            }
        }
    }

    /// Codes that the encoder never produces (sum of squares above 1, -32768) still decode
    /// to a finite unit quaternion.
    #[test]
    fn any_codes_decode_to_a_rotation() {
        let extremes = [i16::MIN, -32767, -23170, -1, 0, 1, 23170, 32767];
        for index in 0..=255u8 {
            for &a in &extremes {
                for &b in &extremes {
                    for &c in &extremes {
                        let rot = decompress_rotation(index, [a, b, c]);
                        assert!(rot.is_finite() && rot.is_normalized());
                    }
                }
            }
        }
    }

    #[test]
    fn damaged_positions_pass_through_and_are_flagged() {
        let p = PackedCFrame {
            x: f32::NAN,
            y: 0.0,
            z_bits: 0,
            q: [0; 3],
        };
        assert!(!p.is_finite());
        let (pos, rot) = decompress_cframe(&p);
        assert!(pos.x.is_nan());
        assert!(rot.is_normalized());
        // A NaN Z whose payload sits only in the low bits masks to infinity: still flagged.
        let p = PackedCFrame {
            x: 0.0,
            y: 0.0,
            z_bits: 0x7F80_0001,
            q: [0; 3],
        };
        assert!(!p.is_finite());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn any_rotation() -> impl Strategy<Value = Quat> {
            (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
                .prop_filter("non-zero", |(x, y, z, w)| {
                    x * x + y * y + z * z + w * w > 1e-6
                })
                .prop_map(|(x, y, z, w)| Quat::from_xyzw(x, y, z, w))
        }

        proptest! {
            #[test]
            fn cframe_round_trip(
                x in prop::num::f32::NORMAL | prop::num::f32::ZERO,
                y in -1e6f32..1e6,
                z in prop::num::f32::ANY.prop_filter("finite", |v| v.is_finite()),
                rot in any_rotation(),
            ) {
                let packed = compress_cframe(Vec3::new(x, y, z), rot).unwrap();
                let (pos, back) = decompress_cframe(&packed);
                prop_assert_eq!(pos.x.to_bits(), x.to_bits());
                prop_assert_eq!(pos.y.to_bits(), y.to_bits());
                prop_assert!((pos.z - z).abs() <= z_index_error_bound(z));
                let err = angle_between_rad(unit_rotation(rot).unwrap(), back.as_dquat());
                prop_assert!(err <= CFRAME_ROT_ERROR_BOUND_RAD, "{}", err);
                prop_assert!(packed.q.iter().all(|c| c.unsigned_abs() <= 23170));
                // Re-encoding a decoded CFrame keeps its codes, unless the rounding made a
                // kept component overtake the dropped one (only near ties), in which case
                // it is still within the bound.
                let again = compress_cframe(pos, back).unwrap();
                if again.dropped_index() == packed.dropped_index() {
                    prop_assert_eq!(again.to_le_bytes(), packed.to_le_bytes());
                } else {
                    let (_, twice) = decompress_cframe(&again);
                    let e2 = angle_between_rad(back.as_dquat(), twice.as_dquat());
                    prop_assert!(e2 <= CFRAME_ROT_ERROR_BOUND_RAD);
                }
            }

            #[test]
            fn bytes_round_trip(bytes in prop::array::uniform18(any::<u8>())) {
                let p = PackedCFrame::from_le_bytes(&bytes);
                prop_assert_eq!(p.to_le_bytes(), bytes);
                let (_, rot) = decompress_cframe(&p);
                prop_assert!(rot.is_finite() && rot.is_normalized());
            }
        }
    }
}
