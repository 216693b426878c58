//! The format registry entry, the full decode check and the worked example files.

use super::*;

/// Full decode: header and index, info and features chunks, every window's main and terrain
/// chunk, each checked as [`Track::info`], [`Track::features`], [`Track::window`] and
/// [`Track::terrain`] read it, with their errors, and nothing kept: one chunk is inflated
/// at a time, its columns are read where they lie, and every entry is decoded and dropped
/// ([`Track::check_window`] and the other checks). Memory: the header and index, one
/// inflated chunk (at most 64 times its stored bytes and 16,777,215 bytes) and one curve.
///
/// Errors: the first problem found.
pub fn decode_all(bytes: &[u8]) -> Result<(), DecodeError> {
    let t = Track::open(bytes)?;
    t.check_info()?;
    t.check_features()?;
    for k in 0..t.num_windows() {
        t.check_window(k)?;
        t.check_terrain(k)?;
    }
    Ok(())
}

/// The worked example's window as keys (one unit, three transform keys, one status key).
pub fn worked_example_window() -> MainWindow {
    let k = |offset, x, y, rb| TransformKey {
        offset,
        pos: [x, y, 6400],
        rot_dropped: 3,
        rot: [0, rb, 0],
    };
    MainWindow {
        index: 0,
        start: 0,
        end: 900,
        units: vec![Unit {
            unit_id: 7983,
            serial: 0,
            def: 0,
            team: 0,
            flags: 2,
            first: 0,
            last: 900,
            transforms: vec![
                k(0, 5792, 1764, 0),
                k(300, 5792, 1764, 0),
                k(420, 6272, 1770, 1447),
            ],
            status: vec![StatusKey {
                offset: 0,
                health: 65535,
                build: 65535,
                flags: 1,
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A small track built in code: the worked example's window as a whole one-window file.
pub fn worked_example_file() -> Vec<u8> {
    let w = worked_example_window();
    let chunk = w.to_chunk().expect("the example fits");
    let params = writer::FileParams {
        first_frame: 0,
        last_frame: 900,
        window_length: 900,
        tolerance: 0.5,
        position_shift: 3,
        velocity_shift: 11,
        rotation_bits: 12,
        ..writer::FileParams::default()
    };
    let mut out = std::io::Cursor::new(Vec::new());
    let mut fw = writer::FileWriter::new(&mut out, params, &Info::default(), &[]).expect("writes");
    fw.push_window(&chunk, None).expect("writes");
    fw.finish(1, 0).expect("writes");
    out.into_inner()
}

/// The same track with `blocks` x 64 bytes of unknown header fields after byte 96, as a later
/// writer may add: the header size grows and every block number moves on by `blocks`.
///
/// Errors: the input is not a track, or the header would pass 65,535 bytes.
pub fn with_header_extra(bytes: &[u8], blocks: u32, fill: u8) -> Result<Vec<u8>, String> {
    let mut raw = Track::open(bytes).map_err(|e| e.to_string())?.raw;
    let old_head = raw.encoded_len();
    let extra = 64 * blocks as usize;
    raw.header_size = u16::try_from(raw.header_size as usize + extra)
        .map_err(|_| "header over 65,535 bytes".to_string())?;
    raw.header_extra.extend(std::iter::repeat_n(fill, extra));
    raw.info_block += blocks;
    raw.features_block += blocks;
    for e in &mut raw.index {
        e.main_block += blocks;
        if e.terrain_len > 0 {
            e.terrain_block += blocks;
        }
    }
    let mut w = ByteWriter::with_capacity(raw.encoded_len());
    raw.write_to(&mut w).map_err(|e| e.to_string())?;
    let mut out = w.into_bytes();
    out.extend_from_slice(&bytes[old_head..]);
    Ok(out)
}

/// The registry entry: the shared entry points, with the JSON of `statepack decode` written
/// one chunk at a time ([`write_json`]) and the structure's events and traced tree read one
/// chunk at a time ([`decode_events`], [`decode_traced`]: the root type's events and tree,
/// without keeping every chunk).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec {
    write_json,
    decode_events,
    decode_traced,
    ..crate::formats::FormatSpec::of::<CbtrackV1>()
};

/// CBTK v1's own parts of its registry entry; the rest is shared ([`crate::formats::FormatSpec::of`]).
impl crate::formats::Format for CbtrackV1 {
    const NAME: &'static str = "cbtrack";
    const TITLE: &'static str = "CBTK v1";
    fn detect(b: &[u8]) -> bool {
        b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b))
    }
    fn decode_full(b: &[u8]) -> Result<(), DecodeError> {
        decode_all(b)
    }
    fn check_raw_limits(b: &[u8]) -> Result<(), DecodeError> {
        super::check_raw_limits(b)
    }
    fn samples() -> Vec<(String, Vec<u8>)> {
        vec![
            ("worked_example.cbtrack".into(), worked_example_file()),
            (
                "small_match.cbtrack".into(),
                crate::sim::cbtrack_match::small_sample_file(),
            ),
        ]
    }
}
