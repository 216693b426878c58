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
    match statepack_codegen::generate_dir("schema".as_ref(), &out, "schema") {
        Ok(files) => {
            // One module per schema, so a new schema file needs no Rust edit to appear.
            let mut index = String::new();
            for f in files {
                let stem = f.trim_end_matches(".rs");
                index.push_str(&format!(
                    "#[doc = \"Raw types of `schema/{stem}.ksy`.\"]\n\
                     #[allow(clippy::all, unused_parens, unused_braces)]\n\
                     pub mod {stem} {{ include!(concat!(env!(\"OUT_DIR\"), \"/{f}\")); }}\n"
                ));
            }
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
}
