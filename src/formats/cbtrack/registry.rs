//! The format registry entry, the full decode check and the worked example files.

use super::*;

/// Full decode: header and index, info and features chunks, every window's main and terrain
/// chunk. Each window is decoded and dropped before the next, so memory stays within one
/// window.
///
/// Errors: the first problem found.
pub fn decode_all(bytes: &[u8]) -> Result<(), DecodeError> {
    let t = Track::open(bytes)?;
    t.info()?;
    t.features()?;
    for k in 0..t.num_windows() {
        t.window(k)?;
        t.terrain(k)?;
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
    let mut raw = CbtrackV1::decode(bytes).map_err(|e| e.to_string())?;
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
    raw.encode().map_err(|e| e.to_string())
}

/// The byte fields of the raw layer (`schema/cbtrack_v1.ksy`): in the JSON form each is one
/// string of two lower-case hex digits per byte, so the chunk area is one line, not one line
/// per byte.
pub const JSON_HEX_FIELDS: &[&str] = &["game_id", "reserved", "header_extra", "chunks"];

/// Turns the byte fields of the raw layer's JSON ([`JSON_HEX_FIELDS`], arrays of numbers as
/// serde writes them) into hex strings.
fn bytes_to_hex(v: &mut serde_json::Value) {
    use std::fmt::Write;
    let Some(m) = v.as_object_mut() else { return };
    for f in JSON_HEX_FIELDS {
        if let Some(serde_json::Value::Array(a)) = m.get(*f) {
            let mut s = String::with_capacity(2 * a.len());
            for b in a {
                let _ = write!(s, "{:02x}", b.as_u64().unwrap_or(0));
            }
            m.insert((*f).to_owned(), serde_json::Value::String(s));
        }
    }
}

/// Turns the hex strings of [`JSON_HEX_FIELDS`] back into byte arrays (an array of numbers
/// is taken as it is).
///
/// Errors: a string of odd length or with a character that is not a hex digit, naming the
/// field and the character's place.
fn hex_to_bytes(v: &mut serde_json::Value) -> Result<(), String> {
    let Some(m) = v.as_object_mut() else {
        return Ok(());
    };
    for f in JSON_HEX_FIELDS {
        if let Some(serde_json::Value::String(s)) = m.get(*f) {
            if s.len() % 2 != 0 {
                return Err(format!(
                    "`{f}`: a hex string needs two digits per byte, found {} digits",
                    s.len()
                ));
            }
            let digits = s.as_bytes();
            let mut out = Vec::with_capacity(s.len() / 2);
            for (i, pair) in digits.chunks(2).enumerate() {
                let d = |c: u8, at: usize| {
                    (c as char).to_digit(16).ok_or_else(|| {
                        format!("`{f}`: character {at} ({:?}) is not a hex digit", c as char)
                    })
                };
                out.push(serde_json::Value::from(
                    d(pair[0], 2 * i)? * 16 + d(pair[1], 2 * i + 1)?,
                ));
            }
            m.insert((*f).to_owned(), serde_json::Value::Array(out));
        }
    }
    Ok(())
}

/// The registry entry.
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec {
    name: "cbtrack",
    title: "CBTK v1",
    schema: "cbtrack_v1",
    detect: |b| b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b)),
    decode_raw: |b| CbtrackV1::decode(b).map(|_| ()),
    decode_traced: |b| {
        let (r, t) = CbtrackV1::decode_traced(b);
        (r.map(|_| ()), t)
    },
    decode_full: decode_all,
    reencode: |b| {
        let raw = CbtrackV1::decode(b).map_err(|e| e.to_string())?;
        raw.encode().map_err(|e| e.to_string())
    },
    to_json: |b| {
        let raw = CbtrackV1::decode(b).map_err(|e| e.to_string())?;
        let mut v = serde_json::to_value(&raw).map_err(|e| e.to_string())?;
        bytes_to_hex(&mut v);
        Ok(v)
    },
    from_json: |v| {
        let mut v = v.clone();
        hex_to_bytes(&mut v)?;
        let raw: CbtrackV1 = serde_json::from_value(v).map_err(|e| e.to_string())?;
        raw.encode().map_err(|e| e.to_string())
    },
    samples: || {
        vec![
            ("worked_example.cbtrack".into(), worked_example_file()),
            ("small_match.cbtrack".into(), matchgen::small_sample_file()),
        ]
    },
};
