#![warn(missing_docs)]
//! statepack-codegen: turns a schema (a documented subset of Kaitai Struct `.ksy`, plus
//! `-sp-` extension keys) into Rust reader and writer types.
//!
//! Stages: [`yaml`] loads the file keeping every node's line and column; `lower` turns the
//! tree into the [`ir`] (the root type first, then `types` and `enums` in document order,
//! nested ones after the type that holds them); `resolve` gives nested types and enums
//! unique names and resolves every type and enum reference with Kaitai Struct's scoping;
//! `emit` checks names, types and expressions and emits Rust with `quote!` (its
//! `emit_reflect` part the dynamic view), formatted by prettyplease. Every problem found is collected as a [`Diag`] with file:line:column, the key
//! path in the schema and a one-line fix hint; a bad schema never panics the generator.
//!
//! The key-by-key reference is `docs/schema-language.md`.

mod bits;
pub mod columns;
mod context;
pub mod diag;
mod emit;
mod emit_reflect;
pub mod expr;
mod instances;
pub mod ir;
mod lower;
mod names;
mod process;
mod resolve;
mod sizes;
mod version;
pub mod yaml;

pub use diag::{render, Diag, Pos};
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

/// Parses and checks a schema whose file is at `path` (for `imports`; `file` is the name used
/// in diagnostics). Each `meta.imports` entry names a schema without `.ksy`: a relative one
/// (`common/header`, `../x`) is looked up next to the importing file, then in every directory
/// of [`IMPORT_PATH_VAR`]; an absolute one (`/common/header`) in those directories only. The
/// imported schema's root type and its nested types and enums join this schema under the
/// imported `meta.id` (`type: header`, `header::kind::a`); a file imported twice, or an
/// import cycle, is loaded once. Errors: every problem found, including an import that is
/// not found (naming the places tried) and problems inside imported files (naming them).
pub fn load_schema_at(text: &str, file: &str, path: &Path) -> Result<ir::Schema, Vec<Diag>> {
    let mut main = lower_one(text, file)?;
    let search: Vec<PathBuf> = std::env::var_os(IMPORT_PATH_VAR)
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
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
            let text = match std::fs::read_to_string(&found) {
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
    let d = context::lower(&mut main);
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
        Some(s) if lower.diags.is_empty() => Ok(s),
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

/// Choices a build makes for the generated code, beyond the schema.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Rust paths of custom processors, by the name written in `process:` (`my_fx`,
    /// `nested.deeply.my_fx`), e.g. `crate::codecs::MyFx`. A name not listed is looked up as
    /// `super::<modules>::<CamelName>` (`super::nested::deeply::MyFx`): next to the module
    /// that includes the generated code. The type implements
    /// `statepack_runtime::process::CustomProcessor` (see that module).
    pub processors: std::collections::BTreeMap<String, String>,
    /// Rust paths of opaque types (`meta.ks-opaque-types: true`), by the type name written
    /// in the schema, e.g. `crate::external::Header`. A name not listed is looked up as
    /// `super::<CamelName>`. The type implements `statepack_runtime::process::OpaqueType`.
    pub opaque_types: std::collections::BTreeMap<String, String>,
}

/// As [`generate`], for a schema whose file is at `path` (`file` names it in diagnostics
/// and in the header).
pub fn generate_at(text: &str, file: &str, path: &Path) -> Result<String, Vec<Diag>> {
    generate_with(text, file, path, &Options::default())
}

/// As [`generate_at`], with the build's [`Options`]. Errors: every problem found, including
/// a path in `options` that is not a Rust path.
pub fn generate_with(
    text: &str,
    file: &str,
    path: &Path,
    options: &Options,
) -> Result<String, Vec<Diag>> {
    let schema = load_schema_at(text, file, path)?;
    let tokens = emit::Emitter::new(&schema).with_options(options).emit()?;
    let syntax: syn::File = match syn::parse2(tokens) {
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
    let body = prettyplease::unparse(&syntax);
    Ok(format!(
        "// @generated by statepack-codegen {GENERATOR_VERSION} from {file}.\n\
         // Do not edit: edit the schema and run `cargo build` (see docs/schema-language.md).\n\n{body}"
    ))
}

/// Generates every `*.ksy` in `schema_dir` into `out_dir` as `<stem>.rs`, in file-name order.
/// Schema names in headers and diagnostics are given as `<display_prefix>/<file name>`.
/// Returns the generated file names. Errors: the rendered diagnostics of every failing schema.
pub fn generate_dir(
    schema_dir: &std::path::Path,
    out_dir: &std::path::Path,
    display_prefix: &str,
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
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        match generate_at(&text, &display, &path) {
            Ok(code) => {
                let stem = name.trim_end_matches(".ksy");
                let out = out_dir.join(format!("{stem}.rs"));
                let old = std::fs::read_to_string(&out).ok();
                if old.as_deref() != Some(code.as_str()) {
                    std::fs::write(&out, code)
                        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
                }
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
