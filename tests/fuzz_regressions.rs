//! Fuzzing support (`fuzz/`, cargo-fuzz):
//!
//! - inputs found by fuzzing, inline, each checked against the same properties the decoder
//!   targets check (no panic; what decodes re-encodes to the same bytes; what fully decodes
//!   survives the JSON round trip) and against the outcome expected of it. An input a target
//!   fails on is minimised (`cargo fuzz tmin`) and added here;
//! - the same properties on every format's sample files, the seeds of the fuzz corpora;
//! - the seeding step itself (ignored by default, as it writes files):
//!   `cargo test --test fuzz_regressions -- --ignored --exact seed_fuzz_corpora` writes every
//!   format's samples into `fuzz/corpus/decode_raw/` and `fuzz/corpus/decode_full/`, and the
//!   schemas (`schema/`, `tests/schemas/`, `codegen/tests/bad/`) into `fuzz/corpus/generate/`,
//!   and small inputs for every schema of `kaitai_lang` into `fuzz/corpus/kaitai_lang/`.
//!   `STATEPACK_FUZZ_CORPUS=<dir>` writes under another folder.

#[path = "../fuzz/properties.rs"]
mod properties;

use statepack::formats::FORMATS;
use statepack_runtime::io::DecodeError;
use std::path::{Path, PathBuf};

/// The properties of the `decode_raw` and `decode_full` fuzz targets, for one input.
fn check_decoders(data: &[u8]) {
    for f in FORMATS {
        properties::check_raw(f, data);
        properties::check_full(f, data);
    }
}

/// Where a decode of a fuzz input must end: accepted, or refused at this field path and byte
/// offset.
type Outcome = Option<(&'static str, u64)>;

/// Small inputs the fuzzer built from the seeds, one per way a file can end: valid files
/// with no frames, a NaN position (raw-valid, refused by the full decode), a delta first
/// frame, an unknown frame kind, a wrong total duration, a non-UTF-8 name, trailing bytes, a
/// count larger than the input and a cut inside a delta. (name, bytes, raw outcome, full
/// outcome.)
const FOUND: &[(&str, &[u8], Outcome, Outcome)] = &[
    ("no recordings", b"SNAPV1.3\x00", None, None),
    (
        "two empty recordings",
        b"SNAPV1.3\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
        None,
        None,
    ),
    (
        "map names with control bytes",
        b"SNAPV1.3\x02\x06S\x00\x01\x07\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00",
        None,
        None,
    ),
    (
        "NaN x in an absolute frame",
        b"SNAPV1.3\x01\x09Workspace\x01\x00\x00\x00\x00\x00\x04\x00\x00\x7f\xff\xff\xff\xff\xff\x1e\xc3\x58\xf8\xff\x3c\x24\xd7\xff\xff\xff\x07",
        None,
        Some(("recordings[0].frames[0].cframe", 28)),
    ),
    (
        "first frame a delta",
        b"SNAPV1.3\x01\x09Workspace\x01\x00\x00\x00\x00\x00\x01\x00\x00\x24\xf3\xe3\x3d\x2a\x07",
        None,
        Some(("recordings[0].frames[0].kind", 25)),
    ),
    (
        "unknown frame kind",
        b"SNAPV1.3\x02\x06ShapQs\x08\x00e\x00\x20\x41\x00\x00\xa0\x40\x03\x00\xfe\xff\xe6\xe6\xe6\xe6\xe6\xe6\x81\x00\x68\x00\x00\x00\x00\x00\x01\x2d",
        Some(("recordings[0].frames[1].kind", 25)),
        Some(("recordings[0].frames[1].kind", 25)),
    ),
    (
        "total duration not the sum of dt",
        b"SNAPV1.3\x07\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x2a\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x62\x00\x00\x00\x00\x01\xb5\x00\x00\x00\x00\x00\x00\x00\x00\x01\x33\x01",
        Some(("recordings[3].total_duration_ms", 39)),
        Some(("recordings[3].total_duration_ms", 39)),
    ),
    (
        "map name not UTF-8",
        b"SNAPV1.3\x01\x06ork\xff\xff\x07",
        Some(("recordings[0].map_name", 10)),
        Some(("recordings[0].map_name", 10)),
    ),
    (
        "one trailing byte",
        b"SNAPV1.3\x01\x02\x00\x00\x00\x00\x00\x00\x00\x00\x07",
        Some(("<root>", 18)),
        Some(("<root>", 18)),
    ),
    (
        "frame count larger than the input",
        b"SNAPV1.3\x02\x00\xff\xff\xff\xfc\x00\xff\xff\xff\xff\xff\x00\x00\x00",
        Some(("recordings[0].frames", 16)),
        Some(("recordings[0].frames", 16)),
    ),
    (
        "cut inside a rotation delta",
        b"SNAPV1.3\x01\x09Work'P\x09=*\x07\x00\xf8\xcd\xec\x7b\x00\x00\x00\x00\x00\x11\x00\x00\x10\x00\x01\x11\x00\x00\x04\x02\x00\x00\x00\x00\x10\x07",
        Some(("recordings[0].frames[5].rot_delta[2]", 47)),
        Some(("recordings[0].frames[5].rot_delta[2]", 47)),
    ),
];

fn assert_outcome(what: &str, name: &str, got: Result<(), DecodeError>, want: Outcome) {
    match (got, want) {
        (Ok(()), None) => {}
        (Err(e), Some((path, offset))) => {
            assert_eq!(
                (e.path.to_string().as_str(), e.offset),
                (path, offset),
                "{name}: {what}: {e}"
            );
        }
        (got, want) => panic!("{name}: {what}: got {got:?}, want {want:?}"),
    }
}

#[test]
fn inputs_found_by_fuzzing() {
    let snap = statepack::formats::by_name("snap").unwrap();
    for &(name, bytes, raw, full) in FOUND {
        assert_outcome("decode_raw", name, (snap.decode_raw)(bytes), raw);
        assert_outcome("decode_full", name, (snap.decode_full)(bytes), full);
        check_decoders(bytes);
    }
}

#[test]
fn fuzz_properties_hold_on_every_sample() {
    for f in FORMATS {
        let samples = (f.samples)();
        assert!(
            !samples.is_empty(),
            "{}: no samples to seed the fuzz corpora",
            f.name
        );
        for (name, bytes) in samples {
            assert_eq!((f.decode_full)(&bytes), Ok(()), "{}/{name}", f.name);
            check_decoders(&bytes);
        }
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The seeds of the generator target: the real schemas, the feature schemas and the bad ones.
fn schema_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["schema", "tests/schemas", "codegen/tests/bad"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "ksy"))
            .collect();
        files.sort();
        out.extend(files);
    }
    out
}

/// A corpus file name: only characters that are safe in any file system.
fn file_name(parts: &[&str]) -> String {
    parts
        .join("-")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn write_seed(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), bytes).unwrap();
}

/// Writes the seed corpora of the fuzz targets (see the module docs). Repeatable: files are
/// named after the format and sample, so a second run overwrites the same files and leaves
/// what the fuzzer added alone.
#[test]
#[ignore = "writes the fuzz seed corpora; run it by name"]
fn seed_fuzz_corpora() {
    let root = std::env::var_os("STATEPACK_FUZZ_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("fuzz/corpus"));
    let mut count = 0;
    for f in FORMATS {
        for (name, bytes) in (f.samples)() {
            for target in ["decode_raw", "decode_full"] {
                write_seed(
                    &root.join(target),
                    &file_name(&["seed", f.name, &name]),
                    &bytes,
                );
            }
            count += 1;
        }
    }
    let schemas = schema_files();
    for path in &schemas {
        let rel = path
            .strip_prefix(repo())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        write_seed(
            &root.join("generate"),
            &file_name(&["seed", &rel]),
            &std::fs::read(path).unwrap(),
        );
    }
    // kaitai_lang: the first byte picks the schema (modulo their count), so one small input
    // of zeros and one of rising bytes for each of the first 64 picks reaches every schema.
    for pick in 0u8..64 {
        let mut zeros = vec![pick];
        zeros.resize(25, 0);
        write_seed(
            &root.join("kaitai_lang"),
            &format!("seed-{pick}-zeros"),
            &zeros,
        );
        let rising: Vec<u8> = std::iter::once(pick).chain(1..=32).collect();
        write_seed(
            &root.join("kaitai_lang"),
            &format!("seed-{pick}-rising"),
            &rising,
        );
    }
    println!(
        "seeded {} with {count} sample file(s) per decoder target, {} schema(s) and 128 \
         kaitai_lang inputs",
        root.display(),
        schemas.len()
    );
}
