//! Golden tests of the generator's diagnostics: every `bad/<name>.ksy` is a schema with one
//! mistake, and `bad/<name>.stderr` is exactly what the generator reports for it (the output
//! of `statepack_codegen::render`, with the schema named `codegen/tests/bad/<name>.ksy`).
//!
//! After a deliberate change to a message, rewrite the goldens with
//!
//! ```text
//! STATEPACK_BLESS=1 cargo test -p statepack-codegen --test bad_schemas
//! ```
//!
//! and review the diff of `codegen/tests/bad/*.stderr` before committing it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn bad_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("bad")
}

/// File stems in `bad/` with the given extension, sorted.
fn stems(ext: &str) -> BTreeSet<String> {
    std::fs::read_dir(bad_dir())
        .expect("codegen/tests/bad exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some(ext))
        .filter_map(|p| p.file_stem().and_then(|s| s.to_str()).map(str::to_owned))
        .collect()
}

fn blessing() -> bool {
    std::env::var_os("STATEPACK_BLESS").is_some_and(|v| v == "1")
}

/// What the generator prints for `bad/<stem>.ksy`, or a description of why it printed nothing.
fn rendered(stem: &str) -> Result<String, String> {
    let path = bad_dir().join(format!("{stem}.ksy"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read: {e}"))?;
    let display = format!("codegen/tests/bad/{stem}.ksy");
    // Imports are found next to the schema, and shown relative to the repository as the
    // schema itself is: the tests of this file run from the repository's root.
    static ROOT: std::sync::Once = std::sync::Once::new();
    ROOT.call_once(|| {
        std::env::set_current_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join(".."))
            .expect("the repository root")
    });
    match statepack_codegen::generate_at(&text, &display, Path::new(&display)) {
        Ok(_) => Err("the generator accepted this schema".into()),
        Err(diags) if diags.is_empty() => Err("the generator failed with no diagnostic".into()),
        Err(diags) => Ok(statepack_codegen::render(&diags)),
    }
}

#[test]
fn every_bad_schema_matches_its_golden() {
    let stems = stems("ksy");
    assert!(
        !stems.is_empty(),
        "no bad schemas in {}",
        bad_dir().display()
    );
    let mut failures = Vec::new();
    for stem in &stems {
        let got = match rendered(stem) {
            Ok(g) => g,
            Err(why) => {
                failures.push(format!("{stem}.ksy: {why}"));
                continue;
            }
        };
        let golden = bad_dir().join(format!("{stem}.stderr"));
        if blessing() {
            std::fs::write(&golden, &got).expect("golden is writable");
            continue;
        }
        match std::fs::read_to_string(&golden) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{stem}.ksy: output differs from {stem}.stderr\n--- expected\n{want}--- got\n{got}"
            )),
            Err(e) => failures.push(format!("{stem}.stderr: cannot read ({e})")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad schemas failed (rewrite goldens with STATEPACK_BLESS=1 after checking):\n\n{}",
        failures.len(),
        stems.len(),
        failures.join("\n\n")
    );
}

#[test]
fn every_schema_has_a_golden_and_every_golden_a_schema() {
    let ksy = stems("ksy");
    let stderr = stems("stderr");
    assert!(!ksy.is_empty(), "no bad schemas in {}", bad_dir().display());
    let no_golden: Vec<_> = ksy.difference(&stderr).collect();
    let no_schema: Vec<_> = stderr.difference(&ksy).collect();
    assert!(
        no_golden.is_empty(),
        "schemas without a .stderr golden: {no_golden:?}"
    );
    assert!(
        no_schema.is_empty(),
        "goldens without a .ksy schema: {no_schema:?}"
    );
}

#[test]
fn every_golden_is_a_distinct_diagnostic() {
    // One file per check: two goldens with the same first message test the same thing twice.
    let mut seen: Vec<(String, String)> = Vec::new();
    for stem in stems("stderr") {
        let text = std::fs::read_to_string(bad_dir().join(format!("{stem}.stderr"))).unwrap();
        let first = text
            .lines()
            .next()
            .and_then(|l| l.split_once(": error: "))
            .map(|(_, m)| m.to_owned())
            .unwrap_or_else(|| panic!("{stem}.stderr does not start with a diagnostic"));
        if let Some((other, _)) = seen.iter().find(|(_, m)| *m == first) {
            panic!("{stem}.stderr and {other}.stderr report the same first error: {first}");
        }
        seen.push((stem, first));
    }
}

/// The check stage alone (`load_checked`, which runs no backend: what the interpreter and the
/// CLI's `--schema` load with) refuses every bad schema with exactly the generator's golden
/// diagnostics.
#[test]
fn the_check_stage_refuses_every_bad_schema_as_the_generator_does() {
    let stems = stems("ksy");
    assert!(
        !stems.is_empty(),
        "no bad schemas in {}",
        bad_dir().display()
    );
    // Run from the repository's root, as `rendered` does, so that imports resolve alike.
    let _ = rendered(stems.iter().next().unwrap());
    let mut failures = Vec::new();
    for stem in &stems {
        let display = format!("codegen/tests/bad/{stem}.ksy");
        let text = std::fs::read_to_string(bad_dir().join(format!("{stem}.ksy"))).unwrap();
        let got = match statepack_codegen::load_checked(&text, &display, Path::new(&display), &[]) {
            Ok(_) => {
                failures.push(format!("{stem}.ksy: the check stage accepted it"));
                continue;
            }
            Err(d) => statepack_codegen::render(&d),
        };
        let want = std::fs::read_to_string(bad_dir().join(format!("{stem}.stderr"))).unwrap();
        if got != want {
            failures.push(format!(
                "{stem}.ksy: the check stage differs from {stem}.stderr\n--- expected\n{want}--- got\n{got}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad schemas are refused otherwise by the check stage:\n\n{}",
        failures.len(),
        stems.len(),
        failures.join("\n\n")
    );
}
