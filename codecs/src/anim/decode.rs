//! The pose decoder: every animated track unpacked once into flat key arrays, sampled at any
//! time without allocating.
//!
//! Layout of the working copy (built by [`Decoder::new`]):
//!
//! - a **rest pose** holding every default and constant track, copied into the output in one
//!   block at each sample; default and constant tracks are never looked at again;
//! - the animated tracks, **grouped by what they produce** (rotations with three stored
//!   components, rotations with four, translations, scales), so that each group is one loop
//!   without a branch on the track's kind;
//! - for all animated tracks together, one array of key frames (`f32`) and one of key values
//!   (`[f32; 4]`, the unused lane 0), each track a contiguous run;
//! - per track a **segment table** over frame buckets of `2^shift` frames (at most two buckets
//!   per key): the segment holding each bucket's first frame. Keys sit on whole frames, so the
//!   bucket of a time is exact integer arithmetic; the decoder then advances at most `steps`
//!   keys (the most keys any bucket holds, found when the table is built) with a conditional
//!   add, not a branch. A track with as many buckets as frames needs no step at all.
//!
//! Cubic segments take their tangents from the neighbouring keys at sample time (non-uniform
//! Catmull-Rom, the same as the encoder), so a key costs 24 bytes of working memory whatever
//! the reconstruction: 4 (frame) + 16 (values) + at most 4 (two table entries).

use glam::{Quat, Vec3};

use super::{EncodedClip, Interp, Track};
use crate::motion::LocalTransform;

/// A local transform in `f32`, as the decoder produces it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose32 {
    /// Translation, metres.
    pub translation: Vec3,
    /// Rotation (unit).
    pub rotation: Quat,
    /// Scale.
    pub scale: Vec3,
}

impl Pose32 {
    /// The rest transform: zero translation, identity rotation, unit scale.
    pub const IDENTITY: Pose32 = Pose32 {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    /// As the `f64` transform of the motion model.
    pub fn to_local(self) -> LocalTransform {
        LocalTransform {
            translation: self.translation.as_dvec3(),
            rotation: self.rotation.as_dquat(),
            scale: self.scale.as_dvec3(),
        }
    }
}

/// One animated track of the working copy.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Head {
    /// Bone written.
    bone: u32,
    /// First key in [`Decoder::frames`] and [`Decoder::values`].
    key0: u32,
    /// Key count (≥ 2).
    keys: u32,
    /// First entry in [`Decoder::lut`].
    lut0: u32,
    /// Last bucket index.
    last_bucket: u32,
    /// Frames per bucket, as a power of two.
    shift: u32,
    /// Conditional key steps after the table lookup.
    steps: u32,
}

/// What a group of animated tracks writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Out {
    /// Rotation from x, y, z (`w = √(1 − x² − y² − z²)`).
    Rot3,
    /// Rotation from x, y, z, w (renormalised).
    Rot4,
    /// Translation x, y, z.
    Translation,
    /// Scale x, y, z.
    Scale,
}

/// Tracks evaluated before their outputs are finished together.
const CHUNK: usize = 8;

const GROUPS: [Out; 4] = [Out::Rot3, Out::Rot4, Out::Translation, Out::Scale];

/// A decoder: every track unpacked into flat key arrays (the layout is described at the top
/// of `codecs/src/anim/decode.rs`), sampled at any time.
///
/// [`Decoder::sample`] reaches each track's segment through its bucket table in constant
/// time; [`Decoder::sample_cursor`] starts from the segment of the previous call, for
/// sequential playback. Neither allocates.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoder {
    sample_rate: f32,
    last_frame: f32,
    cubic: bool,
    rest: Vec<Pose32>,
    heads: Vec<Head>,
    /// `heads[group[g]..group[g + 1]]` write [`GROUPS`]`[g]`.
    group: [usize; 5],
    frames: Vec<f32>,
    values: Vec<[f32; 4]>,
    lut: Vec<u16>,
}

/// Per-track positions for sequential sampling with [`Decoder::sample_cursor`]: the segment
/// each animated track used last.
#[derive(Debug, Clone, Default)]
pub struct Cursor {
    at: Vec<u32>,
}

fn fixed_rotation(v: &[f32]) -> Quat {
    let q = match *v {
        [x, y, z] => Quat::from_xyzw(x, y, z, (1.0 - (x * x + y * y + z * z)).max(0.0).sqrt()),
        [x, y, z, w] => Quat::from_xyzw(x, y, z, w),
        _ => Quat::IDENTITY,
    };
    let l2 = q.length_squared();
    if l2 > 0.0 && l2.is_finite() {
        q / l2.sqrt()
    } else {
        Quat::IDENTITY
    }
}

fn fixed_vec(v: &[f32], default: Vec3) -> Vec3 {
    match *v {
        [x, y, z, ..] => Vec3::new(x, y, z),
        _ => default,
    }
}

impl Decoder {
    /// Unpacks every track of `clip`.
    pub fn new(clip: &EncodedClip) -> Self {
        let nb = clip.bones.len();
        let mut rest = vec![Pose32::IDENTITY; nb];
        let mut pending: [Vec<(usize, &super::AnimatedTrack)>; 4] = Default::default();
        for (b, bt) in clip.bones.iter().enumerate() {
            match &bt.rotation {
                Track::Default => {}
                Track::Constant(v) => rest[b].rotation = fixed_rotation(v),
                Track::Animated(a) => pending[if a.comps == 3 { 0 } else { 1 }].push((b, a)),
            }
            match &bt.translation {
                Track::Default => {}
                Track::Constant(v) => rest[b].translation = fixed_vec(v, Vec3::ZERO),
                Track::Animated(a) => pending[2].push((b, a)),
            }
            match &bt.scale {
                Track::Default => {}
                Track::Constant(v) => rest[b].scale = fixed_vec(v, Vec3::ONE),
                Track::Animated(a) => pending[3].push((b, a)),
            }
        }
        let total_keys: usize = pending.iter().flatten().map(|(_, a)| a.frames.len()).sum();
        let mut frames = Vec::with_capacity(total_keys);
        let mut values = Vec::with_capacity(total_keys);
        let mut lut = Vec::with_capacity(2 * total_keys);
        let mut heads = Vec::with_capacity(pending.iter().map(Vec::len).sum());
        let mut group = [0usize; 5];
        for (g, list) in pending.iter().enumerate() {
            for &(b, a) in list {
                let n = a.frames.len();
                let key0 = frames.len();
                frames.extend(a.frames.iter().map(|&f| f32::from(f)));
                for k in 0..n {
                    let mut v = [0.0f32; 4];
                    for (c, slot) in v.iter_mut().enumerate().take(a.comps.min(4)) {
                        *slot = a.value(k, c);
                    }
                    values.push(v);
                }
                // Buckets of 2^shift frames, at most two per key.
                let last = u32::from(a.frames[n - 1]);
                let mut shift = 0u32;
                while ((last >> shift) as usize + 1) > 2 * n {
                    shift += 1;
                }
                let buckets = (last >> shift) as usize + 1;
                let lut0 = lut.len();
                let mut i = 0usize;
                let mut steps = 0u32;
                for bkt in 0..buckets {
                    let start = (bkt as u32) << shift;
                    while i + 2 < n && u32::from(a.frames[i + 1]) <= start {
                        i += 1;
                    }
                    lut.push(i as u16);
                    // Keys after `start` inside the bucket (frames start + 1 ..= end).
                    let end = start.saturating_add((1u32 << shift) - 1).min(last);
                    let inside = a.frames[i + 1..n - 1]
                        .iter()
                        .take_while(|&&f| u32::from(f) <= end)
                        .count() as u32;
                    steps = steps.max(inside);
                }
                heads.push(Head {
                    bone: b as u32,
                    key0: key0 as u32,
                    keys: n as u32,
                    lut0: lut0 as u32,
                    last_bucket: (buckets - 1) as u32,
                    shift,
                    steps,
                });
            }
            group[g + 1] = heads.len();
        }
        Self {
            sample_rate: clip.sample_rate,
            last_frame: f32::from(clip.num_frames.saturating_sub(1)),
            cubic: clip.interp == Interp::Cubic,
            rest,
            heads,
            group,
            frames,
            values,
            lut,
        }
    }

    /// Number of bones.
    pub fn num_bones(&self) -> usize {
        self.rest.len()
    }

    /// The pose of the default and constant tracks (animated tracks at their rest value).
    pub fn rest_pose(&self) -> &[Pose32] {
        &self.rest
    }

    /// A cursor for [`Decoder::sample_cursor`], at the start.
    pub fn cursor(&self) -> Cursor {
        Cursor {
            at: vec![0; self.heads.len()],
        }
    }

    fn frame_of(&self, t_s: f32) -> f32 {
        let x = t_s * self.sample_rate;
        if x.is_nan() {
            0.0
        } else {
            x.clamp(0.0, self.last_frame)
        }
    }

    /// The segment of `h` holding frame `x` (`f` = ⌊x⌋), through the bucket table.
    #[inline(always)]
    fn find(&self, h: &Head, x: f32, f: u32) -> usize {
        let t = &self.frames[h.key0 as usize..(h.key0 + h.keys) as usize];
        let b = (f >> h.shift).min(h.last_bucket);
        let mut i = usize::from(self.lut[(h.lut0 + b) as usize]);
        let last_seg = t.len() - 2;
        for _ in 0..h.steps {
            i = (i + usize::from(t[i + 1] <= x)).min(last_seg);
        }
        i
    }

    /// The segment of `h` holding frame `x`, starting from `at` (the previous segment).
    #[inline(always)]
    fn follow(&self, h: &Head, x: f32, f: u32, at: u32) -> usize {
        let t = &self.frames[h.key0 as usize..(h.key0 + h.keys) as usize];
        let mut i = at as usize;
        if i + 1 >= t.len() || t[i] > x {
            return self.find(h, x, f);
        }
        while i + 2 < t.len() && t[i + 1] <= x {
            i += 1;
        }
        i
    }

    /// Value of `h`'s segment `i` at frame `x`.
    #[inline(always)]
    fn eval<const CUBIC: bool>(&self, h: &Head, i: usize, x: f32) -> [f32; 4] {
        let k0 = h.key0 as usize;
        let n = h.keys as usize;
        let t = &self.frames[k0..k0 + n];
        let v = &self.values[k0..k0 + n];
        let (t0, t1) = (t[i], t[i + 1]);
        let (p0, p1) = (v[i], v[i + 1]);
        let hh = t1 - t0;
        let mut o = [0.0f32; 4];
        if !CUBIC {
            let u = ((x - t0) / hh).clamp(0.0, 1.0);
            for c in 0..4 {
                o[c] = p0[c] + (p1[c] - p0[c]) * u;
            }
            return o;
        }
        // Catmull-Rom tangents from the neighbours (one-sided at the ends), scaled to the
        // segment: m = (v[b] − v[a]) × h / (t[b] − t[a]). One division for the three ratios.
        let a0 = i.saturating_sub(1);
        let b0 = i + 1;
        let a1 = i;
        let b1 = (i + 2).min(n - 1);
        let d0 = t[b0] - t[a0];
        let d1 = t[b1] - t[a1];
        let inv = 1.0 / (hh * d0 * d1);
        let u = ((x - t0) * (d0 * d1 * inv)).clamp(0.0, 1.0);
        let s0 = hh * hh * d1 * inv;
        let s1 = hh * hh * d0 * inv;
        let (va, vb, wa, wb) = (v[a0], v[b0], v[a1], v[b1]);
        for c in 0..4 {
            let m0 = (vb[c] - va[c]) * s0;
            let m1 = (wb[c] - wa[c]) * s1;
            let c2 = 3.0 * (p1[c] - p0[c]) - 2.0 * m0 - m1;
            let c3 = 2.0 * (p0[c] - p1[c]) + m0 + m1;
            o[c] = p0[c] + u * (m0 + u * (c2 + u * c3));
        }
        o
    }

    /// Writes group `g` (kind `KIND`, an index into [`GROUPS`]); `FOLLOW` starts each track
    /// at `at` (the cursor) instead of the bucket table.
    #[inline(always)]
    fn run_group<const CUBIC: bool, const FOLLOW: bool, const KIND: usize>(
        &self,
        g: usize,
        x: f32,
        out: &mut [Pose32],
        at: &mut [u32],
    ) {
        let f = x as u32;
        let (h0, h1) = (self.group[g], self.group[g + 1]);
        // In chunks: first every track's segment value (independent work the processor can
        // overlap), then the square roots or normalisations of the whole chunk at once.
        let mut r = [[0.0f32; 4]; CHUNK];
        let mut s = [0.0f32; CHUNK];
        for (ci, chunk) in self.heads[h0..h1].chunks(CHUNK).enumerate() {
            let base = h0 + ci * CHUNK;
            for (j, h) in chunk.iter().enumerate() {
                let i = if FOLLOW {
                    let i = self.follow(h, x, f, at[base + j]);
                    at[base + j] = i as u32;
                    i
                } else {
                    self.find(h, x, f)
                };
                r[j] = self.eval::<CUBIC>(h, i, x);
            }
            match GROUPS[KIND] {
                Out::Rot3 => {
                    for j in 0..CHUNK {
                        let v = r[j];
                        s[j] = (1.0 - (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])).max(0.0);
                    }
                    for x in &mut s {
                        *x = x.sqrt();
                    }
                }
                Out::Rot4 => {
                    for j in 0..CHUNK {
                        let v = r[j];
                        s[j] = v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3];
                    }
                    for x in &mut s {
                        *x = if *x > 0.0 { 1.0 / x.sqrt() } else { 0.0 };
                    }
                }
                Out::Translation | Out::Scale => {}
            }
            for (j, h) in chunk.iter().enumerate() {
                let Some(o) = out.get_mut(h.bone as usize) else {
                    continue;
                };
                let v = r[j];
                match GROUPS[KIND] {
                    Out::Rot3 => o.rotation = Quat::from_xyzw(v[0], v[1], v[2], s[j]),
                    Out::Rot4 => {
                        o.rotation = if s[j] > 0.0 {
                            Quat::from_xyzw(v[0] * s[j], v[1] * s[j], v[2] * s[j], v[3] * s[j])
                        } else {
                            Quat::IDENTITY
                        }
                    }
                    Out::Translation => o.translation = Vec3::new(v[0], v[1], v[2]),
                    Out::Scale => o.scale = Vec3::new(v[0], v[1], v[2]),
                }
            }
        }
    }

    #[inline(always)]
    fn pose_with<const CUBIC: bool, const FOLLOW: bool>(
        &self,
        x: f32,
        out: &mut [Pose32],
        at: &mut [u32],
    ) {
        let n = out.len().min(self.rest.len());
        out[..n].copy_from_slice(&self.rest[..n]);
        self.run_group::<CUBIC, FOLLOW, 0>(0, x, out, at);
        self.run_group::<CUBIC, FOLLOW, 1>(1, x, out, at);
        self.run_group::<CUBIC, FOLLOW, 2>(2, x, out, at);
        self.run_group::<CUBIC, FOLLOW, 3>(3, x, out, at);
    }

    fn pose(&self, x: f32, out: &mut [Pose32], at: Option<&mut [u32]>) {
        match (self.cubic, at) {
            (true, None) => self.pose_with::<true, false>(x, out, &mut []),
            (false, None) => self.pose_with::<false, false>(x, out, &mut []),
            (true, Some(at)) => self.pose_with::<true, true>(x, out, at),
            (false, Some(at)) => self.pose_with::<false, true>(x, out, at),
        }
    }

    /// The local pose at time `t_s` seconds (clamped to the clip; NaN reads frame 0); `out`
    /// gets one transform per bone (extra entries are left alone, missing ones skipped).
    pub fn sample(&self, t_s: f32, out: &mut [Pose32]) {
        self.pose(self.frame_of(t_s), out, None);
    }

    /// Like [`Decoder::sample`] (the same values), starting each track at the segment the
    /// cursor's previous call used and stepping forward: sequential playback reads only the
    /// keys between two samples. Time going backwards, or a cursor of another decoder, falls
    /// back to the bucket table.
    pub fn sample_cursor(&self, t_s: f32, cursor: &mut Cursor, out: &mut [Pose32]) {
        if cursor.at.len() != self.heads.len() {
            *cursor = self.cursor();
        }
        self.pose(self.frame_of(t_s), out, Some(&mut cursor.at));
    }

    /// The pose at frame index `frame` (clamped).
    pub fn sample_frame(&self, frame: usize, out: &mut [Pose32]) {
        let x = (frame.min(u16::MAX as usize) as f32).min(self.last_frame);
        self.pose(x, out, None);
    }

    /// Every frame, as local transforms of the motion model (`[frame][bone]`).
    pub fn decompress(&self) -> Vec<Vec<LocalTransform>> {
        let n = self.last_frame as usize + 1;
        let mut out = Vec::with_capacity(n);
        let mut pose = vec![Pose32::IDENTITY; self.rest.len()];
        let mut cursor = self.cursor();
        for f in 0..n {
            self.pose(f as f32, &mut pose, Some(&mut cursor.at));
            out.push(pose.iter().map(|p| p.to_local()).collect());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::anim::{AnimatedTrack, BoneTracks};

    /// A clip of one bone whose translation has keys at `frames` (values 0, 1, 4, 9, … in x).
    fn clip(frames: &[u16], num_frames: u16, interp: Interp) -> EncodedClip {
        let k = frames.len();
        let q: Vec<u32> = (0..k).flat_map(|i| [(i * i) as u32, i as u32, 0]).collect();
        EncodedClip {
            sample_rate: 10.0,
            num_frames,
            interp,
            bones: vec![BoneTracks {
                rotation: Track::Default,
                translation: Track::Animated(AnimatedTrack {
                    comps: 3,
                    frames: frames.to_vec(),
                    bits: vec![12, 12, 0],
                    lo: vec![0.0; 3],
                    extent: vec![4095.0, 4095.0, 0.0],
                    q,
                    delta: false,
                }),
                scale: Track::Constant(vec![2.0, 2.0, 2.0]),
            }],
        }
    }

    /// The segment by a plain search, and the value as the format defines it.
    fn reference(frames: &[u16], x: f32, cubic: bool) -> f32 {
        let t: Vec<f64> = frames.iter().map(|&f| f64::from(f)).collect();
        let v: Vec<f64> = (0..t.len()).map(|i| (i * i) as f64).collect();
        let n = t.len();
        let x = f64::from(x);
        let i = (0..n - 1)
            .rev()
            .find(|&i| t[i] <= x)
            .unwrap_or(0)
            .min(n - 2);
        let h = t[i + 1] - t[i];
        let u = ((x - t[i]) / h).clamp(0.0, 1.0);
        if !cubic {
            return (v[i] + (v[i + 1] - v[i]) * u) as f32;
        }
        let slope = |j: usize| {
            let (a, b) = if j == 0 {
                (0, 1)
            } else if j == n - 1 {
                (n - 2, n - 1)
            } else {
                (j - 1, j + 1)
            };
            (v[b] - v[a]) / (t[b] - t[a]) * h
        };
        let (m0, m1) = (slope(i), slope(i + 1));
        let (u2, u3) = (u * u, u * u * u);
        ((2.0 * u3 - 3.0 * u2 + 1.0) * v[i]
            + (u3 - 2.0 * u2 + u) * m0
            + (-2.0 * u3 + 3.0 * u2) * v[i + 1]
            + (u3 - u2) * m1) as f32
    }

    #[test]
    fn bucket_tables_with_steps_find_every_segment() {
        // Keys bunched at the start and the end of a long clip: large buckets holding several
        // keys each, so the lookup must step.
        let frames: Vec<u16> = [0u16, 1, 2, 3, 5, 8, 13, 200, 201, 202, 990, 995, 999].to_vec();
        for interp in [Interp::Linear, Interp::Cubic] {
            let c = clip(&frames, 1000, interp);
            let d = Decoder::new(&c);
            assert!(
                d.heads[0].shift > 0 && d.heads[0].steps > 0,
                "{:?}",
                d.heads[0]
            );
            let mut out = [Pose32::IDENTITY; 2];
            let mut seq = [Pose32::IDENTITY; 1];
            let mut cur = d.cursor();
            let whole = d.decompress();
            for i in 0..4000 {
                let x = i as f32 * 0.25;
                d.sample(x / 10.0, &mut out);
                let want = reference(&frames, x, interp == Interp::Cubic);
                let got = out[0].translation.x;
                assert!(
                    (got - want).abs() <= 1e-3 * want.abs().max(1.0),
                    "{interp:?} frame {x}: {got} against {want}"
                );
                assert_eq!(out[0].scale, Vec3::splat(2.0));
                assert_eq!(
                    out[1],
                    Pose32::IDENTITY,
                    "entries past the bones are left alone"
                );
                d.sample_cursor(x / 10.0, &mut cur, &mut seq);
                assert_eq!(seq[0], out[0], "cursor at frame {x}");
                if i % 4 == 0 {
                    assert_eq!(seq[0].to_local(), whole[i / 4][0]);
                }
            }
            // Backwards, beyond the ends, and NaN.
            for t in [50.0, 99.95, 0.05, -3.0, f32::NAN, 1e9] {
                d.sample(t, &mut out);
                d.sample_cursor(t, &mut cur, &mut seq);
                assert_eq!(seq[0], out[0], "t = {t}");
            }
        }
    }

    #[test]
    fn working_memory_is_bounded_by_the_keys() {
        // Two keys over 65 535 frames: the table has at most two buckets per key.
        let c = clip(&[0, 65_534], 65_535, Interp::Cubic);
        let d = Decoder::new(&c);
        assert!(d.lut.len() <= 4, "{}", d.lut.len());
        assert_eq!(d.frames.len(), 2);
    }
}
