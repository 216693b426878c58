//! Regenerates the Rust for every schema in `schema/` into `OUT_DIR` at `cargo build`.
//! `src/generated.rs` includes the result; `generated/` holds a checked-in copy for review
//! (a test fails when it is stale; refresh it with
//! `cargo run -p statepack-codegen -- --interop schema generated`, which emits every library impl, as
//! the default features do).
//!
//! The test-only schemas in `tests/schemas/` are generated too, into `OUT_DIR/test_schemas/`
//! with an index `mod.rs`. The library never includes them; `tests/schema_features.rs` does,
//! so they compile only with that test. A test schema the generator refuses does not stop
//! the library build: its diagnostics become a `compile_error!` in the index, so the test
//! that includes it fails to compile with the generator's message.
//!
//! Both go through `statepack_codegen::Builder`, the build API the README describes for any
//! crate: it prints `cargo:rerun-if-changed` for every schema and import it reads and
//! rewrites a generated file only when its text changed.
use statepack_codegen::Builder;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=build.rs");
    // The crate's features `binrw`, `deku` and `bitvec` (on by default) decide which library
    // impls the format types get; cargo reruns this script when the features change.
    let feature = |name: &str| std::env::var_os(format!("CARGO_FEATURE_{name}")).is_some();
    let builder = Builder::new()
        .binrw(feature("BINRW"))
        .deku(feature("DEKU"))
        .bitvec(feature("BITVEC"));
    match builder.clone().compile(&["schema"]) {
        Ok(generated) => {
            // One module per schema, so a new schema file needs no Rust edit to appear.
            let stems: Vec<String> = generated.into_iter().map(|g| g.stem).collect();
            let index = module_index(&stems, "", "Raw types of `schema/{stem}.ksy`.");
            statepack_codegen::write_if_changed(&out.join("mod.rs"), &index)
                .expect("OUT_DIR is writable");
        }
        Err(e) => {
            // The builder has printed each diagnostic as a cargo warning; stop the build
            // with all of them.
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    // The test schemas also get modular-bitfield views (the crate's dev-dependency
    // `modular-bitfield` compiles them; no library schema has a type that takes one).
    test_schemas(&out.join("test_schemas"), builder.modular_bitfield(true));
}

/// The index of generated modules: `pub mod <stem>` including `OUT_DIR/<sub><stem>.rs`.
/// `doc` is the module doc, with `{stem}` replaced by the schema's file stem.
fn module_index(stems: &[String], sub: &str, doc: &str) -> String {
    let mut index = String::new();
    for stem in stems {
        let doc = doc.replace("{stem}", stem);
        index.push_str(&format!(
            "#[doc = \"{doc}\"]\n\
             pub mod {stem} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{sub}{stem}.rs\")); }}\n"
        ));
    }
    index
}

/// Generates `tests/schemas/*.ksy` into `dir` with its own `mod.rs`.
fn test_schemas(dir: &Path, builder: Builder) {
    let index = match builder.out_dir(dir).compile(&["tests/schemas"]) {
        Ok(generated) => {
            let stems: Vec<String> = generated.into_iter().map(|g| g.stem).collect();
            // Each test binary uses part of these modules: the rest is dead code there.
            module_index(
                &stems,
                "test_schemas/",
                "Raw types of the test schema `tests/schemas/{stem}.ksy`.",
            )
            .replace("pub mod ", "#[allow(dead_code)]\npub mod ")
        }
        Err(e) => format!("compile_error!({:?});\n", e.to_string()),
    };
    std::fs::create_dir_all(dir).expect("OUT_DIR is writable");
    statepack_codegen::write_if_changed(&dir.join("mod.rs"), &index).expect("OUT_DIR is writable");
}
