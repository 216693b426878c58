//! CBTK v1: files from the real fixtures and the allocation bombs.

use super::{NamedFile, Rng};
use statepack::formats::cbtrack::{build_chunk, CbtkHead, WindowEntry};
use statepack::sim::cbtrack_match::MatchSpec;
use statepack_codecs::motion::{Clip, Skeleton};
use statepack_runtime::cbtk_columns::{deflate, ChunkBuilder};

/// The first `bones` bones and `frames` frames of `clip`.
fn cut(clip: &Clip, bones: usize, frames: usize) -> Clip {
    let skeleton = Skeleton::new(clip.skeleton.bones()[..bones].to_vec()).expect("a prefix");
    let rows = clip
        .frames
        .iter()
        .take(frames)
        .map(|r| r[..bones].to_vec())
        .collect();
    Clip::new(clip.name.clone(), skeleton, clip.frame_time_s, rows).expect("a cut")
}

/// A crowd of 2 characters from the CMU walk (`motion/cmu-131-01-walk.bvh`, its first 4
/// bones and 120 frames) over 100 frames in windows of 40.
pub fn fixture_files() -> Vec<NamedFile> {
    let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") else {
        return Vec::new();
    };
    let clip = statepack_codecs::motion::load_motion_file(&path).expect("read the walk");
    let mut spec = MatchSpec::crowd(cut(&clip, 4, 120), 2, 100);
    spec.window_length = 40;
    spec.fire_every = 30;
    spec.features = 2;
    let mut out = std::io::Cursor::new(Vec::new());
    spec.write(&mut out, |_, _| {}).expect("write the crowd");
    vec![(
        "cmu-131-01-walk crowd of 2, 4 bones, 100 frames".into(),
        out.into_inner(),
    )]
}

/// A header for `windows` windows over frames 0..=`last` (window length 1 000).
fn header(windows: usize, last: u32) -> CbtkHead {
    CbtkHead {
        format_version: 1,
        header_size: 96,
        recorder_version: 4,
        frames_per_second: 30,
        first_frame: 0,
        last_frame: last,
        window_length: 1000,
        tolerance: 0.5,
        position_shift: 3,
        velocity_shift: 11,
        rotation_bits: 12,
        sample_interval: 1,
        info_block: 0,
        info_len: 0,
        features_block: 0,
        features_len: 0,
        num_units: 0,
        num_projectiles: 0,
        num_features: 0,
        game_id: vec![0; 16],
        resource_tolerance: 0.5,
        resource_fraction: 0.0,
        reserved: vec![0; 8],
        header_extra: Vec::new(),
        index: vec![
            WindowEntry {
                main_block: 0,
                main_len: 0,
                terrain_block: 0,
                terrain_len: 0
            };
            windows
        ],
    }
}

/// The bytes of a header and index.
fn head_bytes(h: &CbtkHead) -> Vec<u8> {
    let mut w = statepack_runtime::io::ByteWriter::new();
    h.write_to(&mut w).expect("a valid header");
    w.into_bytes()
}

/// A one-window file whose info, features and main chunk are `info`, `features`, `main`
/// (compressed bodies; features and main first, then info, so small chunks pad least).
fn file(info: &[u8], features: &[u8], main: &[u8]) -> Vec<u8> {
    file_of_windows(info, features, &[main])
}

/// [`file`] with one window per chunk of `mains`, over frames 0..=1000 × (windows − 1) + 10.
fn file_of_windows(info: &[u8], features: &[u8], mains: &[&[u8]]) -> Vec<u8> {
    let mut h = header(mains.len(), 1000 * (mains.len() as u32 - 1) + 10);
    let mut area = Vec::new();
    let base = 96 + 16 * mains.len();
    let mut place = |z: &[u8]| {
        let pos = base + area.len();
        let pad = (64 - pos % 64) % 64;
        area.extend(std::iter::repeat_n(0u8, pad));
        let block = (base + area.len()) / 64;
        area.extend_from_slice(z);
        (block as u32, z.len() as u32)
    };
    (h.features_block, h.features_len) = place(features);
    for (k, main) in mains.iter().enumerate() {
        let (b, l) = place(main);
        h.index[k].main_block = b;
        h.index[k].main_len = l;
    }
    (h.info_block, h.info_len) = place(info);
    let mut out = head_bytes(&h);
    out.extend_from_slice(&area);
    out
}

fn empty_chunk() -> Vec<u8> {
    deflate(&build_chunk(ChunkBuilder::new()).unwrap(), 9)
}

fn chunk_with(f: impl FnOnce(&mut ChunkBuilder)) -> Vec<u8> {
    let mut b = ChunkBuilder::new();
    f(&mut b);
    deflate(&build_chunk(b).unwrap(), 9)
}

/// zlib of `body` (a decompressed chunk) followed by an unknown u8 column (id 250) of
/// random bytes, as few as make the chunk inflate to at most 63.5 times its length: the
/// most memory a chunk within the format's ratio limit can claim from its compressible part.
///
/// The noise lengths tried are n = `body_len_hint` / 256, then n + n / 64 + 16 and so on
/// (up to a sixteenth of the hint);
/// the first that keeps the ratio is found by bisection (more random bytes only lower the
/// ratio), with a handful of compressions instead of one per step.
fn near_ratio(b: ChunkBuilder, body_len_hint: usize) -> Vec<u8> {
    let mut rng = Rng::new(0xb0b);
    let noise = rng.bytes(body_len_hint);
    // Random bytes are stored about one for one: n of them keep the ratio near 63.5.
    // A sixteenth of the body in random bytes brings any chunk far below the limit.
    let most = noise.len().min(body_len_hint / 16);
    let mut steps = vec![body_len_hint / 256];
    while *steps.last().expect("a first step") < most {
        let n = *steps.last().expect("a step");
        steps.push(n + n / 64 + 16);
    }
    let try_n = |n: usize| {
        let mut with = b.clone();
        with.put::<u8>(250, "noise", &noise[..n.min(noise.len())])
            .unwrap();
        let body = build_chunk(with).unwrap();
        let z = deflate(&body, 9);
        (2 * body.len() <= 127 * z.len()).then_some(z)
    };
    let (mut lo, mut hi) = (0, steps.len() - 1);
    let mut found = try_n(steps[hi]).expect("a sixteenth of noise keeps the ratio");
    while lo < hi {
        let mid = (lo + hi) / 2;
        match try_n(steps[mid]) {
            Some(z) => (hi, found) = (mid, z),
            None => lo = mid + 1,
        }
    }
    found
}

/// Counts at their maximum over tiny buffers, a chunk that inflates past the spec's limit,
/// and the largest decodes made of the smallest elements (a u8 column that makes one entry
/// per byte, compressed 1000 to 1 by zlib). Made once per test process (they take seconds
/// to compress) and cloned for each caller.
pub fn bombs() -> Vec<NamedFile> {
    static MADE: std::sync::OnceLock<Vec<NamedFile>> = std::sync::OnceLock::new();
    MADE.get_or_init(make_bombs).clone()
}

fn make_bombs() -> Vec<NamedFile> {
    let mut out = Vec::new();
    let mut h = head_bytes(&header(0, 0));
    h[24..28].copy_from_slice(&16_777_215u32.to_le_bytes());
    out.push(("16,777,215 windows in a 96-byte header".into(), h));
    let mut h = head_bytes(&header(1, 10));
    h[6..8].copy_from_slice(&65535u16.to_le_bytes());
    out.push(("header size 65,535 over 112 bytes".into(), h));
    // a directory claiming u32::MAX columns
    let mut body = vec![0xFF, 0xFF, 0xFF, 0xFF];
    body.extend_from_slice(&[0; 12]);
    out.push((
        "4,294,967,295 columns in a 16-byte chunk".into(),
        file(&empty_chunk(), &empty_chunk(), &deflate(&body, 9)),
    ));
    // a chunk inflating to 17,000,000 zero bytes
    out.push((
        "main chunk inflating past 16,777,215 bytes".into(),
        file(
            &empty_chunk(),
            &empty_chunk(),
            &deflate(&vec![0u8; 17_000_000], 9),
        ),
    ));
    // 60,000 units with 65,535 transform keys each and no key columns
    out.push((
        "60,000 units x 65,535 keys without key columns".into(),
        file(
            &empty_chunk(),
            &empty_chunk(),
            &chunk_with(|b| {
                b.put::<u16>(8, "t", &vec![65535; 60_000]).unwrap();
                b.put::<u16>(9, "s", &vec![65535; 60_000]).unwrap();
            }),
        ),
    ));
    // many windows pointing at one chunk that inflates to 1 MB, 64 times its length (the
    // schema's root type reads a chunk once per window naming it: the limit on all chunks
    // together stops it)
    let mut h = header(4000, 4_000_000);
    let main = {
        let mut b = ChunkBuilder::new();
        b.put::<u8>(200, "unknown", &vec![0; 1_000_000]).unwrap();
        near_ratio(b, 1_000_000)
    };
    let head = 96 + 16 * h.index.len();
    let mut area = vec![0u8; (64 - head % 64) % 64];
    let block = ((head + area.len()) / 64) as u32;
    area.extend_from_slice(&main);
    for e in &mut h.index {
        e.main_block = block;
        e.main_len = main.len() as u32;
    }
    h.info_block = block;
    h.info_len = main.len() as u32;
    h.features_block = block;
    h.features_len = main.len() as u32;
    let mut bytes = head_bytes(&h);
    bytes.extend_from_slice(&area);
    out.push(("4,000 windows sharing one chunk".into(), bytes));
    // 10,000 directory entries over the same 100 KB column, the chunk at the ratio limit:
    // each entry reads its column through a positional instance, so this would be 1 GB of
    // values from a few kilobytes; columns may not share bytes
    let entries = 10_000u32;
    let dir_end = 4 + 12 * entries;
    let mut body = entries.to_le_bytes().to_vec();
    for id in 0..entries {
        body.extend_from_slice(&(id as u16 + 1).to_le_bytes());
        body.extend_from_slice(&1u16.to_le_bytes());
        body.extend_from_slice(&dir_end.to_le_bytes());
        body.extend_from_slice(&100_000u32.to_le_bytes());
    }
    body.extend(std::iter::repeat_n(0u8, 100_000));
    let mut rng = Rng::new(0xd2);
    let mut noise = 0;
    let z = loop {
        let mut b = body.clone();
        b.extend(rng.bytes(noise));
        b.extend_from_slice(&[0; 4]);
        let z = deflate(&b, 9);
        if 2 * b.len() <= 127 * z.len() {
            break z;
        }
        noise += 256;
    };
    out.push((
        "10,000 directory entries over one 100 KB column".into(),
        file(&empty_chunk(), &empty_chunk(), &z),
    ));
    out.push((
        "257 teams".into(),
        file(
            &chunk_with(|b| b.put::<u8>(172, "team_ids", &[0; 257]).unwrap()),
            &empty_chunk(),
            &empty_chunk(),
        ),
    ));
    // the largest valid decodes per byte: one feature per byte of a u8 column, one team per
    // byte of the team id column, one terrain-free window of one unit
    out.push((
        "1,000,000 features from a u8 column".into(),
        file(
            &empty_chunk(),
            &chunk_with(|b| b.put::<u8>(131, "flags", &vec![0; 1_000_000]).unwrap()),
            &empty_chunk(),
        ),
    ));
    out.push((
        "4,000,000 teams from a u8 column".into(),
        file(
            &chunk_with(|b| b.put::<u8>(172, "team_ids", &vec![0; 4_000_000]).unwrap()),
            &empty_chunk(),
            &empty_chunk(),
        ),
    ));
    // At the ratio limit: the most each kind of element can claim from chunks that
    // inflate to at most 64 times their length.
    out.push((
        "200,000 units of 8 bytes, main chunk at the ratio limit".into(),
        units_at_ratio_limit(200_000),
    ));
    out.push((
        "3 features without their frames".into(),
        file(
            &empty_chunk(),
            &chunk_with(|b| b.put::<u8>(131, "flags", &[0; 3]).unwrap()),
            &empty_chunk(),
        ),
    ));
    out.push((
        "100,000 features of 8 bytes, features chunk at the ratio limit".into(),
        file(
            &empty_chunk(),
            &{
                let n = 100_000;
                let mut b = ChunkBuilder::new();
                b.put::<u32>(132, "first_frame", &vec![0; n]).unwrap();
                b.put::<u32>(133, "last_frame", &vec![0; n]).unwrap();
                near_ratio(b, 8 * n)
            },
            &empty_chunk(),
        ),
    ));
    out.push((
        "200,000 projectiles of 4 bytes, main chunk at the ratio limit".into(),
        file(&empty_chunk(), &empty_chunk(), &{
            let n = 200_000;
            let mut b = ChunkBuilder::new();
            b.put::<u16>(87, "key_count", &vec![1; n]).unwrap();
            b.put::<u16>(88, "time", &vec![0; n]).unwrap();
            near_ratio(b, 4 * n)
        }),
    ));
    out.push((
        "400,000 strings of length 0, info chunk at the ratio limit".into(),
        file(
            &{
                let mut b = ChunkBuilder::new();
                b.put::<u16>(162, "lens", &vec![0; 400_000]).unwrap();
                near_ratio(b, 800_000)
            },
            &empty_chunk(),
            &empty_chunk(),
        ),
    ));
    out.push((
        "65,000 directory entries of unknown type at the ratio limit".into(),
        file(&empty_chunk(), &empty_chunk(), &{
            let entries = 65_000u32;
            let mut body = entries.to_le_bytes().to_vec();
            for id in 0..entries {
                body.extend_from_slice(&(id as u16 + 400).to_le_bytes());
                body.extend_from_slice(&7u16.to_le_bytes());
                body.extend_from_slice(&0u32.to_le_bytes());
                body.extend_from_slice(&0u32.to_le_bytes());
            }
            // Random bytes after the directory bring the ratio to the limit.
            let mut rng = Rng::new(0xd1);
            let mut noise = body.len() / 63;
            loop {
                let mut b = body.clone();
                b.extend(rng.bytes(noise / 4 * 4));
                b.extend_from_slice(&[0; 4]);
                let z = deflate(&b, 9);
                if 2 * b.len() <= 127 * z.len() {
                    break z;
                }
                noise += noise / 32 + 64;
            }
        }),
    ));
    out.push((
        "1,000,000 strings of length 0".into(),
        file(
            &chunk_with(|b| b.put::<u16>(162, "lens", &vec![0; 1_000_000]).unwrap()),
            &empty_chunk(),
            &empty_chunk(),
        ),
    ));
    out
}

/// A track of one window whose main chunk holds `n` units of 8 bytes (one transform and one
/// status key each, all zero), at the ratio limit (`near_ratio`): the input whose decodes
/// keep the most per input byte. Its main chunk inflates to about 8 × `n` bytes, at most
/// 16,777,215 (n up to about 2,000,000).
pub fn units_at_ratio_limit(n: usize) -> Vec<u8> {
    units_at_ratio_limit_in_windows(n, 1)
}

/// [`units_at_ratio_limit`] in each of `windows` windows (each its own copy of the chunk).
pub fn units_at_ratio_limit_in_windows(n: usize, windows: usize) -> Vec<u8> {
    let main = {
        let mut b = ChunkBuilder::new();
        b.put::<u16>(8, "transform_count", &vec![1; n]).unwrap();
        b.put::<u16>(9, "status_count", &vec![1; n]).unwrap();
        b.put::<u16>(16, "time", &vec![0; n]).unwrap();
        b.put::<u16>(32, "time", &vec![0; n]).unwrap();
        near_ratio(b, 8 * n)
    };
    let mains = vec![&main[..]; windows];
    file_of_windows(&empty_chunk(), &empty_chunk(), &mains)
}

/// A directory entry's fields: id, type code, offset, count.
type DirEntryFields = (u16, u16, u32, u32);

/// A compressed chunk body made by hand: the directory of `entries` (id, type code, offset,
/// count; offsets from the chunk's start, where the directory takes 4 + 12 per entry bytes),
/// then `data`, then 4 zero bytes. Nothing is checked, so values may break the schema.
fn raw_chunk(entries: &[DirEntryFields], data: &[u8]) -> Vec<u8> {
    let mut b = (entries.len() as u32).to_le_bytes().to_vec();
    for &(id, code, offset, count) in entries {
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&code.to_le_bytes());
        b.extend_from_slice(&offset.to_le_bytes());
        b.extend_from_slice(&count.to_le_bytes());
    }
    b.extend_from_slice(data);
    b.extend_from_slice(&[0; 4]);
    deflate(&b, 9)
}

/// One-window files whose main chunk's directory reaches each reading of a column: every
/// type code (and an unknown one), values at and past the stored-integer limits, offsets and
/// counts past the limits or the chunk, for tests that compare readers field by field.
pub fn column_cases() -> Vec<NamedFile> {
    let d = |n: u32| 4 + 12 * n;
    let u32s = |v: &[u32]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let cases: Vec<(&str, Vec<DirEntryFields>, Vec<u8>)> = vec![
        (
            "every type code",
            (1..=7)
                .map(|c| (c, c, d(7) + 8 * (u32::from(c) - 1), 2))
                .collect(),
            u32s(&[1; 14]),
        ),
        (
            "u4 value 16,777,216",
            vec![(1, 4, d(1), 2)],
            u32s(&[16_777_215, 16_777_216]),
        ),
        (
            "s4 value -16,777,216",
            vec![(1, 5, d(1), 2)],
            u32s(&[(-16_777_215i32) as u32, (-16_777_216i32) as u32]),
        ),
        (
            "s4 value 16,777,216",
            vec![(1, 5, d(1), 1)],
            u32s(&[16_777_216]),
        ),
        ("offset 16,777,216", vec![(1, 1, 16_777_216, 0)], vec![]),
        ("count 16,777,216", vec![(1, 1, d(1), 16_777_216)], vec![]),
        ("offset past the chunk", vec![(1, 2, 4000, 1)], vec![]),
        (
            "count past the chunk",
            vec![(1, 6, d(1), 10)],
            u32s(&[0; 8]),
        ),
        (
            "values cut by the chunk's end",
            vec![(1, 4, d(1) + 6, 1)],
            u32s(&[7; 1]),
        ),
    ];
    cases
        .into_iter()
        .map(|(name, entries, data)| {
            (
                format!("main chunk with {name}"),
                file(&empty_chunk(), &empty_chunk(), &raw_chunk(&entries, &data)),
            )
        })
        .collect()
}
