//! statepack's animation clip container (`schema/anim_clip.ksy`, `docs/formats/anim_clip.md`):
//! the bytes of a [`statepack_codecs::anim::EncodedClip`], with the bit stream packed and
//! unpacked here.
//!
//! [`compress`] encodes a clip within a world-space tolerance and verifies the tolerance again
//! on what decoding the bytes gives; [`read`] checks a file and returns the encoded clip, from
//! which [`Decoder`] samples poses.

use crate::generated::anim_clip as raw;
use statepack_codecs::anim::{
    self, f16_from_bits, f16_to_bits, world_error, AnimatedTrack, BoneTracks, Decoder,
    EncodeReport, EncodedClip, Interp, Metric, Track,
};
use statepack_codecs::motion::Clip;
use statepack_runtime::bits::lsb::{LsbReader, LsbWriter};
use statepack_runtime::io::{
    DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath, PathSeg,
};

pub use raw::AnimClip;

/// The file signature.
pub const MAGIC: &[u8; 4] = b"SPAC";
/// The layout version this module writes and reads.
pub const VERSION: u8 = 2;
/// Largest stored key-gap width.
pub const MAX_INDEX_BITS: u8 = 16;

fn enc_err(path: Vec<PathSeg>, msg: String) -> EncodeError {
    EncodeError::at(
        FieldPath::from_segments(path),
        EncodeErrorKind::Semantic(msg),
    )
}

/// The raw file of an encoded clip.
///
/// # Errors
///
/// When a bone count does not fit in u16, a track has a width above the format's limits, or
/// a key frame list is not increasing from 0 to the last frame.
pub fn to_raw(e: &EncodedClip) -> Result<AnimClip, EncodeError> {
    let mut w = LsbWriter::new();
    let mut bones = Vec::with_capacity(e.bones.len());
    for (b, bt) in e.bones.iter().enumerate() {
        let mut tracks = Vec::with_capacity(3);
        for (name, t) in [
            ("rotation", &bt.rotation),
            ("translation", &bt.translation),
            ("scale", &bt.scale),
        ] {
            let path = || {
                vec![
                    PathSeg::Field("bones"),
                    PathSeg::Index(b),
                    PathSeg::Field(name),
                ]
            };
            tracks.push(match t {
                Track::Default => raw::Track {
                    kind: raw::TrackKind::DefaultValue,
                    body: raw::TrackBody::DefaultTrack(raw::DefaultTrack {}),
                },
                Track::Constant(v) => {
                    let comps_ok = v.len() == 3 || (v.len() == 4 && name == "rotation");
                    if !comps_ok || v.iter().any(|x| !x.is_finite()) {
                        return Err(enc_err(
                            path(),
                            format!(
                                "a constant {name} has {} components (3, or 4 for a rotation) or one that is not finite",
                                v.len()
                            ),
                        ));
                    }
                    match anim::constant_layout(v) {
                        Some((shift, width, codes)) => {
                            for c in codes {
                                w.put(c, width);
                            }
                            raw::Track {
                                kind: raw::TrackKind::FixedPointConstant,
                                body: raw::TrackBody::FixedPointTrack(raw::FixedPointTrack {
                                    four_components: v.len() == 4,
                                    width,
                                    shift,
                                }),
                            }
                        }
                        None => raw::Track {
                            kind: raw::TrackKind::Constant,
                            body: raw::TrackBody::ConstantTrack(raw::ConstantTrack {
                                values: v.clone(),
                            }),
                        },
                    }
                }
                Track::Animated(a) => {
                    let k = a.frames.len();
                    if k < 2
                        || a.frames[0] != 0
                        || a.frames[k - 1] + 1 != e.num_frames
                        || a.frames.windows(2).any(|p| p[0] >= p[1])
                    {
                        return Err(enc_err(
                            path(),
                            "key frames must increase from 0 to the last frame".into(),
                        ));
                    }
                    let index_bits = anim::index_bits(&a.frames);
                    for p in a.frames[..k - 1].windows(2) {
                        w.put(u32::from(p[1] - p[0] - 1), index_bits);
                    }
                    if !(a.comps == 3 || (a.comps == 4 && name == "rotation"))
                        || a.bits.len() != a.comps
                        || a.q.len() != k * a.comps
                        || a.bits.iter().any(|&x| x > anim::MAX_BITS)
                        || a.bits.iter().all(|&x| x == 0)
                    {
                        return Err(enc_err(
                            path(),
                            "3 components (4 for a rotation), widths 0..=24, not all 0, one per component".into(),
                        ));
                    }
                    if a.delta {
                        for c in 0..a.comps {
                            if a.bits[c] == 0 {
                                continue;
                            }
                            w.put(a.q[c], a.bits[c]);
                            let widths = anim::delta_widths(&a.q, a.comps, c);
                            for (g, &width) in widths.iter().enumerate() {
                                w.put(u32::from(width), anim::DELTA_WIDTH_BITS);
                                let first = 1 + g * anim::DELTA_GROUP;
                                for i in first..(first + anim::DELTA_GROUP).min(k) {
                                    let d = i64::from(a.q[i * a.comps + c])
                                        - i64::from(a.q[(i - 1) * a.comps + c]);
                                    w.put64(anim::zigzag(d), width);
                                }
                            }
                        }
                    } else {
                        for kk in 0..k {
                            for c in 0..a.comps {
                                w.put(a.q[kk * a.comps + c], a.bits[c]);
                            }
                        }
                    }
                    raw::Track {
                        kind: raw::TrackKind::Animated,
                        body: raw::TrackBody::AnimatedTrack(raw::AnimatedTrack {
                            num_keys: u16::try_from(k).map_err(|_| {
                                enc_err(path(), format!("{k} keys do not fit in u16"))
                            })?,
                            four_components: a.comps == 4,
                            delta: a.delta,
                            index_bits,
                            components: (0..a.comps)
                                .map(|c| raw::Component {
                                    bits: a.bits[c],
                                    lo: f16_to_bits(f64::from(a.lo[c])),
                                    extent: f16_to_bits(f64::from(a.extent[c])),
                                })
                                .collect(),
                        }),
                    }
                }
            });
        }
        let scale = tracks.pop();
        let translation = tracks.pop();
        let rotation = tracks.pop();
        if let (Some(rotation), Some(translation), Some(scale)) = (rotation, translation, scale) {
            bones.push(raw::BoneTracks {
                rotation,
                translation,
                scale,
            });
        }
    }
    Ok(AnimClip {
        version: VERSION,
        flags: u8::from(e.interp == Interp::Cubic),
        num_frames: e.num_frames,
        sample_rate: e.sample_rate,
        bones,
        bits: w.finish(),
    })
}

/// Encodes to bytes.
///
/// # Errors
///
/// As [`to_raw`], or the raw layer's (more than 65 535 bones).
pub fn encode(e: &EncodedClip) -> Result<Vec<u8>, EncodeError> {
    to_raw(e)?.encode()
}

fn dec_err(path: Vec<PathSeg>, offset: usize, msg: String) -> DecodeError {
    DecodeError::at(
        FieldPath::from_segments(path),
        offset as u64,
        DecodeErrorKind::Semantic(msg),
    )
}

/// Checks a raw file and unpacks its bit stream. Allocates only what the bit stream's length
/// justifies: every key takes at least one bit.
///
/// # Errors
///
/// A [`DecodeError`] naming the track (`bones[3].rotation`) and the byte offset of its
/// descriptor: a rate that is not finite and positive, a component count other than 3 (4 is
/// allowed for rotations), a float32 constant that is not finite, a fixed-point width above
/// 25 or shift above 60, fewer than 2 or more than `num_frames` keys, widths above 16 (gaps)
/// or 24 (values) or all zero, key frames past the last frame, a bit stream too short, or
/// bits left over beyond the last byte's padding.
pub fn from_raw(file: &AnimClip) -> Result<EncodedClip, DecodeError> {
    if !(file.sample_rate.is_finite() && file.sample_rate > 0.0) {
        return Err(dec_err(
            vec![PathSeg::Field("sample_rate")],
            8,
            format!(
                "sample rate {} is not a finite positive number",
                file.sample_rate
            ),
        ));
    }
    let nf = file.num_frames;
    let mut r = LsbReader::new(&file.bits);
    // Magic 4, version 1, flags 1, num_frames 2, sample_rate 4, num_bones 2.
    let mut offset = 14usize;
    let mut bones = Vec::with_capacity(file.bones.len());
    for (b, bt) in file.bones.iter().enumerate() {
        let mut slots = [Track::Default, Track::Default, Track::Default];
        for (slot, (name, t)) in slots.iter_mut().zip([
            ("rotation", &bt.rotation),
            ("translation", &bt.translation),
            ("scale", &bt.scale),
        ]) {
            let path = || {
                vec![
                    PathSeg::Field("bones"),
                    PathSeg::Index(b),
                    PathSeg::Field(name),
                ]
            };
            let comps_ok = |c: usize| c == 3 || (c == 4 && name == "rotation");
            let track = match &t.body {
                raw::TrackBody::DefaultTrack(_) => Track::Default,
                raw::TrackBody::ConstantTrack(c) => {
                    if !comps_ok(c.values.len()) {
                        return Err(dec_err(
                            path(),
                            offset,
                            format!("a constant {name} has {} components", c.values.len()),
                        ));
                    }
                    if c.values.iter().any(|v| !v.is_finite()) {
                        return Err(dec_err(path(), offset, "a constant is not finite".into()));
                    }
                    Track::Constant(c.values.clone())
                }
                raw::TrackBody::FixedPointTrack(c) => {
                    let comps = if c.four_components { 4 } else { 3 };
                    if !comps_ok(comps) {
                        return Err(dec_err(
                            path(),
                            offset,
                            format!("a fixed-point constant {name} has {comps} components"),
                        ));
                    }
                    if c.width > anim::MAX_CONST_WIDTH || c.shift > anim::MAX_CONST_SHIFT {
                        return Err(dec_err(
                            path(),
                            offset,
                            format!(
                                "fixed-point width {} or shift {} is above {} or {}",
                                c.width,
                                c.shift,
                                anim::MAX_CONST_WIDTH,
                                anim::MAX_CONST_SHIFT
                            ),
                        ));
                    }
                    let mut values = Vec::with_capacity(comps);
                    for _ in 0..comps {
                        let code = r.get(c.width).ok_or_else(|| {
                            dec_err(
                                path(),
                                offset,
                                "the bit stream ends inside the constant's values".into(),
                            )
                        })?;
                        values.push(anim::fixed_point_value(code, c.shift));
                    }
                    Track::Constant(values)
                }
                raw::TrackBody::AnimatedTrack(a) => {
                    let comps = a.components.len();
                    if !comps_ok(comps) {
                        return Err(dec_err(
                            path(),
                            offset,
                            format!("an animated {name} has {comps} components"),
                        ));
                    }
                    let k = usize::from(a.num_keys);
                    if k < 2 || k > usize::from(nf) {
                        return Err(dec_err(
                            path(),
                            offset,
                            format!("{k} keys: an animated track has 2 to num_frames ({nf}) keys"),
                        ));
                    }
                    if a.index_bits > MAX_INDEX_BITS {
                        return Err(dec_err(
                            path(),
                            offset,
                            format!("index_bits {} is above {MAX_INDEX_BITS}", a.index_bits),
                        ));
                    }
                    let bits: Vec<u8> = a.components.iter().map(|c| c.bits).collect();
                    let per_key: usize = bits.iter().map(|&x| usize::from(x)).sum();
                    if bits.iter().any(|&x| x > anim::MAX_BITS) || per_key == 0 {
                        return Err(dec_err(
                            path(),
                            offset,
                            "component widths must be 0..=24 and not all 0".into(),
                        ));
                    }
                    let delta = a.delta;
                    let animated_comps = bits.iter().filter(|&&x| x > 0).count();
                    // The fewest bits the track can take: every key costs at least one bit
                    // (plain) or 5/8 bit per animated component (deltas).
                    let least = (k - 2) * usize::from(a.index_bits)
                        + if delta {
                            per_key
                                + (k - 1).div_ceil(anim::DELTA_GROUP)
                                    * usize::from(anim::DELTA_WIDTH_BITS)
                                    * animated_comps
                        } else {
                            k * per_key
                        };
                    if least > r.left() {
                        return Err(dec_err(
                            path(),
                            offset,
                            format!(
                                "the bit stream has {} bits left, the track needs at least {least}",
                                r.left()
                            ),
                        ));
                    }
                    let short = |what: &str| {
                        dec_err(
                            path(),
                            offset,
                            format!("the bit stream ends inside the track's {what}"),
                        )
                    };
                    let mut frames = Vec::with_capacity(k);
                    frames.push(0u16);
                    let mut f = 0u32;
                    for _ in 0..k - 2 {
                        f += r.get(a.index_bits).ok_or_else(|| short("key frames"))? + 1;
                        if f >= u32::from(nf) - 1 {
                            return Err(dec_err(
                                path(),
                                offset,
                                format!(
                                    "a key frame ({f}) is not before the last frame ({})",
                                    nf - 1
                                ),
                            ));
                        }
                        frames.push(f as u16);
                    }
                    frames.push(nf - 1);
                    let mut q = vec![0u32; k * comps];
                    if delta {
                        for (c, &bb) in bits.iter().enumerate() {
                            if bb == 0 {
                                continue;
                            }
                            let max = (1i64 << bb) - 1;
                            let mut v = i64::from(r.get(bb).ok_or_else(|| short("values"))?);
                            q[c] = v as u32;
                            let mut i = 1;
                            while i < k {
                                let width = r
                                    .get(anim::DELTA_WIDTH_BITS)
                                    .ok_or_else(|| short("values"))?
                                    as u8;
                                if width > bb + 1 {
                                    return Err(dec_err(path(), offset, format!("a delta width of {width} bits exceeds the component's {bb} bits + 1")));
                                }
                                for _ in 0..anim::DELTA_GROUP.min(k - i) {
                                    v += anim::unzigzag(
                                        r.get64(width).ok_or_else(|| short("values"))?,
                                    );
                                    if !(0..=max).contains(&v) {
                                        return Err(dec_err(path(), offset, format!("a delta takes component {c} to {v}, outside 0..={max}")));
                                    }
                                    q[i * comps + c] = v as u32;
                                    i += 1;
                                }
                            }
                        }
                    } else {
                        for kk in 0..k {
                            for (c, &bb) in bits.iter().enumerate() {
                                q[kk * comps + c] = r.get(bb).ok_or_else(|| short("values"))?;
                            }
                        }
                    }
                    let lo: Vec<f32> = a.components.iter().map(|c| f16_from_bits(c.lo)).collect();
                    let extent: Vec<f32> = a
                        .components
                        .iter()
                        .map(|c| f16_from_bits(c.extent))
                        .collect();
                    Track::Animated(AnimatedTrack {
                        comps,
                        frames,
                        bits,
                        lo,
                        extent,
                        q,
                        delta,
                    })
                }
            };
            offset += t.encoded_len();
            *slot = track;
        }
        let [rotation, translation, scale] = slots;
        bones.push(BoneTracks {
            rotation,
            translation,
            scale,
        });
    }
    if r.left() >= 8 {
        return Err(dec_err(
            vec![PathSeg::Field("bits")],
            offset + 4 + r.bit_pos() / 8,
            format!("{} bits left over after the last track", r.left()),
        ));
    }
    Ok(EncodedClip {
        sample_rate: file.sample_rate,
        num_frames: nf,
        interp: if file.flags & 1 != 0 {
            Interp::Cubic
        } else {
            Interp::Linear
        },
        bones,
    })
}

/// Decodes bytes into an encoded clip ([`AnimClip::decode`] then [`from_raw`]).
///
/// # Errors
///
/// A clip of another layout version is refused with an error at `version` (byte offset 4)
/// that names the version found; version 1 (float32 constants, two-byte animated track
/// headers) is no longer read: encode it again from its motion. Otherwise the raw layer's
/// or [`from_raw`]'s error.
pub fn read(bytes: &[u8]) -> Result<EncodedClip, DecodeError> {
    if bytes.len() > 4 && bytes.starts_with(MAGIC) && bytes[4] != VERSION {
        let found = bytes[4];
        let what = if found == 1 {
            "version 1, the layout before fixed-point constants, is no longer read; encode the clip again from its motion"
        } else {
            "not a layout this reader knows"
        };
        return Err(dec_err(
            vec![PathSeg::Field("version")],
            4,
            format!("clip layout version {found}: {what} (this reader reads version {VERSION})"),
        ));
    }
    from_raw(&AnimClip::decode(bytes)?)
}

/// What [`compress`] produced.
#[derive(Debug, Clone, PartialEq)]
pub struct Compressed {
    /// The file.
    pub bytes: Vec<u8>,
    /// The encoder's report.
    pub report: EncodeReport,
    /// World error measured on the decode of `bytes`, metres (within the tolerance).
    pub verified_error_m: f64,
}

/// Encodes `clip` within `metric`, writes the bytes, decodes them and measures the world
/// error again; tightens the tolerance and starts over while the decoded bytes miss it.
///
/// # Errors
///
/// The encoder's error (as text), or a writer error.
pub fn compress(clip: &Clip, metric: Metric, interp: Option<Interp>) -> Result<Compressed, String> {
    let mut m = metric;
    for _ in 0..8 {
        let (enc, report) = anim::encode(clip, m, interp).map_err(|e| e.to_string())?;
        let bytes = encode(&enc).map_err(|e| e.to_string())?;
        let back = read(&bytes).map_err(|e| e.to_string())?;
        let err = world_error(clip, &Decoder::new(&back).decompress(), metric.shell_m);
        if err <= metric.tolerance_m {
            return Ok(Compressed {
                bytes,
                report,
                verified_error_m: err,
            });
        }
        m.tolerance_m *= 0.9;
    }
    Err("could not bring the decoded clip within the tolerance".into())
}

/// statepack animation clips in the format registry ([`crate::formats::FORMATS`]).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec::of::<AnimClip>();

/// The animation clip's own parts of its registry entry; the rest is shared ([`crate::formats::FormatSpec::of`]).
impl crate::formats::Format for AnimClip {
    const NAME: &'static str = "anim-clip";
    const TITLE: &'static str = "statepack animation clip v2";
    fn detect(b: &[u8]) -> bool {
        b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b))
    }
    fn decode_full(b: &[u8]) -> Result<(), DecodeError> {
        read(b).map(|e| drop(Decoder::new(&e)))
    }
    fn samples() -> Vec<(String, Vec<u8>)> {
        sample_files()
    }
}

/// Sample files built in code: the first 40 frames of the study's walk (generated in code)
/// at 1 mm joint error (linear and cubic), and at 0.5 mm on a 3 cm shell.
pub fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut clip = statepack_codecs::motion::walk::study_walk_clip();
    clip.frames.truncate(40);
    let mut out = Vec::new();
    for (name, metric, interp) in [
        (
            "walk40-1mm-linear",
            Metric {
                tolerance_m: 0.001,
                shell_m: 0.0,
            },
            Interp::Linear,
        ),
        (
            "walk40-1mm-cubic",
            Metric {
                tolerance_m: 0.001,
                shell_m: 0.0,
            },
            Interp::Cubic,
        ),
        (
            "walk40-shell",
            Metric {
                tolerance_m: 0.0005,
                shell_m: 0.03,
            },
            Interp::Cubic,
        ),
    ] {
        if let Ok(c) = compress(&clip, metric, Some(interp)) {
            out.push((name.to_owned(), c.bytes));
        }
    }
    out
}
