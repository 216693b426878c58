//! One IEEE 754 binary16 ("half float") codec; its rounding and its rule for values
//! outside the finite range are parameters, so each format keeps its bytes.
//!
//! binary16 has 1 sign bit, 5 exponent bits (bias 15) and 10 mantissa bits: finite values
//! up to ±65504, subnormals down to 2^-24, ±0, ±infinity and NaN.
//!
//! | preset | rounding | non-finite and beyond ±65504 on encode | infinity / NaN on decode |
//! |---|---|---|---|
//! | [`STUDY`] (study tracks) | to nearest, ties to even | refused with an error | kept |
//! | [`ANIM_CLIP`] (animation clips) | to nearest, ties away from zero | saturate to ±65504 (NaN too, with its sign bit) | ±65504 and 0 |
//!
//! Values below half the smallest subnormal (`2^-25`) encode as zero with the input's sign;
//! exactly `2^-25` is a tie between 0 and the smallest subnormal.

use std::fmt;

/// How a value between two binary16 numbers is rounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// To the nearest; a tie goes to the even mantissa (IEEE 754's default).
    TiesToEven,
    /// To the nearest; a tie goes away from zero.
    TiesAway,
}

/// What happens to values binary16 cannot hold as finite numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Encoding NaN, an infinity or a magnitude above 65504 is an error; decoding gives
    /// infinities and NaN as stored.
    Refuse,
    /// Encoding clamps the magnitude to 65504 (NaN becomes 65504 with NaN's sign bit);
    /// decoding maps infinities to ±65504 and NaN to 0, so decoded values stay finite.
    Saturate,
}

/// A binary16 codec: a rounding and an overflow rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Binary16 {
    /// Rounding of values between two binary16 numbers.
    pub rounding: Rounding,
    /// Rule for values outside the finite range.
    pub overflow: Overflow,
}

/// The study tracks' binary16: ties to even, out-of-range values refused.
pub const STUDY: Binary16 = Binary16 {
    rounding: Rounding::TiesToEven,
    overflow: Overflow::Refuse,
};

/// The animation clips' binary16: ties away from zero, saturating.
pub const ANIM_CLIP: Binary16 = Binary16 {
    rounding: Rounding::TiesAway,
    overflow: Overflow::Saturate,
};

/// The largest finite binary16 magnitude.
pub const MAX: f64 = 65504.0;

/// A value binary16 cannot hold under [`Overflow::Refuse`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutOfRange(pub f64);

impl fmt::Display for OutOfRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is outside the binary16 range (|v| <= 65504)", self.0)
    }
}

impl std::error::Error for OutOfRange {}

impl Binary16 {
    /// The binary16 bits of `v`. Errors: [`OutOfRange`] under [`Overflow::Refuse`] for NaN,
    /// infinities and magnitudes above 65504 (never under [`Overflow::Saturate`]).
    pub fn encode(&self, v: f64) -> Result<u16, OutOfRange> {
        let sign: u16 = if v.is_sign_negative() { 0x8000 } else { 0 };
        let a = match self.overflow {
            Overflow::Refuse => {
                if !v.is_finite() || v.abs() > MAX {
                    return Err(OutOfRange(v));
                }
                v.abs()
            }
            // `min` returns the number when the other operand is NaN.
            Overflow::Saturate => v.abs().min(MAX),
        };
        if a < 2f64.powi(-25) {
            return Ok(sign);
        }
        // Exponent of the leading bit; subnormals use the fixed exponent -14.
        let mut e = (a.log2().floor() as i32).max(-14);
        let mant = a / 2f64.powi(e - 10); // in [1024, 2048) for normals
        let mut m = match self.rounding {
            Rounding::TiesToEven => mant.round_ties_even(),
            Rounding::TiesAway => mant.round(),
        } as u32;
        if m >= 2048 {
            m /= 2;
            e += 1;
        }
        if m < 1024 {
            // Subnormal: exponent field 0.
            return Ok(sign | m as u16);
        }
        if e > 15 {
            return match self.overflow {
                Overflow::Refuse => Err(OutOfRange(v)),
                Overflow::Saturate => Ok(sign | 0x7bff),
            };
        }
        Ok(sign | (((e + 15) as u16) << 10) | ((m - 1024) as u16))
    }

    /// The value of binary16 bits (exact in `f64` and in `f32`); infinities and NaN per the
    /// overflow rule.
    pub fn decode(&self, bits: u16) -> f64 {
        let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
        let e = i32::from((bits >> 10) & 0x1f);
        let m = f64::from(bits & 0x3ff);
        match (e, self.overflow) {
            (0, _) => sign * m * 2f64.powi(-24),
            (31, Overflow::Refuse) if m == 0.0 => sign * f64::INFINITY,
            (31, Overflow::Refuse) => f64::NAN,
            (31, Overflow::Saturate) if m == 0.0 => sign * MAX,
            (31, Overflow::Saturate) => 0.0,
            _ => sign * (1024.0 + m) * 2f64.powi(e - 25),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every finite bit pattern decodes and re-encodes to itself under both presets.
    #[test]
    fn every_finite_code_round_trips() {
        for p in [STUDY, ANIM_CLIP] {
            for bits in 0..=u16::MAX {
                if (bits >> 10) & 0x1f == 31 {
                    continue;
                }
                let v = p.decode(bits);
                assert_eq!(p.encode(v), Ok(bits), "{p:?} {bits:#06x}");
                assert_eq!(f64::from(v as f32), v);
            }
        }
    }

    /// Every midpoint between neighbouring finite values (exact in f64) rounds per the rule,
    /// and values a hair either side go to the nearer neighbour.
    #[test]
    fn every_tie_follows_its_rule() {
        for p in [STUDY, ANIM_CLIP] {
            for bits in 0..0x7bffu16 {
                let (lo, hi) = (p.decode(bits), p.decode(bits + 1));
                let mid = (lo + hi) / 2.0;
                let want = match p.rounding {
                    Rounding::TiesToEven if bits % 2 == 0 => bits,
                    Rounding::TiesToEven => bits + 1,
                    Rounding::TiesAway => bits + 1,
                };
                assert_eq!(p.encode(mid), Ok(want), "{p:?} {bits:#06x}");
                assert_eq!(p.encode(-mid), Ok(want | 0x8000));
                let below = f64::from_bits(mid.to_bits() - 1);
                let above = f64::from_bits(mid.to_bits() + 1);
                assert_eq!(p.encode(below), Ok(bits));
                assert_eq!(p.encode(above), Ok(bits + 1));
            }
        }
    }

    #[test]
    fn zeros_and_the_smallest_subnormal() {
        for p in [STUDY, ANIM_CLIP] {
            assert_eq!(p.encode(0.0), Ok(0));
            assert_eq!(p.encode(-0.0), Ok(0x8000));
            assert_eq!(p.encode(2f64.powi(-26)), Ok(0));
            assert_eq!(p.encode(-2f64.powi(-26)), Ok(0x8000));
            assert_eq!(p.encode(2f64.powi(-24)), Ok(1));
        }
        // Exactly 2^-25 is the tie between 0 and 2^-24.
        assert_eq!(STUDY.encode(2f64.powi(-25)), Ok(0));
        assert_eq!(ANIM_CLIP.encode(2f64.powi(-25)), Ok(1));
    }

    #[test]
    fn overflow_rules() {
        assert_eq!(STUDY.encode(65504.0), Ok(0x7bff));
        assert_eq!(STUDY.encode(65504.5), Err(OutOfRange(65504.5)));
        assert!(STUDY.encode(f64::NAN).is_err());
        assert!(STUDY.encode(f64::NEG_INFINITY).is_err());
        assert_eq!(ANIM_CLIP.encode(1e9), Ok(0x7bff));
        assert_eq!(ANIM_CLIP.encode(f64::NEG_INFINITY), Ok(0xfbff));
        assert_eq!(ANIM_CLIP.encode(f64::NAN), Ok(0x7bff));
        assert_eq!(ANIM_CLIP.encode(-f64::NAN), Ok(0xfbff));
        assert_eq!(STUDY.decode(0x7c00), f64::INFINITY);
        assert_eq!(STUDY.decode(0xfc00), f64::NEG_INFINITY);
        assert!(STUDY.decode(0x7e00).is_nan());
        assert_eq!(ANIM_CLIP.decode(0xfc00), -65504.0);
        assert_eq!(ANIM_CLIP.decode(0x7e00), 0.0);
        assert_eq!(
            STUDY.encode(65504.5).unwrap_err().to_string(),
            "65504.5 is outside the binary16 range (|v| <= 65504)"
        );
    }
}
