//! Fuzzing support (`fuzz/`, cargo-fuzz):
//!
//! - inputs the fuzz targets once failed on, inline, each checked against the same properties
//!   the targets check (no panic; what decodes re-encodes to the same bytes; what fully
//!   decodes survives the JSON round trip);
//! - the same properties on every format's sample files, the seeds of the fuzz corpora;
//! - the seeding step itself (ignored by default, as it writes files):
//!   `cargo test --test fuzz_regressions -- --ignored --exact seed_fuzz_corpora` writes every
//!   format's samples into `fuzz/corpus/decode_raw/` and `fuzz/corpus/decode_full/`, and the
//!   schemas (`schema/`, `tests/schemas/`, `codegen/tests/bad/`) into `fuzz/corpus/generate/`.
//!   `STATEPACK_FUZZ_CORPUS=<dir>` writes under another folder.

use statepack::formats::{FormatSpec, FORMATS};
use std::path::{Path, PathBuf};

/// The properties of the `decode_raw` and `decode_full` fuzz targets, for one input.
fn check_decoders(data: &[u8]) {
    for f in FORMATS {
        check_raw(f, data);
        check_full(f, data);
    }
}

fn check_raw(f: &FormatSpec, data: &[u8]) {
    let raw = (f.decode_raw)(data);
    let (traced, _tree) = (f.decode_traced)(data);
    assert_eq!(
        raw, traced,
        "{}: decode_raw and decode_traced disagree",
        f.name
    );
    match raw {
        Ok(()) => {
            let bytes = (f.reencode)(data)
                .unwrap_or_else(|e| panic!("{}: decoded input fails to re-encode: {e}", f.name));
            assert_eq!(bytes, data, "{}: re-encoding changed the bytes", f.name);
        }
        Err(_) => assert!((f.reencode)(data).is_err(), "{}", f.name),
    }
}

fn check_full(f: &FormatSpec, data: &[u8]) {
    if (f.decode_full)(data).is_err() {
        return;
    }
    assert_eq!((f.decode_raw)(data), Ok(()), "{}", f.name);
    let json = (f.to_json)(data).unwrap_or_else(|e| panic!("{}: no JSON view: {e}", f.name));
    let bytes = (f.from_json)(&json)
        .unwrap_or_else(|e| panic!("{}: the JSON view does not encode: {e}", f.name));
    assert_eq!(
        bytes, data,
        "{}: the JSON round trip changed the bytes",
        f.name
    );
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
    println!(
        "seeded {} with {count} sample file(s) per decoder target and {} schema(s)",
        root.display(),
        schemas.len()
    );
}
