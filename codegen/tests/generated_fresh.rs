//! The checked-in copy under `generated/` must be exactly what the generator makes of
//! `schema/` today: one `generated/<stem>.rs` per `schema/<stem>.ksy`, byte for byte.
//!
//! This is also the generator's golden test per schema. Every golden compiles: `build.rs`
//! generates the same text from the same schemas into `OUT_DIR`, and the root crate compiles
//! that, so a golden that matches here is code the workspace build has compiled.
//!
//! (It lives in the codegen crate because the root package has the generator only as a
//! build-dependency.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

const REFRESH: &str = "cargo run -p statepack-codegen -- --interop schema generated";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn stems(dir: &str, ext: &str) -> BTreeSet<String> {
    std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("cannot read {dir}/: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some(ext))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
        .collect()
}

#[test]
fn generated_matches_the_schemas() {
    let schemas = stems("schema", "ksy");
    assert!(!schemas.is_empty(), "no schemas in schema/");
    let mut stale = Vec::new();
    for stem in &schemas {
        let display = format!("schema/{stem}.ksy");
        let text = std::fs::read_to_string(root().join(&display)).unwrap();
        // As build.rs makes them with the root crate's default features (binrw, deku, bitvec).
        let fresh = statepack_codegen::generate_with(
            &text,
            &display,
            std::path::Path::new(&display),
            &statepack_codegen::Options::all(),
        )
        .unwrap_or_else(|d| {
            panic!(
                "{display} does not generate:\n{}",
                statepack_codegen::render(&d)
            )
        });
        let golden = format!("generated/{stem}.rs");
        match std::fs::read_to_string(root().join(&golden)) {
            Ok(old) if old == fresh => {}
            Ok(old) => {
                let line = old
                    .lines()
                    .zip(fresh.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| old.lines().count().min(fresh.lines().count()))
                    + 1;
                stale.push(format!("{golden} differs from {display} from line {line}"));
            }
            Err(_) => stale.push(format!("{golden} is missing (schema {display})")),
        }
    }
    let orphans: Vec<String> = stems("generated", "rs")
        .difference(&schemas)
        .map(|s| format!("generated/{s}.rs has no schema/{s}.ksy; delete it"))
        .collect();
    stale.extend(orphans);
    assert!(
        stale.is_empty(),
        "generated/ is stale:\n  {}\nrefresh it with:\n  {REFRESH}",
        stale.join("\n  ")
    );
}
