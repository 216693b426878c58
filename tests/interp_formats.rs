//! The interpreter (`statepack_codegen::interp`, behind `--schema`) against the generated
//! readers on every sample of the six built-in formats, the real RPLY files of the fixtures
//! (`flashback-rply/*.rply`) and truncations of the samples: both must read the same dynamic
//! tree, member by member, or fail at the same byte offset.
//! Without the fixtures the fixture part prints why it skipped (it fails under `CI=true`).

use statepack::formats::FORMATS;
use statepack_runtime::io::DecodeError;
use statepack_runtime::reflect::Reflect;
use std::path::Path;

type DecodeFn = fn(&[u8]) -> Result<Box<dyn Reflect>, DecodeError>;

/// The generated module of each schema, by its file stem.
const DECODERS: &[(&str, DecodeFn)] = &[
    ("anim_clip", statepack::generated::anim_clip::reflect_decode),
    (
        "cbtrack_v1",
        statepack::generated::cbtrack_v1::reflect_decode,
    ),
    ("rply_v3", statepack::generated::rply_v3::reflect_decode),
    ("snap_v1_3", statepack::generated::snap_v1_3::reflect_decode),
    (
        "study_tracks",
        statepack::generated::study_tracks::reflect_decode,
    ),
    (
        "world_snapshot",
        statepack::generated::world_snapshot::reflect_decode,
    ),
];

fn schema(stem: &str) -> statepack_codegen::ir::Schema {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(format!("{stem}.ksy"));
    let text = std::fs::read_to_string(&path).expect("read the schema");
    let shown = format!("schema/{stem}.ksy");
    let s = statepack_codegen::load_checked(&text, &shown, &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    assert_eq!(statepack_codegen::interp::unsupported(&s), None, "{stem}");
    s
}

/// Both readers on one file: the same tree, or both an error at the same offset.
fn agree(
    stem: &str,
    s: &statepack_codegen::ir::Schema,
    name: &str,
    bytes: &[u8],
) -> Result<(), String> {
    let decode = DECODERS
        .iter()
        .find(|(n, _)| *n == stem)
        .map(|(_, f)| *f)
        .ok_or_else(|| format!("no generated module for {stem}"))?;
    match (decode(bytes), statepack_codegen::interp::decode(s, bytes)) {
        (Ok(g), Ok(i)) => statepack_codegen::interp::compare(g.as_ref(), &i)
            .map_err(|d| format!("{stem} {name}: trees differ at {d}")),
        (Err(g), Err(i)) if g.offset == i.offset => Ok(()),
        (g, i) => Err(format!(
            "{stem} {name}: generated {:?}, interpreter {:?}",
            g.err().map(|e| e.to_string()),
            i.err().map(|e| e.to_string())
        )),
    }
}

#[test]
fn interpreter_reads_every_sample_as_the_generated_code() {
    let mut checked = 0;
    let mut problems = Vec::new();
    for fmt in FORMATS {
        let s = schema(fmt.schema);
        let samples = (fmt.samples)();
        assert!(!samples.is_empty(), "{} has samples", fmt.name);
        for (name, bytes) in samples {
            checked += 1;
            if let Err(m) = agree(fmt.schema, &s, &name, &bytes) {
                problems.push(m);
            }
        }
    }
    eprintln!(
        "interpreter vs generated code: {checked} built-in samples, {} differ",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn interpreter_reads_the_real_rply_files_as_the_generated_code() {
    let Some(dir) = statepack_fixtures::fixture_for_test("flashback-rply") else {
        return;
    };
    let s = schema("rply_v3");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("list the fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rply"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .rply in {}", dir.display());
    let mut problems = Vec::new();
    for p in &files {
        let bytes = std::fs::read(p).expect("read a fixture");
        if let Err(m) = agree("rply_v3", &s, &p.display().to_string(), &bytes) {
            problems.push(m);
        }
    }
    eprintln!(
        "interpreter vs generated code: {} fixture .rply files, {} differ",
        files.len(),
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Truncations of every sample: both readers fail at the same byte, or read the same prefix.
#[test]
fn interpreter_fails_where_the_generated_code_fails() {
    let mut problems = Vec::new();
    for fmt in FORMATS {
        let s = schema(fmt.schema);
        for (name, bytes) in (fmt.samples)().into_iter().take(3) {
            let step = (bytes.len() / 24).max(1);
            for cut in (0..bytes.len()).step_by(step) {
                if let Err(m) = agree(fmt.schema, &s, &format!("{name}[..{cut}]"), &bytes[..cut]) {
                    problems.push(m);
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
