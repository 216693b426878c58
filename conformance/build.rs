//! Generates Kaitai Struct's conformance schemas into the test crate.
//!
//! For every `formats/*.ksy` of the suite this runs `statepack_codegen::Builder::generate_as`
//! (imports resolved next to the schema, absolute ones in the suite's `formats/ks_path`, the
//! builder's include path). A schema
//! the generator refuses is recorded with its first diagnostic line; it never fails the build.
//! An accepted schema is written to `OUT_DIR/suite/<id>.rs` and included once, as module
//! `m_<id>`, by `OUT_DIR/suite.rs`, which also holds the dispatch table
//! `SCHEMAS: id -> outcome` (`reflect_decode` / `reflect_roundtrip` of the module). The test
//! `tests/kaitai_suite.rs` includes that file.
//!
//! Where the suite is: `$STATEPACK_KAITAI_TESTS` when set and non-empty; else
//! `<workspace>/../shared/kaitai-tests` (the folder next to the clone); else
//! `$STATEPACK_FIXTURES/../kaitai-tests`. When none exists the table is empty and the test
//! skips (fails under `CI=true`).
//!
//! A module the generator accepts but rustc refuses fails the whole test crate: rustc's
//! message names `OUT_DIR/suite/<id>.rs`, whose first line names the schema. List the id in
//! `conformance/skip_compile.txt` (one `id: reason` a line) to leave it out; the kst is then
//! reported as failed with that reason.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

const SUITE_ENV: &str = "STATEPACK_KAITAI_TESTS";

fn main() {
    println!("cargo:rerun-if-env-changed={SUITE_ENV}");
    println!("cargo:rerun-if-env-changed=STATEPACK_FIXTURES");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=skip_compile.txt");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let skip = read_skip_list(&manifest.join("skip_compile.txt"));
    let (suite, looked_at) = find_suite(&manifest);

    let mut modules = String::new();
    let mut table = String::new();
    let mut suite_const = "None".to_owned();
    if let Some(dir) = &suite {
        suite_const = format!("Some({:?})", dir.display().to_string());
        let formats = dir.join("formats");
        println!("cargo:rerun-if-changed={}", formats.display());
        // Absolute imports (`/common/x`) of the suite resolve in its `ks_path` folder, as
        // Kaitai's own test runs pass it to the compiler; relative ones next to each schema.
        let ks_path = formats.join("ks_path");
        println!("cargo:rerun-if-changed={}", ks_path.display());
        let builder = suite_options(
            statepack_codegen::Builder::new()
                .cargo_metadata(false)
                .include_path(&ks_path),
        );
        let sub = out.join("suite");
        std::fs::create_dir_all(&sub).expect("OUT_DIR is writable");
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&formats)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.retain(|p| p.extension().and_then(|x| x.to_str()) == Some("ksy"));
        entries.sort();
        for path in entries {
            println!("cargo:rerun-if-changed={}", path.display());
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let display = format!("formats/{stem}.ksy");
            let outcome = match std::fs::read_to_string(&path) {
                Err(e) => format!("Outcome::Refused({:?})", format!("cannot read: {e}")),
                Ok(_) => match generate_guarded(&builder, &display, &path) {
                    Err(Failure::Crashed(why)) => format!("Outcome::Refused({why:?})"),
                    Err(Failure::Refused(diags)) => {
                        let first = diags
                            .first()
                            .map(|d| d.to_string())
                            .unwrap_or_else(|| "refused without a diagnostic".to_owned());
                        let line = first.lines().next().unwrap_or("");
                        // The file is the kst's own schema; keep line:column and the message.
                        let line = line
                            .strip_prefix(&format!("{display}:"))
                            .unwrap_or(line)
                            .to_owned();
                        format!("Outcome::Refused({line:?})")
                    }
                    Ok(_) if skip.iter().any(|(id, _)| id == stem) => {
                        let reason = &skip.iter().find(|(id, _)| id == stem).expect("found").1;
                        format!("Outcome::Dropped({reason:?})")
                    }
                    Ok(code) => {
                        let module = module_name(stem);
                        let file = format!("{stem}.rs");
                        statepack_codegen::write_if_changed(&sub.join(&file), &code)
                            .expect("OUT_DIR is writable");
                        let _ = writeln!(
                            modules,
                            "    #[doc = \"Generated from `{display}`.\"]\n    pub mod {module} {{ include!(concat!(env!(\"OUT_DIR\"), \"/suite/{file}\")); }}"
                        );
                        if code.contains("fn reflect_decode")
                            && code.contains("fn reflect_roundtrip")
                        {
                            format!(
                                "Outcome::Compiled {{ decode: suite_modules::{module}::reflect_decode, roundtrip: suite_modules::{module}::reflect_roundtrip }}"
                            )
                        } else {
                            "Outcome::CompiledWithoutReflect".to_owned()
                        }
                    }
                },
            };
            let _ = writeln!(
                table,
                "    SchemaEntry {{ id: {stem:?}, file: {display:?}, outcome: {outcome} }},"
            );
        }
    }

    let text = format!(
        "// Written by conformance/build.rs.\n\
         /// The suite folder this build read, or `None` when it was not found.\n\
         pub const SUITE_DIR: Option<&str> = {suite_const};\n\
         /// Where the build looked for the suite, for the skip message.\n\
         pub const SUITE_LOOKED_AT: &str = {looked_at:?};\n\
         /// The generated modules (only their reflection entry points are used here), checked\n\
         /// by rustc and clippy like any user's crate; as a binary using part of their API,\n\
         /// it marks them `#[allow(dead_code)]`, as `include_schema!(mod name)` does.\n\
         #[allow(dead_code)]\n\
         mod suite_modules {{\n{modules}}}\n\
         /// Every schema of the suite's `formats/` with what the generator made of it.\n\
         pub static SCHEMAS: &[SchemaEntry] = &[\n{table}];\n"
    );
    statepack_codegen::write_if_changed(&out.join("suite.rs"), &text).expect("OUT_DIR is writable");
    // A generator thread that hung is still running; end the script without waiting for it.
    std::process::exit(0);
}

/// How generating one schema went wrong.
enum Failure {
    /// The generator refused it with these diagnostics.
    Refused(Vec<statepack_codegen::Diag>),
    /// The generator panicked or did not finish in time: what happened.
    Crashed(String),
}

/// The generator options the suite is built with: the suite's custom processors (written in
/// `src/kaitai_fx.rs`) and its opaque types, which are the suite's own generated modules of the same
/// names (the test crate implements `OpaqueType` for them).
fn suite_options(mut b: statepack_codegen::Builder) -> statepack_codegen::Builder {
    for (name, path) in [
        (
            "my_custom_fx",
            "::statepack_conformance::kaitai_fx::MyCustomFx",
        ),
        (
            "custom_fx_no_args",
            "::statepack_conformance::kaitai_fx::CustomFxNoArgs",
        ),
        (
            "nested.deeply.custom_fx",
            "::statepack_conformance::kaitai_fx::NestedCustomFx",
        ),
    ] {
        b = b.processor(name, path);
    }
    for (name, path) in [
        ("hello_world", "super::m_hello_world::HelloWorld"),
        (
            "opaque_external_type_02_child",
            "super::m_opaque_external_type_02_child::OpaqueExternalType02Child",
        ),
        ("params_def", "super::m_params_def::ParamsDef"),
    ] {
        b = b.extern_path(name, path);
    }
    b
}

/// How long generating one schema may take before it counts as hung.
const GENERATE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// `Builder::generate_as` on its own thread, so that a generator hang on one suite schema is
/// recorded against that schema instead of stopping the build (a hung thread is left behind
/// and ends with the build script); the builder turns a generator panic into a diagnostic.
fn generate_guarded(
    builder: &statepack_codegen::Builder,
    display: &str,
    path: &Path,
) -> Result<String, Failure> {
    let (tx, rx) = std::sync::mpsc::channel();
    let file = display.to_owned();
    let path = path.to_owned();
    let builder = builder.clone();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(builder.generate_as(&path, &file));
    });
    match rx.recv_timeout(GENERATE_TIMEOUT) {
        Ok(result) => {
            let _ = handle.join();
            result.map(|g| g.code).map_err(|e| {
                if e.diags.is_empty() {
                    Failure::Crashed(e.to_string())
                } else {
                    Failure::Refused(e.diags)
                }
            })
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => Err(Failure::Crashed(format!(
            "the generator did not finish within {} s",
            GENERATE_TIMEOUT.as_secs()
        ))),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let why = match handle.join() {
                Err(p) => p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default(),
                Ok(()) => String::new(),
            };
            Err(Failure::Crashed(format!("the generator panicked: {why}")))
        }
    }
}

/// The suite folder and a description of where it was looked for.
fn find_suite(manifest: &Path) -> (Option<PathBuf>, String) {
    let mut tried = Vec::new();
    if let Some(v) = std::env::var_os(SUITE_ENV).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(v);
        tried.push(format!("{} (from {SUITE_ENV})", p.display()));
        if p.join("formats").is_dir() {
            return (Some(canon(p)), String::new());
        }
        return (None, tried.join(", "));
    }
    let next_to_clone = manifest
        .join("..")
        .join("..")
        .join("shared")
        .join("kaitai-tests");
    tried.push(next_to_clone.display().to_string());
    if next_to_clone.join("formats").is_dir() {
        return (Some(canon(next_to_clone)), String::new());
    }
    if let Some(fx) = std::env::var_os("STATEPACK_FIXTURES").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(fx).join("..").join("kaitai-tests");
        tried.push(format!("{} (next to STATEPACK_FIXTURES)", p.display()));
        if p.join("formats").is_dir() {
            return (Some(canon(p)), String::new());
        }
    }
    (None, tried.join(", "))
}

fn canon(p: PathBuf) -> PathBuf {
    p.canonicalize().unwrap_or(p)
}

/// `conformance/skip_compile.txt`: `id: reason` lines; `#` starts a comment.
fn read_skip_list(path: &Path) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| match l.split_once(':') {
            Some((id, why)) => (
                id.trim().to_owned(),
                format!("generated Rust left out: {}", why.trim()),
            ),
            None => (
                l.to_owned(),
                "generated Rust left out (skip_compile.txt)".to_owned(),
            ),
        })
        .collect()
}

/// A Rust module name for a schema id (`m_` + the id, other characters as `_`).
fn module_name(stem: &str) -> String {
    let mut s = String::from("m_");
    s.extend(stem.chars().map(|c| {
        if c.is_ascii_alphanumeric() {
            c.to_ascii_lowercase()
        } else {
            '_'
        }
    }));
    s
}
