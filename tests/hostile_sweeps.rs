//! Truncation and single-byte mutation sweeps over every format in
//! [`statepack::formats::FORMATS`]: every file of its `samples()` and the files its writers
//! make from the real fixtures (`tests/hostile_formats/mod.rs`) goes through `decode_raw` and
//! `decode_full`, cut at every length and with every byte changed to 0x00, 0xFF, b ^ 0x01,
//! b ^ 0x80 and b + 1.
//!
//! Every outcome must be `Ok` or an error that names where it is: the Display reads
//! `<path> (byte offset <n>): ...` with the error's own path and offset, the offset lies
//! inside the input, the path starts with a field name, and only trailing bytes (an error
//! about the file as a whole) have the empty path `<root>`. A raw decode that succeeds must
//! re-encode to the same bytes, and a full decode never succeeds where the raw one fails.
//! No input may panic: each one runs under `catch_unwind`, and a panic fails the test with a
//! description of the input, which is also written to a file under `CARGO_TARGET_TMPDIR`.
//!
//! Sweeps are quadratic in the file size (each cut or change is decoded from the start), so
//! files up to [`FULL_SWEEP_MAX_LEN`] bytes are swept at every position (for SNAP: the spec
//! example, the every-frame-shape file and the two cuts of the CMU walk), and larger ones (the
//! study-walk demo file, 81 962 bytes) at every position of their first and last [`EDGE`]
//! bytes and at a prime stride in between, about [`STRIDED_POSITIONS`] positions in all. A
//! prime stride moves the position within the repeated records from one step to the next,
//! instead of hitting the same field of each.
//!
//! CBTK's structure events, read one chunk at a time, are compared with its root type's over
//! its bombs, chunks made to reach each reading of a column, its inputs and a cut and a
//! byte change at each swept position of them.

mod hostile_formats;

use hostile_formats::{inputs, plug};
use statepack::formats::{FormatSpec, FORMATS};
use statepack_runtime::io::{DecodeError, DecodeErrorKind, PathSeg};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::Instant;

/// Files up to this size are swept at every position.
const FULL_SWEEP_MAX_LEN: usize = 8 * 1024;
/// Positions swept in a larger file, about.
const STRIDED_POSITIONS: usize = 400;
/// Positions at the start and the end of a larger file that are all swept.
const EDGE: usize = 64;

/// The positions (prefix lengths, or bytes to change) swept in a file of `len` bytes.
fn positions(len: usize) -> Vec<usize> {
    if len <= FULL_SWEEP_MAX_LEN {
        return (0..len).collect();
    }
    let inner = len - 2 * EDGE;
    let mut stride = inner.div_ceil(STRIDED_POSITIONS - 2 * EDGE).max(2);
    while !is_prime(stride) {
        stride += 1;
    }
    (0..EDGE)
        .chain((EDGE..len - EDGE).step_by(stride))
        .chain(len - EDGE..len)
        .collect()
}

fn is_prime(n: usize) -> bool {
    n >= 2
        && (2..)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
}

/// The values a byte `b` is changed to (never `b` itself).
fn mutations(b: u8) -> Vec<u8> {
    let mut v = vec![0x00, 0xFF, b ^ 0x01, b ^ 0x80, b.wrapping_add(1)];
    v.sort_unstable();
    v.dedup();
    v.retain(|&m| m != b);
    v
}

/// Checks that a decode error names a field path and a byte offset inside the input.
fn check_error(e: &DecodeError, input: &[u8]) -> Result<(), String> {
    let shown = e.to_string();
    let head = format!("{} (byte offset {}): ", e.path, e.offset);
    if !shown.starts_with(&head) {
        return Err(format!(
            "error display `{shown}` does not start with `{head}`"
        ));
    }
    if e.offset > input.len() as u64 {
        return Err(format!("offset past the end of the input: {shown}"));
    }
    match e.path.segments().next() {
        None if !matches!(e.kind, DecodeErrorKind::TrailingBytes { .. }) => {
            Err(format!("error with no field path: {shown}"))
        }
        Some(PathSeg::Index(_)) => Err(format!("path does not start with a field: {shown}")),
        _ => Ok(()),
    }
}

/// What decoding one input gave.
#[derive(Debug, Clone)]
struct Outcome {
    raw: Result<(), DecodeError>,
    full_ok: bool,
}

/// Decodes `input` both ways and checks the invariants; `Err` describes a broken one.
fn run_one(f: &FormatSpec, input: &[u8]) -> Result<Outcome, String> {
    let raw = (f.decode_raw)(input);
    let full = (f.decode_full)(input);
    match &raw {
        Ok(()) => match (f.reencode)(input) {
            Ok(again) if again == input => {}
            Ok(again) => {
                return Err(format!(
                    "decodes but re-encodes to different bytes ({} bytes, first difference at {})",
                    again.len(),
                    again
                        .iter()
                        .zip(input)
                        .position(|(a, b)| a != b)
                        .unwrap_or(again.len().min(input.len()))
                ))
            }
            Err(e) => return Err(format!("decodes but does not re-encode: {e}")),
        },
        Err(e) => {
            check_error(e, input).map_err(|m| format!("decode_raw: {m}"))?;
            if full.is_ok() {
                return Err(format!("decode_full accepts what decode_raw refuses: {e}"));
            }
        }
    }
    if let Err(e) = &full {
        check_error(e, input).map_err(|m| format!("decode_full: {m}"))?;
    }
    Ok(Outcome {
        raw,
        full_ok: full.is_ok(),
    })
}

/// [`run_one`] under `catch_unwind`; any failure or panic fails the test with the input.
fn guarded(f: &FormatSpec, what: &dyn Fn() -> String, input: &[u8]) -> Outcome {
    let message = match catch_unwind(AssertUnwindSafe(|| run_one(f, input))) {
        Ok(Ok(outcome)) => return outcome,
        Ok(Err(m)) => m,
        Err(panic) => {
            let text = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_default();
            format!("PANIC: {text}")
        }
    };
    fail(f, &what(), input, &message)
}

/// Fails the test, naming the input and writing it to a file.
fn fail(f: &FormatSpec, what: &str, input: &[u8], message: &str) -> ! {
    let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "hostile-{}-{}.bin",
        f.name,
        what.replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    ));
    let saved = match std::fs::write(&file, input) {
        Ok(()) => format!("written to {}", file.display()),
        Err(e) => format!("not saved: {e}"),
    };
    let hex = if input.len() <= 256 {
        format!("\n{}", statepack_runtime::io::show_bytes(input))
    } else {
        String::new()
    };
    panic!(
        "{}: {what}: {message}\ninput of {} bytes {saved}{hex}",
        f.title,
        input.len()
    )
}

#[test]
fn every_format_has_samples_that_decode() {
    for f in FORMATS {
        let files = inputs(f);
        assert!(!(f.samples)().is_empty(), "{}: no samples", f.title);
        for (name, bytes) in &files {
            (f.decode_full)(bytes).unwrap_or_else(|e| panic!("{}: {name}: {e}", f.title));
        }
    }
}

#[test]
fn every_prefix_is_ok_or_a_located_error() {
    for f in FORMATS {
        let strict = plug(f).prefixes_fail;
        for (name, bytes) in inputs(f) {
            let start = Instant::now();
            let lens = positions(bytes.len());
            for &len in &lens {
                let cut = &bytes[..len];
                let what = || format!("{name} cut to {len} bytes");
                let out = guarded(f, &what, cut);
                if strict {
                    match &out.raw {
                        Err(e)
                            if matches!(
                                e.kind,
                                DecodeErrorKind::UnexpectedEof { .. }
                                    | DecodeErrorKind::CountTooLarge { .. }
                            ) => {}
                        other => fail(
                            f,
                            &what(),
                            cut,
                            &format!("expected an end-of-input or count error, got {other:?}"),
                        ),
                    }
                }
            }
            eprintln!(
                "{}: {name} ({} bytes): {} prefixes in {:.2?}",
                f.title,
                bytes.len(),
                lens.len(),
                start.elapsed()
            );
        }
    }
}

/// Changes every swept byte of the inputs whose name starts with `source` (`sample` or
/// `fixture`) to each of its [`mutations`].
fn change_sweep(source: &str) {
    for f in FORMATS {
        for (name, bytes) in inputs(f) {
            if !name.starts_with(source) {
                continue;
            }
            let start = Instant::now();
            let (mut cases, mut raw_errors, mut full_errors) = (0usize, 0usize, 0usize);
            let mut m = bytes.clone();
            for pos in positions(bytes.len()) {
                let orig = bytes[pos];
                for v in mutations(orig) {
                    m[pos] = v;
                    let what =
                        || format!("{name} with byte {pos} changed from {orig:#04x} to {v:#04x}");
                    let out = guarded(f, &what, &m);
                    cases += 1;
                    raw_errors += usize::from(out.raw.is_err());
                    full_errors += usize::from(!out.full_ok);
                }
                m[pos] = orig;
            }
            eprintln!(
                "{}: {name} ({} bytes): {cases} changes, {raw_errors} refused raw, \
                 {full_errors} refused in full, in {:.2?}",
                f.title,
                bytes.len(),
                start.elapsed()
            );
            // The sweep reaches the checks: some changes are refused, some are not.
            assert!(raw_errors > 0 && full_errors < cases, "{name}");
        }
    }
}

#[test]
fn every_single_byte_change_of_the_samples_is_ok_or_a_located_error() {
    change_sweep("sample");
}

#[test]
fn every_single_byte_change_of_the_fixture_files_is_ok_or_a_located_error() {
    change_sweep("fixture");
}

/// The checks refuse errors that do not say where they are.
#[test]
fn the_error_checks_refuse_unlocated_errors() {
    let input = [0u8; 4];
    let eof = || DecodeErrorKind::UnexpectedEof {
        needed: 1,
        available: 0,
    };
    assert!(check_error(&DecodeError::new(4, eof()).in_field("a"), &input).is_ok());
    let trailing = DecodeErrorKind::TrailingBytes { count: 1 };
    assert!(check_error(&DecodeError::new(3, trailing), &input).is_ok());
    // Past the end, no path, a path that starts with an index.
    assert!(check_error(&DecodeError::new(5, eof()).in_field("a"), &input).is_err());
    assert!(check_error(&DecodeError::new(1, eof()), &input).is_err());
    assert!(check_error(&DecodeError::new(1, eof()).in_index(0), &input).is_err());
}

/// The positions of a larger file cover its ends and a prime stride; smaller files are
/// covered in full.
#[test]
fn sweep_positions_cover_the_file() {
    assert_eq!(positions(100), (0..100).collect::<Vec<_>>());
    let p = positions(50_000);
    assert!(p.windows(2).all(|w| w[0] < w[1]));
    assert!(p.starts_with(&(0..EDGE).collect::<Vec<_>>()));
    assert!(p.ends_with(&(50_000 - EDGE..50_000).collect::<Vec<_>>()));
    let stride = p[EDGE + 1] - p[EDGE];
    assert!(is_prime(stride) && stride > 21, "{stride}");
    assert!(p.len() <= STRIDED_POSITIONS + 2, "{}", p.len());
    assert_eq!(mutations(0x00), vec![0x01, 0x80, 0xFF]);
    assert_eq!(mutations(0xFF), vec![0x00, 0x7F, 0xFE]);
    assert_eq!(mutations(0x10), vec![0x00, 0x11, 0x90, 0xFF]);
}

/// SNAP: cuts of the demo file name the field where the input ends.
#[test]
fn snap_cuts_of_the_demo_file_name_the_field_where_the_input_ends() {
    use statepack::formats::snap::{self, SnapError, SnapV13};
    let (_, b) = snap::sample_files()
        .into_iter()
        .find(|(n, _)| n == "study-walk")
        .expect("the demo file is a sample");
    let err = |len: usize| match snap::read(&b[..len]) {
        Err(SnapError::Decode(e)) => e,
        other => panic!("cut to {len} bytes: expected a decode error, got {other:?}"),
    };
    let at = |len: usize| err(len).path.to_string();
    assert_eq!(at(0), "version");
    assert_eq!(at(8), "num_recordings");
    assert_eq!(at(9), "recordings");
    let raw = SnapV13::decode(&b).unwrap();
    let last = raw.recordings.len() - 1;
    let last_frame = raw.recordings[last].frames.len() - 1;
    assert!(at(b.len() - 1).starts_with(&format!("recordings[{last}].frames[{last_frame}].")));
    // Cut just after the last recording's first frame, its stated frame count no longer
    // fits the bytes left.
    let frames_at = 9
        + raw.recordings[..last]
            .iter()
            .map(|r| r.encoded_len())
            .sum::<usize>()
        + 7
        + raw.recordings[last].map_name.len();
    let e = err(frames_at + 21);
    assert_eq!(e.path.to_string(), format!("recordings[{last}].frames"));
    assert_eq!(e.offset, frames_at as u64);
    assert!(
        matches!(e.kind, DecodeErrorKind::CountTooLarge { .. }),
        "{e}"
    );
}

/// Feeds one event to `h`: every field of it, a float by its bits (so -0.0 and NaN payloads
/// count), without formatting it.
fn hash_event(ev: &statepack::formats::events::TraceEvent, h: &mut impl std::hash::Hasher) {
    use statepack::formats::events::TraceEvent;
    use statepack_runtime::io::TraceValue;
    use std::hash::Hash;
    match ev {
        TraceEvent::Enter { seg, offset, bit } => {
            0u8.hash(h);
            match seg {
                PathSeg::Field(f) => (0u8, f).hash(h),
                PathSeg::Index(i) => (1u8, i).hash(h),
            }
            (offset, bit).hash(h);
        }
        TraceEvent::Leave { offset, bit, value } => {
            (1u8, offset, bit).hash(h);
            match value {
                None => 0u8.hash(h),
                Some(TraceValue::Int(v)) => (1u8, v).hash(h),
                Some(TraceValue::Bool(v)) => (2u8, v).hash(h),
                Some(TraceValue::F32(v)) => (3u8, v.to_bits()).hash(h),
                Some(TraceValue::F64(v)) => (4u8, v.to_bits()).hash(h),
                Some(TraceValue::Str(v)) => (5u8, v).hash(h),
                Some(TraceValue::Bytes(v)) => (6u8, v).hash(h),
                Some(TraceValue::Enum { name, value }) => (7u8, name, value).hash(h),
                Some(TraceValue::Coded {
                    value,
                    code,
                    encoding,
                }) => (8u8, value, code, encoding).hash(h),
            }
        }
    }
}

/// What a decode sent and gave: its events (kept, or as a digest), their number, the
/// result's text and where reading stopped.
#[derive(Debug, PartialEq)]
struct Events {
    kept: Vec<statepack::formats::events::TraceEvent>,
    digest: u64,
    count: usize,
    result: String,
    end: u64,
}

type Decode<'a> =
    &'a dyn Fn(statepack::formats::events::SinkTracer<'_>) -> (Result<(), DecodeError>, u64);

/// The events `decode` sends. With `digest`, they are kept as a hash of every field of each
/// ([`hash_event`]) and their number (for the bombs, whose millions of events would not fit
/// twice); without, as they are.
fn events_of(digest: bool, decode: Decode<'_>) -> Events {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let (mut count, mut kept) = (0usize, Vec::new());
    let mut sink = |ev: statepack::formats::events::TraceEvent| {
        if digest {
            hash_event(&ev, &mut h);
        } else {
            kept.push(ev);
        }
        count += 1;
    };
    let (res, end) = decode(statepack::formats::events::SinkTracer::new(&mut sink, true));
    Events {
        kept,
        digest: h.finish(),
        count,
        result: result_text(res),
        end,
    }
}

fn result_text(res: Result<(), DecodeError>) -> String {
    match res {
        Ok(()) => "ok".to_string(),
        Err(e) => e.to_string(),
    }
}

/// Whether `decode` sends exactly the events `want` kept, in order, with the same result and
/// end: each event is compared as it comes, none is kept. Gives the first difference.
fn same_events(want: &Events, decode: Decode<'_>) -> Result<(), String> {
    let mut i = 0usize;
    let mut first: Option<String> = None;
    let mut sink = |ev: statepack::formats::events::TraceEvent| {
        if first.is_none() && want.kept.get(i) != Some(&ev) {
            first = Some(format!(
                "event {i}: {ev:?}, the root type's: {:?}",
                want.kept.get(i)
            ));
        }
        i += 1;
    };
    let (res, end) = decode(statepack::formats::events::SinkTracer::new(&mut sink, true));
    if let Some(d) = first {
        return Err(d);
    }
    let res = result_text(res);
    if i != want.count || res != want.result || end != want.end {
        return Err(format!(
            "{i} events, {res}, end {end}; the root type's: {} events, {}, end {}",
            want.count, want.result, want.end
        ));
    }
    Ok(())
}

/// CBTK's structure events, read one chunk at a time (`cbtrack::decode_events`, what
/// `inspect`, `decode --offsets` and `view` print), are the schema's root type's events, with
/// the same values, offsets, result and end, on the samples, the fixture files, the
/// allocation bombs and cuts and single-byte changes of the samples and fixture files.
#[test]
fn cbtrack_events_read_one_chunk_at_a_time_are_the_root_types() {
    use statepack::formats::cbtrack::{self, CbtrackV1};
    use statepack_runtime::format::RootType;
    let f = FORMATS.iter().find(|f| f.name == "cbtrack").unwrap();
    let root = |digest: bool, b: &[u8]| {
        events_of(digest, &|t| {
            if let Err(e) = cbtrack::check_raw_limits(b) {
                let at = e.offset;
                return (Err(e), at);
            }
            let (r, end) = CbtrackV1::decode_root_with(b, t);
            (r.map(|_| ()), end)
        })
    };
    let check = |what: &dyn Fn() -> String, b: &[u8]| {
        let digest = b.len() > 64 << 10 || what().starts_with("bomb");
        let want = root(digest, b);
        let ours: Decode<'_> = &|t| cbtrack::decode_events(b, t);
        if digest {
            let got = events_of(true, ours);
            assert!(got == want, "{}: the events differ", what());
        } else if let Err(d) = same_events(&want, ours) {
            panic!("{}: the events differ: {d}", what());
        }
        want.result == "ok"
    };
    let (mut files, mut ok) = (0usize, 0usize);
    let t0 = Instant::now();
    for (name, bytes) in (plug(f).bombs)() {
        files += 1;
        ok += usize::from(check(&|| format!("bomb {name}"), &bytes));
    }
    // Each reading of a column (every type code, each `valid` rule broken, offsets and
    // counts past the chunk): the errors must be the same, word for word.
    eprintln!("bombs (made and compared): {:.2?}", t0.elapsed());
    let mut errors = 0;
    for (name, bytes) in hostile_formats::cbtrack::column_cases() {
        files += 1;
        let read = check(&|| name.clone(), &bytes);
        ok += usize::from(read);
        errors += usize::from(!read);
    }
    assert!(errors >= 8, "{errors} column cases refused");
    for (name, bytes) in inputs(f) {
        let t0 = Instant::now();
        let mut m = bytes.clone();
        for pos in positions(bytes.len()) {
            files += 2;
            ok += usize::from(check(
                &|| format!("{name} cut to {pos} bytes"),
                &bytes[..pos],
            ));
            m[pos] ^= 0x80;
            ok += usize::from(check(&|| format!("{name} with byte {pos} ^ 0x80"), &m));
            m[pos] = bytes[pos];
        }
        files += 1;
        ok += usize::from(check(&|| name.clone(), &bytes));
        eprintln!("{name}, its cuts and changes: {:.2?}", t0.elapsed());
    }
    eprintln!("{files} files, {ok} of them read");
    assert!(ok > 10 && ok < files, "{ok} of {files} read");
}
