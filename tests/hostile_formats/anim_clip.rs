//! statepack animation clips in the hostile-input tests: files compressed from a cut of the
//! CMU walk fixture, and the allocation bombs.

use super::NamedFile;
use statepack::formats::anim_clip::{compress, MAGIC, VERSION};
use statepack_codecs::anim::{Interp, Metric};
use statepack_codecs::motion::{Clip, Skeleton};

/// The first 6 bones of `motion/cmu-131-01-walk.bvh` over 60 frames, at 1 mm (linear) and
/// at 0.5 mm on a 3 cm shell (cubic).
pub fn fixture_files() -> Vec<NamedFile> {
    let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") else {
        return Vec::new();
    };
    let clip = statepack_codecs::motion::load_motion_file(&path).expect("read the walk");
    let skeleton = Skeleton::new(clip.skeleton.bones()[..6].to_vec()).expect("a prefix");
    let rows = clip
        .frames
        .iter()
        .take(60)
        .map(|r| r[..6].to_vec())
        .collect();
    let cut = Clip::new("cut", skeleton, clip.frame_time_s, rows).expect("a cut");
    [
        (
            "cmu walk 6 bones x 60 frames, 1 mm linear",
            Metric {
                tolerance_m: 0.001,
                shell_m: 0.0,
            },
            Interp::Linear,
        ),
        (
            "cmu walk 6 bones x 60 frames, shell cubic",
            Metric {
                tolerance_m: 0.0005,
                shell_m: 0.03,
            },
            Interp::Cubic,
        ),
    ]
    .into_iter()
    .map(|(name, m, i)| {
        (
            name.to_owned(),
            compress(&cut, m, Some(i)).expect("compress").bytes,
        )
    })
    .collect()
}

fn header(frames: u16, bones: u16) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.push(VERSION);
    b.push(0);
    b.extend_from_slice(&frames.to_le_bytes());
    b.extend_from_slice(&60f32.to_le_bytes());
    b.extend_from_slice(&bones.to_le_bytes());
    b
}

/// Animated track descriptor with `keys` keys, no gap bits, one 1-bit component of three
/// (flag byte 0: three components, plain values, `index_bits` 0).
fn animated(b: &mut Vec<u8>, keys: u16) {
    b.push(2);
    b.push(0);
    b.extend_from_slice(&keys.to_le_bytes());
    for bits in [1u8, 0, 0] {
        b.push(bits);
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&0x3c00u16.to_le_bytes());
    }
}

/// Counts at their maximum over nothing, a track claiming 65 535 keys over a short stream,
/// and the most keys per stream byte (1 bit per key, consecutive frames).
pub fn bombs() -> Vec<NamedFile> {
    let mut out = Vec::new();
    out.push((
        "65 535 bones over nothing".to_owned(),
        header(u16::MAX, u16::MAX),
    ));
    let mut b = header(u16::MAX, 1);
    animated(&mut b, u16::MAX);
    b.extend_from_slice(&[1, 0]); // default translation, default scale
    b.extend_from_slice(&u32::MAX.to_le_bytes());
    out.push((
        "65 535 keys, stream length 4 GiB over nothing".to_owned(),
        b,
    ));
    // 65 535 keys of 1 bit each: every key is justified by one stream bit.
    let mut b = header(u16::MAX, 1);
    animated(&mut b, u16::MAX);
    b.extend_from_slice(&[0, 0]);
    let len = (usize::from(u16::MAX)).div_ceil(8);
    b.extend_from_slice(&(len as u32).to_le_bytes());
    b.extend(std::iter::repeat_n(0x55u8, len));
    out.push(("one track of 65 535 one-bit keys".to_owned(), b.clone()));
    // The same keys delta-coded (bit 6 of the flag byte): one 5-bit zero width per 8 keys.
    let at = 4 + 1 + 1 + 2 + 4 + 2 + 1;
    b[at] = 0x40;
    out.push(("one track of 65 535 delta-coded keys".to_owned(), b.clone()));
    // The fewest bits 65 535 keys can take: one component, deltas all zero (one 5-bit
    // width per 8 keys).
    let bits = 1 + usize::from(u16::MAX - 1).div_ceil(8) * 5;
    let len = bits.div_ceil(8);
    b.truncate(at + 1 + 2 + 15 + 2);
    b.extend_from_slice(&(len as u32).to_le_bytes());
    b.extend(std::iter::repeat_n(0u8, len));
    out.push(("one track of 65 535 zero deltas".to_owned(), b));
    // 21 845 bones, each with three one-bit animated tracks of 2 keys... as many descriptors
    // as fit: the smallest bone is 3 default tracks (3 bytes).
    let mut b = header(2, u16::MAX);
    b.extend(std::iter::repeat_n(0u8, 3 * usize::from(u16::MAX)));
    b.extend_from_slice(&0u32.to_le_bytes());
    out.push(("65 535 bones of default tracks".to_owned(), b));
    // Fixed-point constants of width 0 (kind 3, flag byte, shift): 3 bytes and no stream bits.
    let mut b = header(2, 21_845);
    for _ in 0..21_845 * 3 {
        b.extend_from_slice(&[3, 0, 0]);
    }
    b.extend_from_slice(&0u32.to_le_bytes());
    out.push((
        "21 845 bones of zero-width fixed-point constants".to_owned(),
        b,
    ));
    out
}
