#![warn(missing_docs)]
//! statepack-codegen: turns a schema (a documented subset of Kaitai Struct `.ksy`, plus
//! `-sp-` extension keys) into Rust reader and writer types.
//!
//! # Use statepack in your crate
//!
//! Your own formats get generated reader and writer types in your own crate, from its build
//! script. Depend on `statepack-runtime` (what the generated code calls) and, for the build
//! script, on this crate, both from one clone (by path) or from git at the same revision:
//!
//! ```toml
//! [dependencies]
//! statepack-runtime = { path = "../statepack/runtime", version = "0.1", default-features = false, features = ["serde"] }
//!
//! [build-dependencies]
//! statepack-codegen = { path = "../statepack/codegen", version = "0.1" }
//! ```
//!
//! With `default-features = false` the runtime is only the small core (byte and bit I/O,
//! errors, traces, varints, `process` helpers, the dynamic view) and brings no gltf, glam or
//! flate2; its `serde` feature gives the generated types serde's traits through the runtime's
//! own re-export, so your crate needs no serde dependency. Take both crates at the same
//! revision: every generated module starts with `::statepack_runtime::require_interface!(N)`
//! ([`RUNTIME_INTERFACE`]), and a runtime of another generated-code interface refuses to
//! compile it with a message saying to pair the versions.
//!
//! `build.rs`:
//!
//! ```no_run
//! fn main() -> Result<(), statepack_codegen::BuildError> {
//!     statepack_codegen::Builder::new().compile(&["schema/game.ksy"])?;
//!     Ok(())
//! }
//! ```
//!
//! [`Builder::compile`] takes files and folders (every `*.ksy` in a folder), resolves
//! `meta.imports` next to the importing schema, then in each [`Builder::include_path`], then
//! in the directories of [`IMPORT_PATH_VAR`], and writes `OUT_DIR/<file stem>.rs` only when
//! its text changed. It tells cargo to rerun it when a schema or an imported file changes, so
//! editing a schema and running `cargo build` is all there is to do. A schema error fails the
//! build with its place and a hint (`schema/game.ksy:14:11: error: ...`), each line also as
//! a cargo warning; the builder never panics on a bad schema. Options:
//! [`Builder::serde`] (`false`: no serde derives, and no need for the runtime's `serde`
//! feature), [`Builder::derive`] (one more derive on every type), [`Builder::extern_path`],
//! [`Builder::out_dir`], and [`Builder::options_mut`] for every [`Options`] field.
//!
//! In the crate, one line includes the module, named after the schema's file stem:
//!
//! ```ignore
//! statepack_runtime::include_schema!(mod game);
//!
//! let file = game::Game { name: "Harbour".to_owned(), scores: vec![1200, 950] };
//! let bytes = file.encode()?;                 // counts and lengths are derived
//! let back = game::Game::decode(&bytes)?;     // errors name the field path and byte offset
//! ```
//!
//! The generated code compiles without rustc or clippy warnings, with no `#[allow]` on your
//! side, also under `RUSTFLAGS="-D warnings"`. The crate `examples/` of the repository is a
//! complete example.
//!
//! # Inside the generator
//!
//! Stages: [`yaml`] loads the file keeping every node's line and column; `lower` turns the
//! tree into the [`ir`] (the root type first, then `types` and `enums` in document order,
//! nested ones after the type that holds them); `resolve` gives nested types and enums
//! unique names and resolves every type and enum reference with Kaitai Struct's scoping;
//! `context` and `endian` add the params that carry `_parent`/`_root` paths and a decided
//! byte order; `check` refuses clashing Rust names, unknown references, types that contain
//! themselves and sums that cannot be derived; [`typed`] types every expression once, in
//! the scope where the reader or the writer evaluates it, into a typed expression tree and
//! reports every expression that does not type ([`typed::check`] is the whole check stage);
//! analyses of the IR (`derive`, `sizes`, `shape`, `bits`, `instances`) serve the checks and
//! the emitter alike; `emit` runs the check stage, compiles the expressions from its typed
//! trees and emits Rust with `quote!` (its `reflect` part the dynamic view), clean as
//! it is: each operand of an expression is an invisible group, so that prettyplease, which
//! prints the result, writes only the parentheses precedence needs, and literals are typed
//! where they are written; the module-wide [`Options`] (serde, extra derives, the runtime
//! checks) are applied to the emitted module before it is printed. Every problem
//! found is collected as a [`Diag`] with file:line:column, the key path in the schema and a
//! one-line fix hint; a bad schema never panics the generator.
//!
//! [`Options`] ask for more than the native reader and writer: binrw's `BinRead`/`BinWrite`,
//! deku's `DekuReader`/`DekuWriter` and bitvec `BitSlice` readers for the generated types
//! (`emit::binrw`; pass them to [`generate_with`] or [`generate_dir_with`]). The emitted impls
//! call `statepack_runtime::interop` and need the runtime's features of the same names.
//!
//! The key-by-key reference is `docs/schema-language.md`.

mod bits;
mod builder;
mod check;
pub mod columns;
mod context;
mod derive;
pub mod diag;
mod emit;
mod endian;
pub mod expr;
mod instances;
pub mod interp;
pub mod ir;
mod lazy;
mod lower;
pub mod lua_emit;
mod names;
mod num_type;
mod options;
mod parent_io;
mod process;
mod resolve;
pub mod sem;
mod shape;
mod sizes;
pub mod typed;
mod version;
pub mod yaml;

pub use builder::{write_if_changed, BuildError, Builder, Generated};
pub use diag::{render, Diag, Pos, Related};
pub use emit::module_options::RUNTIME_INTERFACE;
pub use options::Options;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Version of the generator, written into every generated file's header.
pub const GENERATOR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Parses and checks a schema. `file` is the name used in diagnostics and headers
/// (e.g. `schema/snap_v1_3.ksy`). Errors: every problem found, in file order.
/// `meta.imports` are looked up as for [`load_schema_at`] with `Path::new(file)`.
pub fn load_schema(text: &str, file: &str) -> Result<ir::Schema, Vec<Diag>> {
    load_schema_at(text, file, Path::new(file))
}

/// The environment variable with the import search path: directories separated as in
/// `PATH` (`:` on Unix).
pub const IMPORT_PATH_VAR: &str = "STATEPACK_KSY_PATH";

/// Imports still to load: the names with their positions, the directory of the file that
/// names them, and that file's name (for diagnostics).
type PendingImports = (Vec<(String, Pos)>, PathBuf, String);

/// The most schema files one schema may pull in through `imports` (directly or not).
const MAX_IMPORTS: usize = 256;

/// The largest schema file read, in bytes (16 MiB): the largest real-world schemas are a few
/// hundred KiB, and a path such as `/dev/zero` must not be read without end.
pub const MAX_SCHEMA_BYTES: u64 = 16 << 20;

/// Reads a schema file as text, at most [`MAX_SCHEMA_BYTES`]. Errors: the file cannot be
/// read, is not UTF-8, or is larger than the limit (`InvalidData`, saying so).
pub fn read_schema_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_SCHEMA_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_SCHEMA_BYTES {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a schema file may have at most {MAX_SCHEMA_BYTES} bytes"),
        ));
    }
    Ok(text)
}

/// Parses and checks a schema whose file is at `path` (for `imports`; `file` is the name used
/// in diagnostics). Each `meta.imports` entry names a schema without `.ksy`: a relative one
/// (`common/header`, `../x`) is looked up next to the importing file, then in every directory
/// of [`IMPORT_PATH_VAR`]; an absolute one (`/common/header`) in those directories only. The
/// imported schema's root type and its nested types and enums join this schema under the
/// imported `meta.id` (`type: header`, `header::kind::a`); a file imported twice, or an
/// import cycle, is loaded once. Errors: every problem found, including an import that is
/// not found (naming the places tried) and problems inside imported files (naming them).
pub fn load_schema_at(text: &str, file: &str, path: &Path) -> Result<ir::Schema, Vec<Diag>> {
    load_schema_in(text, file, path, &[], &mut Vec::new())
}

/// Loads a schema for the interpreter ([`interp`]) and tools: as [`load_schema_at`], searching
/// `include_paths` before [`IMPORT_PATH_VAR`], then runs the check stage ([`typed::check`]:
/// names, references and layout, then the typing of every expression) and no backend, so a
/// schema the generator refuses is refused here with the same diagnostics. Gives the schema
/// with its typed expressions ([`typed::Checked`], which reads as the schema). Errors: every
/// problem found, as [`Diag`]s with file:line:column.
pub fn load_checked(
    text: &str,
    file: &str,
    path: &Path,
    include_paths: &[PathBuf],
) -> Result<typed::Checked, Vec<Diag>> {
    load_typed(text, file, path, include_paths)
        .map(|(schema, typed)| typed::Checked { schema, typed })
}

/// As [`load_checked`], also giving the check stage's typed expressions: every expression of
/// the schema typed once, in its scope ([`typed::TypedSchema`]), for a backend to consume.
/// Errors: as [`load_checked`].
pub fn load_typed(
    text: &str,
    file: &str,
    path: &Path,
    include_paths: &[PathBuf],
) -> Result<(ir::Schema, typed::TypedSchema), Vec<Diag>> {
    let schema = load_schema_in(text, file, path, include_paths, &mut Vec::new())?;
    let typed = typed::check(&schema, &Options::default())?;
    Ok((schema, typed))
}

/// The import search path: `first`, then the directories of [`IMPORT_PATH_VAR`].
fn search_path(first: &[PathBuf]) -> Vec<PathBuf> {
    let mut search = first.to_vec();
    search.extend(
        std::env::var_os(IMPORT_PATH_VAR)
            .map(|v| std::env::split_paths(&v).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    search
}

/// As [`load_schema_at`], searching `include_paths` before [`IMPORT_PATH_VAR`] and adding
/// every imported file it reads (or tries to read) to `read`.
fn load_schema_in(
    text: &str,
    file: &str,
    path: &Path,
    include_paths: &[PathBuf],
    read: &mut Vec<PathBuf>,
) -> Result<ir::Schema, Vec<Diag>> {
    let mut main = lower_one(text, file)?;
    let search = search_path(include_paths);
    let mut seen: HashSet<PathBuf> = HashSet::new();
    seen.insert(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    let mut ids: HashSet<String> = HashSet::from([main.id.clone()]);
    let mut diags = Vec::new();
    let mut todo: Vec<PendingImports> = vec![(
        std::mem::take(&mut main.imports),
        path.parent().map(Path::to_path_buf).unwrap_or_default(),
        file.to_owned(),
    )];
    while let Some((imports, dir, from)) = todo.pop() {
        for (name, pos) in imports {
            let rel = format!("{}.ksy", name.trim_start_matches('/'));
            let mut tried: Vec<PathBuf> = Vec::new();
            if !name.starts_with('/') {
                tried.push(dir.join(&rel));
            }
            tried.extend(search.iter().map(|d| d.join(&rel)));
            let Some(found) = tried.iter().find(|p| p.is_file()).cloned() else {
                let places: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
                diags.push(Diag::new(
                    &from,
                    pos,
                    "meta.imports",
                    format!("imported schema `{name}` not found (looked for {})", if places.is_empty() { "nothing: no search path is set".to_owned() } else { places.join(", ") }),
                    format!("relative imports are found next to the importing file; absolute ones (`/x`) in the directories of {IMPORT_PATH_VAR}"),
                ));
                continue;
            };
            let canon = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
            if !read.contains(&found) {
                read.push(found.clone());
            }
            if !seen.insert(canon) {
                continue;
            }
            if seen.len() > MAX_IMPORTS {
                diags.push(Diag::new(
                    &from,
                    pos,
                    "meta.imports",
                    format!("more than {MAX_IMPORTS} schema files are imported"),
                    "import fewer files",
                ));
                break;
            }
            let shown = found.display().to_string();
            let text = match read_schema_file(&found) {
                Ok(t) => t,
                Err(e) => {
                    diags.push(Diag::new(
                        &from,
                        pos,
                        "meta.imports",
                        format!("cannot read `{shown}`: {e}"),
                        "check the file",
                    ));
                    continue;
                }
            };
            let mut imp = match lower_one(&text, &shown) {
                Ok(s) => s,
                Err(d) => {
                    diags.extend(d);
                    continue;
                }
            };
            if !ids.insert(imp.id.clone()) {
                diags.push(Diag::new(
                    &from,
                    pos,
                    "meta.imports",
                    format!("`{shown}` has the id `{}` of another schema here", imp.id),
                    "give every imported schema its own meta.id",
                ));
                continue;
            }
            todo.push((
                std::mem::take(&mut imp.imports),
                found.parent().map(Path::to_path_buf).unwrap_or_default(),
                shown,
            ));
            main.warnings.append(&mut imp.warnings);
            for mut t in imp.types {
                let mut scope = vec![imp.id.clone()];
                if !t.scope.is_empty() {
                    scope.extend(t.scope);
                }
                t.scope = scope;
                main.types.push(t);
            }
            for mut e in imp.enums {
                let mut scope = vec![imp.id.clone()];
                scope.extend(e.scope);
                e.scope = scope;
                main.enums.push(e);
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    resolve::resolve(&mut main);
    // `io: _parent._io` becomes the type's own stream or the whole input.
    let d = parent_io::lower(&mut main);
    if !d.is_empty() {
        return Err(d);
    }
    // Instances named by `_root.x` / `_parent.x` paths are read before their first use.
    lazy::hoist_for_paths(&mut main);
    let d = context::lower(&mut main);
    if !d.is_empty() {
        return Err(d);
    }
    let d = endian::lower(&mut main);
    if !d.is_empty() {
        return Err(d);
    }
    Ok(main)
}

/// Loads and lowers one schema file, without its imports and without resolving names.
fn lower_one(text: &str, file: &str) -> Result<ir::Schema, Vec<Diag>> {
    let root = yaml::load(text, file)?;
    let mut lower = lower::Lower::new(file);
    let schema = lower.schema(&root);
    match schema {
        Some(mut s) if lower.diags.is_empty() => {
            for t in &mut s.types {
                t.file = file.to_owned();
            }
            s.warnings = lower.warnings;
            Ok(s)
        }
        _ => {
            let mut d = lower.diags;
            d.sort_by_key(|x| x.pos);
            Err(d)
        }
    }
}

/// Generates the formatted Rust module for a schema's text. Errors: every problem found.
/// Imports are looked up from `Path::new(file)` (see [`load_schema_at`]).
pub fn generate(text: &str, file: &str) -> Result<String, Vec<Diag>> {
    generate_at(text, file, Path::new(file))
}

/// As [`generate`], for a schema whose file is at `path` (`file` names it in diagnostics
/// and in the header).
pub fn generate_at(text: &str, file: &str, path: &Path) -> Result<String, Vec<Diag>> {
    generate_with(text, file, path, &Options::default())
}

/// As [`generate_at`], with the build's [`Options`] (what to derive, where to look for
/// imports, Rust paths of custom processors and opaque types). Errors: every problem found,
/// as [`Diag`]s with file:line:column, including a path in `options` that is not a Rust path.
pub fn generate_with(
    text: &str,
    file: &str,
    path: &Path,
    options: &Options,
) -> Result<String, Vec<Diag>> {
    generate_in(text, file, path, options, &mut Vec::new(), &mut Vec::new())
}

/// [`generate_with`], adding every imported file read to `read` (also when it fails).
fn generate_in(
    text: &str,
    file: &str,
    path: &Path,
    opts: &Options,
    read: &mut Vec<PathBuf>,
    warnings: &mut Vec<Diag>,
) -> Result<String, Vec<Diag>> {
    let schema = load_schema_in(text, file, path, &opts.include_paths, read)?;
    warnings.extend(schema.warnings.iter().cloned());
    let tokens = emit::Emitter::new(&schema).with_options(opts).emit()?;
    let mut syntax: syn::File = match syn::parse2(tokens) {
        Ok(f) => f,
        Err(e) => {
            return Err(vec![Diag::new(
                file,
                Pos { line: 1, col: 1 },
                "",
                format!("internal generator error: emitted code does not parse: {e}"),
                "report this schema; the generator should have refused it with a clear message",
            )])
        }
    };
    emit::module_options::apply(&mut syntax, opts);
    emit::ungroup(&mut syntax);
    if let Some(name) = emit::group_in_macro(&syntax) {
        return Err(vec![Diag::new(
            file,
            Pos { line: 1, col: 1 },
            "",
            format!("internal generator error: an expression inside `{name}!` would print without the parentheses it needs"),
            "report this schema",
        )]);
    }
    let body = prettyplease::unparse(&syntax);
    let code = format!(
        "// @generated by statepack-codegen {GENERATOR_VERSION} from {file}.\n\
         // Do not edit: edit the schema and run `cargo build` (see docs/schema-language.md).\n\n{body}"
    );
    Ok(code)
}

/// Generates every `*.ksy` in `schema_dir` into `out_dir` as `<stem>.rs`, in file-name order.
/// Schema names in headers and diagnostics are given as `<display_prefix>/<file name>`.
/// Returns the generated file names. Errors: the rendered diagnostics of every failing schema.
pub fn generate_dir(
    schema_dir: &std::path::Path,
    out_dir: &std::path::Path,
    display_prefix: &str,
) -> Result<Vec<String>, String> {
    generate_dir_with(schema_dir, out_dir, display_prefix, &Options::default())
}

/// As [`generate_dir`], emitting what `opts` asks for besides the native reader and writer.
pub fn generate_dir_with(
    schema_dir: &std::path::Path,
    out_dir: &std::path::Path,
    display_prefix: &str,
    opts: &Options,
) -> Result<Vec<String>, String> {
    let mut entries: Vec<_> = std::fs::read_dir(schema_dir)
        .map_err(|e| format!("cannot read {}: {e}", schema_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("ksy"))
        .collect();
    entries.sort();
    let mut all_diags = Vec::new();
    let mut written = Vec::new();
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_owned();
        let display = format!("{display_prefix}/{name}");
        let text =
            read_schema_file(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        match generate_with(&text, &display, &path, opts) {
            Ok(code) => {
                let stem = name.trim_end_matches(".ksy");
                let out = out_dir.join(format!("{stem}.rs"));
                write_if_changed(&out, &code)
                    .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
                written.push(format!("{stem}.rs"));
            }
            Err(d) => all_diags.extend(d),
        }
    }
    if all_diags.is_empty() {
        Ok(written)
    } else {
        Err(render(&all_diags))
    }
}
