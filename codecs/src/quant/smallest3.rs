//! One smallest-three rotation codec, parameterised by what the formats differ in, with a
//! named preset per format.
//!
//! A unit quaternion (x, y, z, w) has at most one component above `1/√2` in magnitude and
//! `q` and `-q` are the same rotation, so it is stored as the index of its largest
//! component (0 = x ... 3 = w; the first in x, y, z, w order on an exact tie) and the other
//! three, in x, y, z, w order, after negating the quaternion when the largest is negative.
//! Each kept component lies in `[-1/√2, 1/√2]`. The reader rebuilds the dropped one as
//! `√max(0, 1 − Σ kept²)`.
//!
//! What differs between formats ([`Smallest3`]'s fields):
//!
//! - the scaling of a kept component `v`: [`Scaling::Symmetric`] stores
//!   `round(v × scale)` clamped to `±max_code` (SNAP: `scale = 32767`; CBTK:
//!   `scale = (2^(bits-1) − 1) / (1/√2)`); [`Scaling::Offset`] stores
//!   `round((v + 1/√2) / √2 × max_code)` clamped to `0..=max_code` (the world snapshot and the
//!   study, `max_code = 1023`). Halves round away from zero; NaN stores 0;
//! - how a symmetric code is turned back into a value ([`KeptDecode`]): SNAP divides by the
//!   scale, CBTK multiplies by the step `(1/√2) / (2^(bits-1) − 1)`; these differ in the last
//!   bit, and each format's decoded values are pinned by its golden tests;
//! - when the decoded quaternion is scaled back to unit length ([`Renormalise`]).
//!
//! What the formats share, and what this module adds: **a decoded rotation re-encodes to
//! its own index.** Rebuilding the dropped component from rounded kept ones can make it come
//! out smaller than a kept one: at an exact tie such as `(0, 0, 1/√2, 1/√2)` (index 2, the w
//! code at its end) the rebuilt z is a hair below the decoded w, and at `(½, ½, ½, ½)`
//! (index 0, every kept code for ½ rounded up) the rebuilt x is below the others by up to
//! three half-steps. An encoder fed that decoded rotation then drops another component, and
//! the next decode flips back. The decoder therefore never lets the rebuilt component be
//! smaller than `(1 + 2^-20)` times the largest kept magnitude ([`TIE_MARGIN`]); the margin
//! survives a round trip through `f32` (eight `f32` ulps) and changes the rotation by at most
//! a millionth of a radian beyond what the raise itself corrects, and only for codes where the
//! rebuilt component would otherwise lose its place. Encoders are unchanged, so no stored
//! byte changes; only decoded values of such codes do.
//!
//! What is guaranteed, and tested over every code of every width from 2 to 7 bits per
//! component (4 × 2^21 codes at 7 bits, both scalings with the formats' renormalisation
//! rules) and over a
//! seeded million codes per format preset plus every combination of edge codes:
//!
//! - a code whose rebuilt component is at least every kept magnitude (what an encoder makes
//!   from any rotation away from a tie) decodes and re-encodes to itself;
//! - a code within four half-steps of a tie keeps its index, each kept code moves by at most
//!   one, and the code it moves to is then a fixed point. (At `(½, ½, ½, ½)` in SNAP the only
//!   rotation with those codes is the exact tie itself, on a rounding boundary, so no decoder
//!   can hit it in floating point; the codes settle one step below.)
//!
//! SNAP's axis-angle pre-step and its `f32` output stay in [`crate::snap_quant`]; this module
//! takes and returns `f64` components.

use glam::DQuat;
use std::f64::consts::FRAC_1_SQRT_2;

/// How much larger than the largest kept magnitude the rebuilt component is made when
/// rounding would leave it smaller (see the module documentation): a relative `2^-20`.
pub const TIE_MARGIN: f64 = 1.0 / 1_048_576.0;

/// How a kept component is mapped to its integer code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scaling {
    /// `round(v × scale)` clamped to `±max_code`; codes are signed.
    Symmetric {
        /// Code units per unit of component value.
        scale: f64,
        /// Largest code magnitude stored.
        max_code: i32,
        /// How a code is turned back into a value.
        decode: KeptDecode,
    },
    /// `round((v + 1/√2) / √2 × max_code)` clamped to `0..=max_code`; codes are unsigned
    /// and `0`, `max_code` stand for `∓1/√2`. A code above `max_code` decodes as `max_code`.
    Offset {
        /// Largest code (`2^bits − 1`).
        max_code: i32,
    },
}

/// How a symmetric code is turned back into a component value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeptDecode {
    /// `code / scale` (SNAP v1.3 "Decompression").
    DivideByScale,
    /// `code × step`, `step` given (CBTK v1 "Rotation": `(1/√2) / (2^(bits-1) − 1)`).
    MultiplyBy(f64),
}

/// When the decoded quaternion is scaled to unit length (with glam's `normalize`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renormalise {
    /// Always (SNAP, the world snapshot).
    Always,
    /// Only when the kept squares sum past 1 or the tie rule raised the rebuilt component
    /// (CBTK).
    WhenOverOne,
    /// Never: the components are returned as rebuilt (the study's tables are computed on
    /// them).
    Never,
}

/// One smallest-three layout: bits per kept component and the rules above.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Smallest3 {
    /// Bits per kept component in the stored form (the index takes 2 more).
    pub bits: u8,
    /// Component scaling.
    pub scaling: Scaling,
    /// When the decoded quaternion is renormalised.
    pub renormalise: Renormalise,
}

/// SNAP v1.3 ("Compression"/"Decompression"): `i16` codes `round(v × 32767)`, decoded by
/// dividing by 32767, always renormalised. Kept codes reach `±23170` (`round(32767/√2)`).
pub const SNAP: Smallest3 = Smallest3 {
    bits: 16,
    scaling: Scaling::Symmetric {
        scale: 32767.0,
        max_code: 32767,
        decode: KeptDecode::DivideByScale,
    },
    renormalise: Renormalise::Always,
};

/// The world snapshot (2 + 3 × 10 bits): offset codes 0..=1023, always renormalised.
pub const WORLD_SNAPSHOT: Smallest3 = Smallest3 {
    bits: 10,
    scaling: Scaling::Offset { max_code: 1023 },
    renormalise: Renormalise::Always,
};

/// The keyframe-compression study's tracks: the world snapshot's 10-bit offset codes, never
/// renormalised (the study's error tables are computed on the rebuilt components).
pub const STUDY: Smallest3 = Smallest3 {
    bits: 10,
    scaling: Scaling::Offset { max_code: 1023 },
    renormalise: Renormalise::Never,
};

/// CBTK v1 ("Rotation") at `bits` per component (8..=16; other values are clamped to
/// 2..=16): signed codes `round(v × m / (1/√2))` with `m = 2^(bits-1) − 1`, decoded as
/// `code × (1/√2) / m`, renormalised only when the kept squares sum past 1.
pub fn cbtk(bits: u8) -> Smallest3 {
    symmetric_over_root_half(bits.clamp(2, 16), Renormalise::WhenOverOne)
}

/// A symmetric layout whose end code `2^(bits-1) − 1` stands for `1/√2` (CBTK's scaling at
/// any width), with the given renormalisation.
pub fn symmetric_over_root_half(bits: u8, renormalise: Renormalise) -> Smallest3 {
    let m = (1i32 << (bits - 1)) - 1;
    Smallest3 {
        bits,
        scaling: Scaling::Symmetric {
            scale: m as f64 / FRAC_1_SQRT_2,
            max_code: m,
            decode: KeptDecode::MultiplyBy(FRAC_1_SQRT_2 / m as f64),
        },
        renormalise,
    }
}

/// An offset layout at `bits` per component (codes `0..=2^bits − 1`).
pub fn offset(bits: u8, renormalise: Renormalise) -> Smallest3 {
    Smallest3 {
        bits,
        scaling: Scaling::Offset {
            max_code: (1i32 << bits) - 1,
        },
        renormalise,
    }
}

/// The index of the component of largest magnitude, the first in x, y, z, w order on an
/// exact tie (NaN never wins a comparison).
#[inline(always)]
fn largest_index(c: &[f64; 4]) -> usize {
    let mut drop = 0;
    for i in 1..4 {
        if c[i].abs() > c[drop].abs() {
            drop = i;
        }
    }
    drop
}

impl Smallest3 {
    /// The code range of one kept component: `(lowest, highest)`.
    pub fn code_range(&self) -> (i32, i32) {
        match self.scaling {
            Scaling::Symmetric { max_code, .. } => (-max_code, max_code),
            Scaling::Offset { max_code } => (0, max_code),
        }
    }

    /// The code of one kept component `v` (already sign-folded).
    #[inline(always)]
    pub fn code(&self, v: f64) -> i32 {
        match self.scaling {
            Scaling::Symmetric {
                scale, max_code, ..
            } => crate::quant::quantize_scaled(v, scale, f64::from(max_code)) as i32,
            Scaling::Offset { max_code } => {
                let m = f64::from(max_code);
                let t = (v + FRAC_1_SQRT_2) / (2.0 * FRAC_1_SQRT_2) * m;
                crate::quant::round_clamped(t, 0.0, m) as i32
            }
        }
    }

    /// The component value of one kept code (offset codes above the range read as its end).
    #[inline(always)]
    pub fn value(&self, code: i32) -> f64 {
        match self.scaling {
            Scaling::Symmetric { scale, decode, .. } => match decode {
                KeptDecode::DivideByScale => f64::from(code) / scale,
                KeptDecode::MultiplyBy(step) => f64::from(code) * step,
            },
            Scaling::Offset { max_code } => {
                f64::from(code.clamp(0, max_code)) / f64::from(max_code) * (2.0 * FRAC_1_SQRT_2)
                    - FRAC_1_SQRT_2
            }
        }
    }

    /// Encodes the components `c = [x, y, z, w]` of a unit quaternion (each format
    /// normalises its input its own way first): the dropped index (0..=3) and the three kept
    /// codes in x, y, z, w order. The largest magnitude is dropped, the first on an exact
    /// tie; when it is negative every kept component is negated. NaN components code as 0.
    #[inline]
    pub fn encode(&self, c: [f64; 4]) -> (u8, [i32; 3]) {
        let drop = largest_index(&c);
        let sign = if c[drop] < 0.0 { -1.0 } else { 1.0 };
        let mut out = [0i32; 3];
        let mut k = 0;
        for (i, &v) in c.iter().enumerate() {
            if i != drop {
                out[k] = self.code(v * sign);
                k += 1;
            }
        }
        (drop as u8, out)
    }

    /// Decodes a dropped index (only its two low bits are used) and three kept codes to the
    /// components `[x, y, z, w]`: kept values rebuilt, the dropped one
    /// `√max(0, 1 − Σ kept²)` raised to `(1 + TIE_MARGIN) ×` the largest kept magnitude when
    /// it is below that, then renormalised per [`Smallest3::renormalise`]. Any codes give
    /// finite components; out-of-range codes (a damaged file) are accepted.
    #[inline]
    pub fn decode(&self, dropped: u8, codes: [i32; 3]) -> [f64; 4] {
        let kept = codes.map(|c| self.value(c));
        let ss = kept[0] * kept[0] + kept[1] * kept[1] + kept[2] * kept[2];
        let mut d = (1.0 - ss).max(0.0).sqrt();
        let largest_kept = kept[0].abs().max(kept[1].abs()).max(kept[2].abs());
        let floor = largest_kept * (1.0 + TIE_MARGIN);
        let raised = d < floor;
        if raised {
            d = floor;
        }
        let drop = usize::from(dropped & 3);
        let mut c = [0.0; 4];
        let mut k = 0;
        for (i, slot) in c.iter_mut().enumerate() {
            if i == drop {
                *slot = d;
            } else {
                *slot = kept[k];
                k += 1;
            }
        }
        let renorm = match self.renormalise {
            Renormalise::Always => true,
            Renormalise::WhenOverOne => ss > 1.0 || raised,
            Renormalise::Never => false,
        };
        if renorm {
            let q = DQuat::from_xyzw(c[0], c[1], c[2], c[3]).normalize();
            [q.x, q.y, q.z, q.w]
        } else {
            c
        }
    }

    /// [`Smallest3::decode`] as a glam quaternion.
    #[inline]
    pub fn decode_quat(&self, dropped: u8, codes: [i32; 3]) -> DQuat {
        let c = self.decode(dropped, codes);
        DQuat::from_xyzw(c[0], c[1], c[2], c[3])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::angle_between_rad;

    /// Normalises as the world snapshot's encoder does (divide by the length).
    fn unit(c: [f64; 4]) -> [f64; 4] {
        let l = (c[0] * c[0] + c[1] * c[1] + c[2] * c[2] + c[3] * c[3]).sqrt();
        [c[0] / l, c[1] / l, c[2] / l, c[3] / l]
    }

    /// How a code's decoded rotation relates to its index.
    #[derive(Debug, PartialEq)]
    enum Kind {
        /// The rebuilt component is at least every kept magnitude: the cell centre is a
        /// smallest-three point of this index (every code an encoder makes from a rotation
        /// away from a tie).
        Centred,
        /// The rebuilt component falls short of a kept one by at most four half-steps (the
        /// rounding of three kept components): a rotation at or next to a tie.
        NearTie,
        /// Anything else (kept squares past 1, or a kept component far above the rebuilt one):
        /// no rotation encodes to it with codes at the centre.
        Other,
    }

    fn kind(p: &Smallest3, codes: [i32; 3]) -> Kind {
        let kept = codes.map(|c| p.value(c));
        let ss: f64 = kept.iter().map(|v| v * v).sum();
        let (lo, hi) = p.code_range();
        let half_step = (p.value(hi) - p.value(lo)) / f64::from(hi - lo) / 2.0;
        let d = (1.0 - ss).max(0.0).sqrt();
        let m = kept.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        if ss > 1.0 {
            Kind::Other
        } else if d >= m {
            Kind::Centred
        } else if d + 4.0 * half_step >= m {
            Kind::NearTie
        } else {
            Kind::Other
        }
    }

    /// The checks of one code; returns false on a failure. Centred codes decode and
    /// re-encode to themselves. Near-tie codes keep their index, move each kept code by at
    /// most one, and what they re-encode to is then a fixed point. Every code decodes to
    /// finite components.
    fn check(p: &Smallest3, dropped: u8, codes: [i32; 3]) -> bool {
        let c = p.decode(dropped, codes);
        if !c.iter().all(|v| v.is_finite()) {
            return false;
        }
        let (d2, c2) = p.encode(unit(c));
        match kind(p, codes) {
            Kind::Centred => (d2, c2) == (dropped, codes),
            Kind::NearTie => {
                d2 == dropped
                    && (0..3).all(|k| (c2[k] - codes[k]).abs() <= 1)
                    && p.encode(unit(p.decode(d2, c2))) == (d2, c2)
            }
            Kind::Other => true,
        }
    }

    /// The small-width layouts: CBTK's symmetric scaling with its renormalisation rule, and
    /// the offset scaling renormalised (world snapshot) and not (study).
    fn presets_small() -> Vec<Smallest3> {
        let mut v = Vec::new();
        for bits in 2..=7u8 {
            v.push(symmetric_over_root_half(bits, Renormalise::WhenOverOne));
            v.push(offset(bits, Renormalise::Always));
            v.push(offset(bits, Renormalise::Never));
        }
        v
    }

    /// Every code of every width from 2 to 7 bits per component (4 × 2^21 codes at 7 bits),
    /// for both scalings and the renormalisation rules the formats use with them.
    #[test]
    fn every_code_of_small_widths_round_trips() {
        for p in presets_small() {
            let (lo, hi) = p.code_range();
            let mut fails = Vec::new();
            for dropped in 0..4u8 {
                for a in lo..=hi {
                    for b in lo..=hi {
                        for c in lo..=hi {
                            if !check(&p, dropped, [a, b, c]) && fails.len() < 5 {
                                fails.push((dropped, [a, b, c]));
                            }
                        }
                    }
                }
            }
            assert!(fails.is_empty(), "{p:?}: {fails:?}");
        }
    }

    /// A small deterministic generator (64-bit LCG, top bits).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            self.0 >> 11
        }
        fn range(&mut self, lo: i32, hi: i32) -> i32 {
            lo + (self.next() % (hi - lo + 1) as u64) as i32
        }
    }

    fn wide_presets() -> Vec<(&'static str, Smallest3)> {
        let mut v = vec![
            ("snap", SNAP),
            ("world snapshot", WORLD_SNAPSHOT),
            ("study", STUDY),
        ];
        for bits in 8..=16u8 {
            v.push(("cbtk", cbtk(bits)));
        }
        v
    }

    /// Edge codes of a preset: the ends, one inside them, zero or the middle, the codes
    /// nearest ±1/√2 × ½ (the three-way tie region).
    fn edge_codes(p: &Smallest3) -> Vec<i32> {
        let (lo, hi) = p.code_range();
        let mut e = vec![lo, lo + 1, hi - 1, hi, (lo + hi) / 2, (lo + hi) / 2 + 1];
        for v in [0.5f64, -0.5, FRAC_1_SQRT_2, -FRAC_1_SQRT_2] {
            let c = p.code(v);
            e.extend([c - 1, c, c + 1]);
        }
        if let Scaling::Symmetric { scale, .. } = p.scaling {
            // SNAP's producible end: round(scale / √2).
            let c = (FRAC_1_SQRT_2 * scale).round() as i32;
            e.extend([c - 1, c, c + 1, -c - 1, -c, -c + 1]);
        }
        e.retain(|c| (lo..=hi).contains(c));
        e.sort_unstable();
        e.dedup();
        e
    }

    /// A seeded sample of codes per preset (a million for each of the world snapshot, the
    /// study and SNAP; 2^17 per CBTK width) plus every combination of edge codes at every
    /// index.
    #[test]
    fn sampled_and_edge_codes_of_format_presets_round_trip() {
        let mut rng = Lcg(0x5eed_0001);
        for (name, p) in wide_presets() {
            let (lo, hi) = p.code_range();
            let n = if name == "cbtk" { 1 << 17 } else { 1 << 20 };
            let mut fails = Vec::new();
            for _ in 0..n {
                let dropped = (rng.next() & 3) as u8;
                let codes = [rng.range(lo, hi), rng.range(lo, hi), rng.range(lo, hi)];
                if !check(&p, dropped, codes) && fails.len() < 5 {
                    fails.push((dropped, codes));
                }
            }
            let e = edge_codes(&p);
            for dropped in 0..4u8 {
                for &a in &e {
                    for &b in &e {
                        for &c in &e {
                            if !check(&p, dropped, [a, b, c]) && fails.len() < 5 {
                                fails.push((dropped, [a, b, c]));
                            }
                        }
                    }
                }
            }
            assert!(fails.is_empty(), "{name} {}: {fails:?}", p.bits);
        }
    }

    /// The exact ties of the issue: (0, 0, 1/√2, 1/√2) and (½, ½, ½, ½) keep their index
    /// and codes through any number of decode → encode steps, for every preset.
    #[test]
    fn exact_ties_are_stable() {
        let s = FRAC_1_SQRT_2;
        let ties = [
            [0.0, 0.0, s, s],
            [s, 0.0, 0.0, s],
            [0.0, -s, s, 0.0],
            [0.5, 0.5, 0.5, 0.5],
            [-0.5, 0.5, -0.5, 0.5],
        ];
        for (_, p) in wide_presets() {
            for t in ties {
                let first = p.encode(t);
                let second = p.encode(unit(p.decode(first.0, first.1)));
                // The index never flips; the codes settle after at most one step.
                assert_eq!(second.0, first.0, "{p:?} {t:?}");
                let mut cur = second;
                for _ in 0..4 {
                    cur = p.encode(unit(p.decode(cur.0, cur.1)));
                    assert_eq!(cur, second, "{p:?} {t:?}");
                }
            }
        }
        // At (0, 0, 1/√2, 1/√2) nothing moves at all.
        for (_, p) in wide_presets() {
            let first = p.encode([0.0, 0.0, s, s]);
            assert_eq!(p.encode(unit(p.decode(first.0, first.1))), first, "{p:?}");
        }
        // The world snapshot's example: index 2, x and y at the middle, w at the end.
        assert_eq!(
            WORLD_SNAPSHOT.encode([0.0, 0.0, s, s]),
            (2, [512, 512, 1023])
        );
    }

    /// The bounds at their edges: ±1/√2 codes to the ends, ±0 to the middle, NaN to 0,
    /// beyond-range values clamp, and decoded rotations are within half a step per component.
    #[test]
    fn bounds_at_their_edges() {
        let s = FRAC_1_SQRT_2;
        assert_eq!(WORLD_SNAPSHOT.code(s), 1023);
        assert_eq!(WORLD_SNAPSHOT.code(-s), 0);
        assert_eq!(WORLD_SNAPSHOT.code(0.0), 512);
        assert_eq!(WORLD_SNAPSHOT.code(-0.0), 512);
        assert_eq!(WORLD_SNAPSHOT.code(f64::NAN), 0);
        assert_eq!(WORLD_SNAPSHOT.code(2.0), 1023);
        assert_eq!(WORLD_SNAPSHOT.code(f64::NEG_INFINITY), 0);
        assert_eq!(SNAP.code(s), 23170);
        assert_eq!(SNAP.code(-s), -23170);
        assert_eq!(SNAP.code(1.5), 32767);
        assert_eq!(SNAP.code(f64::NAN), 0);
        for bits in 8..=16u8 {
            let p = cbtk(bits);
            let m = (1 << (bits - 1)) - 1;
            assert_eq!(p.code(s), m);
            assert_eq!(p.code(-s), -m);
            assert_eq!(p.code(-0.0), 0);
            assert_eq!(p.code(f64::INFINITY), m);
        }
        // Out-of-range offset codes read as the end; index bits above 2 are ignored.
        assert_eq!(
            WORLD_SNAPSHOT.decode(7, [2000, 512, 512]),
            WORLD_SNAPSHOT.decode(3, [1023, 512, 512])
        );
        // Damaged symmetric codes (squares past 1) still give a unit rotation.
        let q = SNAP.decode_quat(0, [32767, -32767, 32767]);
        assert!(q.is_finite() && q.is_normalized());
    }

    /// Random rotations stay within each preset's half-step error after a round trip.
    #[test]
    fn random_rotations_within_the_bound() {
        let mut rng = Lcg(77);
        for (_, p) in wide_presets() {
            let (lo, hi) = p.code_range();
            let h = (p.value(hi) - p.value(lo)) / f64::from(hi - lo) / 2.0;
            // Each kept component off by h; the rebuilt one by up to 3h/d with d >= 1/2.
            let bound = 2.0 * (3.0 * h * h + 36.0 * h * h).sqrt();
            for _ in 0..20_000 {
                let c = [0, 1, 2, 3].map(|_| (rng.next() as f64 / (1u64 << 53) as f64) * 2.0 - 1.0);
                let l2: f64 = c.iter().map(|v| v * v).sum();
                if l2 < 0.01 {
                    continue;
                }
                let u = unit(c);
                let (d, k) = p.encode(u);
                let back = p.decode_quat(d, k).normalize();
                let q = DQuat::from_xyzw(u[0], u[1], u[2], u[3]);
                assert!(angle_between_rad(q, back) <= bound, "{p:?} {u:?}");
            }
        }
    }
}
