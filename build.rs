//! Regenerates the Rust for every schema in `schema/` into `OUT_DIR` at `cargo build`.
//! `src/generated.rs` includes the result; `generated/` holds a checked-in copy for review
//! (a test fails when it is stale; refresh it with
//! `cargo run -p statepack-codegen -- schema generated`).
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=schema");
    if let Ok(dir) = std::fs::read_dir("schema") {
        for e in dir.flatten() {
            println!("cargo:rerun-if-changed={}", e.path().display());
        }
    }
    if let Err(diags) = statepack_codegen::generate_dir("schema".as_ref(), &out, "schema") {
        // Each diagnostic goes to the build output as an error line; then the build stops.
        for line in diags.lines() {
            println!("cargo:warning={line}");
        }
        eprintln!("{diags}");
        std::process::exit(1);
    }
}
