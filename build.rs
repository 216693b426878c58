//! Regenerates the Rust for every schema in `schema/` into `OUT_DIR` at `cargo build`.
//! `src/generated.rs` includes the result; `generated/` holds a checked-in copy for review
//! (a test fails when it is stale; refresh it with
//! `cargo run -p statepack-codegen -- schema generated`, which emits every library impl, as
//! the default features do).
//!
//! The test-only schemas in `tests/schemas/` are generated too, into `OUT_DIR/test_schemas/`
//! with an index `mod.rs`. The library never includes them; `tests/schema_features.rs` does,
//! so they compile only with that test. A test schema the generator refuses does not stop
//! the library build: its diagnostics become a `compile_error!` in the index, so the test
//! that includes it fails to compile with the generator's message.
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    rerun_if_changed("schema");
    rerun_if_changed("tests/schemas");
    // The crate's features `binrw`, `deku` and `bitvec` (on by default) decide which library
    // impls the format types get; cargo reruns this script when the features change.
    let feature = |name: &str| std::env::var_os(format!("CARGO_FEATURE_{name}")).is_some();
    let opts = statepack_codegen::Options {
        binrw: feature("BINRW"),
        deku: feature("DEKU"),
        bitvec: feature("BITVEC"),
        ..Default::default()
    };
    match statepack_codegen::generate_dir_with("schema".as_ref(), &out, "schema", &opts) {
        Ok(files) => {
            // One module per schema, so a new schema file needs no Rust edit to appear.
            let index = module_index(&files, "", "Raw types of `schema/{stem}.ksy`.");
            std::fs::write(out.join("mod.rs"), index).expect("OUT_DIR is writable");
        }
        Err(diags) => {
            // Each diagnostic goes to the build output; then the build stops.
            for line in diags.lines() {
                println!("cargo:warning={line}");
            }
            eprintln!("{diags}");
            std::process::exit(1);
        }
    }
    test_schemas(&out.join("test_schemas"), &opts);
}

/// Asks cargo to rerun this script when `dir` or any file in it changes.
fn rerun_if_changed(dir: &str) {
    println!("cargo:rerun-if-changed={dir}");
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            println!("cargo:rerun-if-changed={}", e.path().display());
        }
    }
}

/// The index of generated modules: `pub mod <stem>` including `OUT_DIR/<sub><stem>.rs`.
/// `doc` is the module doc, with `{stem}` replaced by the schema's file stem.
fn module_index(files: &[String], sub: &str, doc: &str) -> String {
    let mut index = String::new();
    for f in files {
        let stem = f.trim_end_matches(".rs");
        let doc = doc.replace("{stem}", stem);
        index.push_str(&format!(
            "#[doc = \"{doc}\"]\n\
             #[allow(clippy::all, unused_parens, unused_braces)]\n\
             pub mod {stem} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{sub}{f}\")); }}\n"
        ));
    }
    index
}

/// Generates `tests/schemas/*.ksy` into `dir` with its own `mod.rs`.
fn test_schemas(dir: &Path, opts: &statepack_codegen::Options) {
    std::fs::create_dir_all(dir).expect("OUT_DIR is writable");
    let index = match statepack_codegen::generate_dir_with(
        "tests/schemas".as_ref(),
        dir,
        "tests/schemas",
        opts,
    ) {
        Ok(files) => module_index(
            &files,
            "test_schemas/",
            "Raw types of the test schema `tests/schemas/{stem}.ksy`.",
        ),
        Err(diags) => {
            for line in diags.lines() {
                println!("cargo:warning={line}");
            }
            format!("compile_error!({diags:?});\n")
        }
    };
    std::fs::write(dir.join("mod.rs"), index).expect("OUT_DIR is writable");
}
