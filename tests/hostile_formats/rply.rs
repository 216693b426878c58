//! RPLY v3's fixture files and allocation bombs.

use super::NamedFile;
use statepack::sim::rply_crowd::{record_crowd, CrowdOptions};

/// Two walkers for 120 ticks of the CMU walk (keyframes every 50 ticks).
pub fn fixture_files() -> Vec<NamedFile> {
    let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") else {
        return Vec::new();
    };
    let clip = statepack_codecs::motion::load_motion_file(&path).expect("read the walk");
    let opts = CrowdOptions {
        characters: 2,
        ticks: 120,
        keyframe_every: 50,
        ..CrowdOptions::default()
    };
    let crowd = record_crowd(&clip, &opts).expect("record two walkers");
    vec![(
        "cmu-131-01-walk 2 walkers x 120 ticks".to_owned(),
        crowd.bytes,
    )]
}

/// A header with these counts and this op stream, then `tables` (strings and keyframes).
pub fn file(tick_count: u32, strings: u16, keyframes: u16, tables: &[u8], ops: &[u8]) -> Vec<u8> {
    let mut b = b"RPLY".to_vec();
    b.extend_from_slice(&[3, 15]);
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&0f64.to_le_bytes());
    b.extend_from_slice(&tick_count.to_le_bytes());
    b.extend_from_slice(&strings.to_le_bytes());
    b.extend_from_slice(&keyframes.to_le_bytes());
    b.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    b.extend_from_slice(tables);
    b.extend_from_slice(ops);
    b
}

/// Every count and length at its maximum over a tiny buffer: refused by the count guard (or
/// the length check) before anything is allocated for it.
pub fn count_bombs() -> Vec<NamedFile> {
    let mut out = Vec::new();
    out.push((
        "65 535 strings in 4 bytes".to_owned(),
        file(0, u16::MAX, 0, &[0; 4], &[]),
    ));
    out.push((
        "65 535 keyframes in 8 bytes".to_owned(),
        file(0, 0, u16::MAX, &[0; 8], &[]),
    ));
    let mut b = file(0, 0, 0, &[], &[]);
    b[26..30].copy_from_slice(&u32::MAX.to_le_bytes());
    b.extend_from_slice(&[10; 8]);
    out.push(("op stream of 4 GiB in 8 bytes".to_owned(), b));
    out.push((
        "string of 65 535 bytes over 3".to_owned(),
        file(0, 1, 0, &[0xFF, 0xFF, b'a', b'b', b'c'], &[]),
    ));
    // SNAPSHOT of 4 GiB, custom payload of 64 KiB, part count 65 535, all in a few bytes.
    let mut ops = vec![1, 1, 0, 1, 0, 0, 0, 14, 1, 0];
    ops.extend_from_slice(&u32::MAX.to_le_bytes());
    ops.extend_from_slice(&[10; 6]);
    out.push((
        "SNAPSHOT of 4 GiB in 6 bytes".to_owned(),
        file(0, 1, 0, &[1, 0, b'x'], &ops),
    ));
    let ops = [9u8, 1, 0, 0xFF, 0xFF, 1, 2, 3];
    out.push((
        "CUSTOM of 65 535 bytes in 3".to_owned(),
        file(0, 1, 0, &[1, 0, b'x'], &ops),
    ));
    let mut snap = vec![10u8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    snap.extend_from_slice(&u16::MAX.to_le_bytes());
    snap.extend_from_slice(&[0; 8]);
    let mut ops = vec![1, 1, 0, 1, 0, 0, 0, 14, 1, 0];
    ops.extend_from_slice(&(snap.len() as u32).to_le_bytes());
    ops.extend_from_slice(&snap);
    out.push((
        "65 535 parts in 8 bytes".to_owned(),
        file(0, 1, 0, &[1, 0, b'x'], &ops),
    ));
    out
}

/// A recording of `n` TICK_NEXT ops (one byte each) over `n` ticks: the input whose raw
/// decode keeps the most per input byte of any format (a 48-byte `Op` per op byte).
pub fn tick_next_ops(n: u32) -> Vec<u8> {
    file(n, 0, 0, &[], &vec![10u8; n as usize])
}

/// [`count_bombs`], then the largest inputs made of the smallest elements and the inputs
/// that would make a careless player copy: 100 000 TICK_NEXT ops; 65 535 empty strings;
/// 65 535 spawns sharing one 60 000-byte descriptor; 20 000 events sharing one 60 000-byte
/// JSON payload in one tick; 4 000 keyframes over 4 000 live entities (checkpoints).
pub fn bombs() -> Vec<NamedFile> {
    let mut out = count_bombs();
    out.push(("100 000 TICK_NEXT ops".to_owned(), tick_next_ops(100_000)));
    out.push((
        "65 535 empty strings".to_owned(),
        file(0, u16::MAX, 0, &vec![0; 2 * 65_535], &[]),
    ));
    let long = vec![b'a'; 60_000];
    let mut tables = (long.len() as u16).to_le_bytes().to_vec();
    tables.extend_from_slice(&long);
    let mut ops = Vec::new();
    for id in 1..=u16::MAX {
        ops.push(1);
        ops.extend_from_slice(&id.to_le_bytes());
        ops.extend_from_slice(&[1, 0, 0, 0]);
    }
    out.push((
        "65 535 spawns of one 60 000-byte descriptor".to_owned(),
        file(0, 1, 0, &tables, &ops),
    ));
    let mut payload = b"[".to_vec();
    payload.extend(std::iter::repeat_n(b"1,".as_slice(), 29_999).flatten());
    payload.extend_from_slice(b"1]");
    let mut tables = (payload.len() as u16).to_le_bytes().to_vec();
    tables.extend_from_slice(&payload);
    let ops: Vec<u8> = std::iter::repeat_n([8u8, 1, 0, 1, 0], 20_000)
        .flatten()
        .collect();
    out.push((
        "20 000 events of one 60 000-byte JSON payload".to_owned(),
        file(0, 1, 0, &tables, &ops),
    ));
    // 4 000 entities spawned at tick 0, then 4 000 ticks each a keyframe with nothing in it.
    let mut tables = vec![1, 0, b'x'];
    let mut ops = Vec::new();
    for id in 1..=4000u16 {
        ops.push(1);
        ops.extend_from_slice(&id.to_le_bytes());
        ops.extend_from_slice(&[1, 0, 0, 0]);
    }
    let at = ops.len() as u32;
    for t in 1..=4000u32 {
        tables.extend_from_slice(&t.to_le_bytes());
        tables.extend_from_slice(&at.to_le_bytes());
    }
    ops.push(0);
    ops.extend_from_slice(&4000u32.to_le_bytes());
    out.push((
        "4 000 keyframes over 4 000 entities".to_owned(),
        file(4000, 1, 4000, &tables, &ops),
    ));
    out
}
