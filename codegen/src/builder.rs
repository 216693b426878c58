//! The build-script API: [`Builder`] generates schemas into `OUT_DIR` from a crate's
//! `build.rs`, in the manner of prost-build.
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), statepack_codegen::BuildError> {
//!     statepack_codegen::Builder::new().compile(&["schema/game.ksy"])?;
//!     Ok(())
//! }
//! ```
//!
//! and in the crate, `statepack_runtime::include_schema!(pub mod game);`.

use crate::diag::{Diag, Pos};
use crate::options::Options;
use std::fmt;
use std::path::{Path, PathBuf};

/// Generates Rust modules from schemas, from a build script.
///
/// [`compile`](Builder::compile) takes schema files and folders (every `*.ksy` directly in a
/// folder, in file-name order), resolves their `meta.imports` (next to the importing file,
/// then in each [`include_path`](Builder::include_path), then in the directories of
/// `STATEPACK_KSY_PATH`), and writes each schema's module to `OUT_DIR/<file stem>.rs`
/// (only when its text changed, so an unchanged schema does not make cargo recompile the
/// crate). It prints `cargo:rerun-if-changed` for every input, folder and imported file it
/// read, so cargo reruns the script exactly when one of them changes.
///
/// A schema that does not compile fails the build with its diagnostics
/// (`schema/game.ksy:12:7: error: ...`): each line as a `cargo:warning=` (shown by cargo in
/// the build output) and all of them in the returned [`BuildError`], whose `Debug` form is
/// the same text, so `fn main() -> Result<(), BuildError>` prints them when it returns the
/// error. The builder never panics on a bad schema.
///
/// Options ([`serde`](Builder::serde), [`derive`](Builder::derive),
/// [`extern_path`](Builder::extern_path), ...) set the [`Options`] passed to the
/// generator; [`options_mut`](Builder::options_mut) reaches every option, including those
/// with no builder method.
#[derive(Debug, Clone)]
pub struct Builder {
    opts: Options,
    out_dir: Option<PathBuf>,
    cargo_metadata: bool,
    luau_dir: Option<PathBuf>,
    lua51_dir: Option<PathBuf>,
    lua51_opts: crate::lua_emit::Lua51Options,
}

impl Default for Builder {
    fn default() -> Self {
        Self::new()
    }
}

/// One schema's generated module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// The schema file, as given (or found in a given folder).
    pub schema: PathBuf,
    /// The schema's file stem: the generated file's stem, and the name to give
    /// `statepack_runtime::include_schema!`.
    pub stem: String,
    /// The generated Rust.
    pub code: String,
    /// Where [`Builder::compile`] wrote it (`None` from [`Builder::generate`]).
    pub out_file: Option<PathBuf>,
    /// Every imported schema file read while generating it.
    pub imports: Vec<PathBuf>,
}

/// Why [`Builder::compile`] or [`Builder::generate`] failed: the schema diagnostics of
/// every failing schema (file:line:column, key path, hint), and any file that could not be
/// read or written.
#[derive(Clone, PartialEq, Eq)]
pub struct BuildError {
    /// Schema problems, in input order and file order within each schema.
    pub diags: Vec<Diag>,
    /// Other problems: an input that cannot be read, an output that cannot be written, no
    /// `OUT_DIR`, two inputs with the same file stem.
    pub other: Vec<String>,
}

impl BuildError {
    fn other(msg: String) -> Self {
        BuildError {
            diags: Vec::new(),
            other: vec![msg],
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for o in &self.other {
            writeln!(f, "error: {o}")?;
        }
        if !self.diags.is_empty() {
            write!(f, "{}", crate::render(&self.diags))?;
        }
        Ok(())
    }
}

/// The same text as `Display`, so a build script's `main` returning the error prints the
/// diagnostics readably.
impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "statepack-codegen could not generate the schemas:")?;
        fmt::Display::fmt(self, f)
    }
}

impl std::error::Error for BuildError {}

impl Builder {
    /// A builder with the default [`Options`] (serde derives on), writing to
    /// `OUT_DIR` and printing `cargo:` lines.
    pub fn new() -> Self {
        Builder {
            opts: Options::default(),
            out_dir: None,
            cargo_metadata: true,
            luau_dir: None,
            lua51_dir: None,
            lua51_opts: crate::lua_emit::Lua51Options::default(),
        }
    }

    /// Also writes every schema [`compile`](Builder::compile) takes as a Luau ModuleScript,
    /// `<stem>.luau`, into `dir` (created if missing), with the runtime module
    /// `statepack.luau` beside them: the same reader and writer for Roblox's `buffer`
    /// library, from the same checked schema (see [`crate::lua_emit`] and `docs/luau.md`).
    /// Point a Rojo project's folder at `dir`. A construct the Luau backend cannot express
    /// fails the build with a diagnostic naming it, as a schema error does.
    pub fn luau(mut self, dir: impl Into<PathBuf>) -> Self {
        self.luau_dir = Some(dir.into());
        self
    }

    /// Also writes every schema [`compile`](Builder::compile) takes as a Lua 5.1 reader module,
    /// `<stem>.lua`, into `dir` (created if missing), with the runtime module
    /// `statepack51.lua` beside them: readers for engines whose Lua is 5.1 (the Recoil
    /// engine), by arithmetic, fetching bytes through a function the caller passes (see
    /// [`crate::lua_emit`] and `docs/lua.md`). A construct the Lua 5.1 backend cannot
    /// express fails the build with a diagnostic naming it.
    pub fn lua51(mut self, dir: impl Into<PathBuf>) -> Self {
        self.lua51_dir = Some(dir.into());
        self
    }

    /// Holds the Lua 5.1 modules ([`lua51`](Builder::lua51)) to the 32-bit-float profile:
    /// a schema letting any integer value, position, size or count exceed 2^24 fails the
    /// build with a diagnostic naming the field and where it is written
    /// ([`crate::lua_emit::f32_profile`]). Off by default.
    pub fn lua51_f32_profile(mut self, on: bool) -> Self {
        self.lua51_opts.f32_profile = on;
        self
    }

    /// Writes the modules to `dir` instead of `OUT_DIR` (created if missing).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Adds a directory where `meta.imports` are looked up (after the importing file's
    /// folder; absolute imports such as `/common/header` only here and in
    /// `STATEPACK_KSY_PATH`). Directories are searched in the order added.
    pub fn include_path(mut self, dir: impl Into<PathBuf>) -> Self {
        self.opts.include_paths.push(dir.into());
        self
    }

    /// Whether generated types derive serde's `Serialize` and `Deserialize` (default
    /// `true`; needs statepack-runtime's `serde` feature, and then no serde dependency of
    /// the crate's own).
    pub fn serde(mut self, on: bool) -> Self {
        self.opts.serde = on;
        self
    }

    /// Derives one more trait on every generated struct and enum (`"Eq"`, `"Hash"`,
    /// `"my_crate::MyDerive"`); it must be derivable for every field type of the schema.
    pub fn derive(mut self, path: impl Into<String>) -> Self {
        self.opts.derives.push(path.into());
        self
    }

    /// Maps a Kaitai Struct opaque type (`ks-opaque-types: true`; `name` as written in the
    /// schema's `type:`) to a Rust type of the crate (`rust_path`, such as
    /// `crate::codecs::Packed`) implementing `statepack_runtime::process::OpaqueType`, which
    /// reads and writes it, as prost-build's `extern_path`.
    pub fn extern_path(mut self, name: impl Into<String>, rust_path: impl Into<String>) -> Self {
        self.opts.opaque_types.insert(name.into(), rust_path.into());
        self
    }

    /// Maps a custom processor (`process: name(args)`; `name` as written in the schema, e.g.
    /// `my_fx` or `nested.deeply.my_fx`) to a Rust type of the crate (`rust_path`, such as
    /// `crate::codecs::MyFx`) implementing `statepack_runtime::process::CustomProcessor`.
    /// Without a mapping the generated code names `super::<modules>::<CamelName>`.
    pub fn processor(mut self, name: impl Into<String>, rust_path: impl Into<String>) -> Self {
        self.opts.processors.insert(name.into(), rust_path.into());
        self
    }

    /// Emits binrw's `BinRead`/`BinWrite` for every byte-aligned type (default `false`; the
    /// crate needs `statepack-runtime`'s feature `binrw`).
    pub fn binrw(mut self, on: bool) -> Self {
        self.opts.binrw = on;
        self
    }

    /// Emits deku's `DekuReader`/`DekuWriter` for every type with bit fields (default
    /// `false`; the crate needs `statepack-runtime`'s feature `deku`).
    pub fn deku(mut self, on: bool) -> Self {
        self.opts.deku = on;
        self
    }

    /// Emits `read_bits(&BitSlice<u8, Msb0>)` and `to_bits()` for every type with bit fields
    /// (default `false`; the crate needs `statepack-runtime`'s feature `bitvec`).
    pub fn bitvec(mut self, on: bool) -> Self {
        self.opts.bitvec = on;
        self
    }

    /// Emits a modular-bitfield struct (`bitfield::<Type>`, converted with `TryFrom` both
    /// ways) for every type whose `seq` is a run of `bit-endian: le` bit fields filling whole
    /// bytes (default `false`; the crate needs a direct dependency on `modular-bitfield` 0.13,
    /// whose macro names its own crate).
    pub fn modular_bitfield(mut self, on: bool) -> Self {
        self.opts.modular_bitfield = on;
        self
    }

    /// Whether to print `cargo:rerun-if-changed` and `cargo:warning` lines (default `true`;
    /// turn off when calling the builder outside a build script).
    pub fn cargo_metadata(mut self, on: bool) -> Self {
        self.cargo_metadata = on;
        self
    }

    /// The options passed to the generator.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// Every generator option, including those with no builder method.
    pub fn options_mut(&mut self) -> &mut Options {
        &mut self.opts
    }

    /// Generates one schema file without writing anything (and without `cargo:` lines).
    /// Errors: its diagnostics, or why it could not be read.
    pub fn generate(&self, schema: &Path) -> Result<Generated, BuildError> {
        self.generate_one(schema, &schema.display().to_string()).0
    }

    /// As [`generate`](Builder::generate), naming the schema `display` in diagnostics and in
    /// the generated header (such as a path relative to some root) instead of its path.
    pub fn generate_as(&self, schema: &Path, display: &str) -> Result<Generated, BuildError> {
        self.generate_one(schema, display).0
    }

    /// [`generate`](Builder::generate), with every file read (the schema's imports), also on
    /// failure.
    fn generate_one(
        &self,
        schema: &Path,
        display: &str,
    ) -> (Result<Generated, BuildError>, Vec<PathBuf>) {
        let stem = schema
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        let display = display.to_owned();
        let text = match crate::read_schema_file(schema) {
            Ok(t) => t,
            Err(e) => {
                return (
                    Err(BuildError::other(format!("cannot read {display}: {e}"))),
                    Vec::new(),
                )
            }
        };
        let opts = &self.opts;
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut read = Vec::new();
            let mut warnings = Vec::new();
            let code = crate::generate_in(&text, &display, schema, opts, &mut read, &mut warnings);
            if self.cargo_metadata {
                for w in &warnings {
                    for line in w.to_string().lines().filter(|l| !l.is_empty()) {
                        println!("cargo:warning={line}");
                    }
                }
            }
            (code, read)
        }));
        match run {
            Ok((Ok(code), imports)) => (
                Ok(Generated {
                    schema: schema.to_path_buf(),
                    stem,
                    code,
                    out_file: None,
                    imports: imports.clone(),
                }),
                imports,
            ),
            Ok((Err(diags), imports)) => (
                Err(BuildError {
                    diags,
                    other: Vec::new(),
                }),
                imports,
            ),
            Err(panic) => {
                let why = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default();
                let d = Diag::new(
                    &display,
                    Pos { line: 1, col: 1 },
                    "",
                    format!("internal generator error: {why}"),
                    "report this schema; the generator should have refused it with a clear message",
                );
                (
                    Err(BuildError {
                        diags: vec![d],
                        other: Vec::new(),
                    }),
                    Vec::new(),
                )
            }
        }
    }

    /// Generates every input (a `.ksy` file, or a folder whose `*.ksy` files are all taken)
    /// into the output folder as `<stem>.rs`, writing only files whose text changed.
    /// Returns one [`Generated`] per schema, in input order (a folder's files by name).
    ///
    /// Errors: every failing schema's diagnostics together (the others are still written),
    /// or an input that cannot be read, two schemas with the same stem, an output folder that
    /// cannot be written, no `OUT_DIR` and no [`out_dir`](Builder::out_dir).
    pub fn compile(&self, inputs: &[impl AsRef<Path>]) -> Result<Vec<Generated>, BuildError> {
        let result = self.compile_inner(inputs);
        if let Err(e) = &result {
            if self.cargo_metadata {
                for line in e.to_string().lines().filter(|l| !l.is_empty()) {
                    println!("cargo:warning={line}");
                }
            }
        }
        result
    }

    fn compile_inner(&self, inputs: &[impl AsRef<Path>]) -> Result<Vec<Generated>, BuildError> {
        let out_dir = match &self.out_dir {
            Some(d) => d.clone(),
            None => match std::env::var_os("OUT_DIR") {
                Some(d) => PathBuf::from(d),
                None => {
                    return Err(BuildError::other(
                        "OUT_DIR is not set (outside a build script, give Builder::out_dir)"
                            .to_owned(),
                    ))
                }
            },
        };
        if self.cargo_metadata {
            println!("cargo:rerun-if-env-changed={}", crate::IMPORT_PATH_VAR);
            for d in &self.opts.include_paths {
                println!("cargo:rerun-if-changed={}", d.display());
            }
        }
        let mut err = BuildError {
            diags: Vec::new(),
            other: Vec::new(),
        };
        let mut schemas: Vec<PathBuf> = Vec::new();
        for input in inputs {
            let input = input.as_ref();
            if self.cargo_metadata {
                println!("cargo:rerun-if-changed={}", input.display());
            }
            if input.is_dir() {
                match std::fs::read_dir(input) {
                    Ok(rd) => {
                        let mut found: Vec<PathBuf> = rd
                            .filter_map(|e| e.ok().map(|e| e.path()))
                            .filter(|p| {
                                p.is_file() && p.extension().and_then(|x| x.to_str()) == Some("ksy")
                            })
                            .collect();
                        found.sort();
                        schemas.extend(found);
                    }
                    Err(e) => err
                        .other
                        .push(format!("cannot read {}: {e}", input.display())),
                }
            } else {
                schemas.push(input.to_path_buf());
            }
        }
        let mut stems: Vec<(String, PathBuf)> = Vec::new();
        for s in &schemas {
            let stem = s.file_stem().and_then(|x| x.to_str()).unwrap_or_default();
            if let Some((_, first)) = stems.iter().find(|(t, _)| t == stem) {
                err.other.push(format!(
                    "{} and {} would both be generated as {stem}.rs: rename one",
                    first.display(),
                    s.display()
                ));
            }
            stems.push((stem.to_owned(), s.clone()));
        }
        if !err.other.is_empty() {
            return Err(err);
        }
        if let Err(e) = std::fs::create_dir_all(&out_dir) {
            return Err(BuildError::other(format!(
                "cannot create {}: {e}",
                out_dir.display()
            )));
        }
        let mut done = Vec::new();
        for schema in &schemas {
            let (result, read) = self.generate_one(schema, &schema.display().to_string());
            if self.cargo_metadata {
                // Inputs given as files were announced above; a folder's files are not yet.
                if !inputs.iter().any(|i| i.as_ref() == schema.as_path()) {
                    println!("cargo:rerun-if-changed={}", schema.display());
                }
                for r in &read {
                    println!("cargo:rerun-if-changed={}", r.display());
                }
            }
            match result {
                Ok(mut g) => {
                    let out = out_dir.join(format!("{}.rs", g.stem));
                    if let Err(e) = write_if_changed(&out, &g.code) {
                        err.other
                            .push(format!("cannot write {}: {e}", out.display()));
                    }
                    g.out_file = Some(out);
                    if let Some(dir) = &self.luau_dir {
                        let t = crate::lua_emit::Target::Luau;
                        self.write_lua(dir, schema, &g.stem, t, &mut err);
                    }
                    if let Some(dir) = &self.lua51_dir {
                        let t = crate::lua_emit::Target::Lua51(self.lua51_opts);
                        self.write_lua(dir, schema, &g.stem, t, &mut err);
                    }
                    done.push(g);
                }
                Err(e) => {
                    err.diags.extend(e.diags);
                    err.other.extend(e.other);
                }
            }
        }
        if err.diags.is_empty() && err.other.is_empty() {
            Ok(done)
        } else {
            Err(err)
        }
    }
}

impl Builder {
    /// The Luau or Lua 5.1 module of `schema` into `dir` as `<stem>.<ext>`, and the runtime
    /// module beside it; problems are added to `err`.
    fn write_lua(
        &self,
        dir: &Path,
        schema: &Path,
        stem: &str,
        target: crate::lua_emit::Target,
        err: &mut BuildError,
    ) {
        use crate::lua_emit::generate;
        if let Err(e) = std::fs::create_dir_all(dir) {
            err.other
                .push(format!("cannot create {}: {e}", dir.display()));
            return;
        }
        let (rt_name, rt_text) = target.runtime();
        let rt = dir.join(rt_name);
        if let Err(e) = write_if_changed(&rt, rt_text) {
            err.other
                .push(format!("cannot write {}: {e}", rt.display()));
        }
        let text = match crate::read_schema_file(schema) {
            Ok(t) => t,
            Err(e) => {
                err.other
                    .push(format!("cannot read {}: {e}", schema.display()));
                return;
            }
        };
        let display = schema.display().to_string();
        match generate(&text, &display, schema, &self.opts.include_paths, target) {
            Ok(code) => {
                let out = dir.join(format!("{stem}.{}", target.extension()));
                if let Err(e) = write_if_changed(&out, &code) {
                    err.other
                        .push(format!("cannot write {}: {e}", out.display()));
                }
            }
            Err(d) => err.diags.extend(d),
        }
    }
}

/// Writes `text` to `path` unless the file already holds exactly that text (so its
/// modification time, which cargo compares, changes only with its content).
pub fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).ok().as_deref() == Some(text) {
        return Ok(());
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh, empty folder under the system's temporary directory.
    fn temp_dir(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("statepack-builder-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    const GOOD: &str = "meta:\n  id: game\n  endian: le\nseq:\n  - id: hp\n    type: u2\n  - id: pos\n    type: common_vec\nimports: []\n";

    #[test]
    fn a_broken_schema_fails_with_its_diagnostics_and_no_panic() {
        let dir = temp_dir("broken");
        let schema = dir.join("broken.ksy");
        std::fs::write(
            &schema,
            "meta:\n  id: broken\nseq:\n  - id: hp\n    type: u9\n",
        )
        .unwrap();
        let out = dir.join("out");
        let err = Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .compile(&[&schema])
            .unwrap_err();
        assert_eq!(err.diags.len(), 1, "{err}");
        let d = &err.diags[0];
        assert_eq!(d.file, schema.display().to_string());
        assert_eq!((d.pos.line, d.pos.col), (5, 11), "{err}");
        let text = format!("{err:?}");
        assert!(
            text.contains(&format!("{}:5:11: error:", schema.display())),
            "{text}"
        );
        assert!(!out.join("broken.rs").exists());
        // YAML that does not parse is a diagnostic too.
        std::fs::write(&schema, "meta: [\n").unwrap();
        let err = Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .compile(&[&schema])
            .unwrap_err();
        assert!(!err.diags.is_empty());
        assert!(err.to_string().contains("broken.ksy:"), "{err}");
        // A missing file is an error, not a panic.
        let err = Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .compile(&[dir.join("missing.ksy")])
            .unwrap_err();
        assert!(err.other[0].starts_with("cannot read"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn folders_imports_include_paths_and_write_if_changed() {
        let dir = temp_dir("folders");
        std::fs::create_dir_all(dir.join("schema")).unwrap();
        std::fs::create_dir_all(dir.join("shared")).unwrap();
        std::fs::write(
            dir.join("shared/common_vec.ksy"),
            "meta:\n  id: common_vec\n  endian: le\nseq:\n  - id: x\n    type: s2\n  - id: y\n    type: s2\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("schema/game.ksy"),
            GOOD.replace("imports: []\n", "").replace(
                "  endian: le\n",
                "  endian: le\n  imports:\n    - /common_vec\n",
            ),
        )
        .unwrap();
        std::fs::write(dir.join("schema/notes.txt"), "not a schema").unwrap();
        let out = dir.join("out");
        let b = Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .include_path(dir.join("shared"));
        let got = b.compile(&[dir.join("schema")]).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].stem, "game");
        assert_eq!(
            got[0].imports,
            vec![dir.join("shared").join("common_vec.ksy")]
        );
        let file = out.join("game.rs");
        assert_eq!(got[0].out_file.as_deref(), Some(file.as_path()));
        let code = std::fs::read_to_string(&file).unwrap();
        assert!(code.contains("pub struct CommonVec"), "{code}");
        assert!(code.contains("::statepack_runtime::require_interface!(5);"));
        // Unchanged text is not rewritten.
        let stamp = std::fs::metadata(&file).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        b.compile(&[dir.join("schema")]).unwrap();
        assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), stamp);
        // Without the include path the import is not found, and the error says where it looked.
        let err = Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .compile(&[dir.join("schema/game.ksy")])
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("imported schema `/common_vec` not found"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn serde_off_and_extra_derives() {
        let dir = temp_dir("options");
        let schema = dir.join("plain.ksy");
        std::fs::write(
            &schema,
            "meta:\n  id: plain\n  endian: le\nseq:\n  - id: hp\n    type: u2\n",
        )
        .unwrap();
        let on = Builder::new().generate(&schema).unwrap().code;
        assert!(on.contains("__serde::Serialize"), "{on}");
        assert!(
            on.contains("#[serde(crate = \"::statepack_runtime::serde\")]"),
            "{on}"
        );
        assert!(on.contains("::statepack_runtime::require_serde!();"));
        let off = Builder::new()
            .serde(false)
            .derive("Eq")
            .generate(&schema)
            .unwrap()
            .code;
        assert!(!off.contains("serde"), "{off}");
        assert!(off.contains("PartialEq, Eq)]"), "{off}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn two_schemas_with_one_stem_are_refused() {
        let dir = temp_dir("stems");
        std::fs::create_dir_all(dir.join("a")).unwrap();
        std::fs::create_dir_all(dir.join("b")).unwrap();
        for d in ["a", "b"] {
            std::fs::write(
                dir.join(d).join("x.ksy"),
                "meta:\n  id: x\nseq:\n  - id: v\n    type: u1\n",
            )
            .unwrap();
        }
        let err = Builder::new()
            .cargo_metadata(false)
            .out_dir(dir.join("out"))
            .compile(&[dir.join("a"), dir.join("b")])
            .unwrap_err();
        assert!(
            err.other[0].contains("would both be generated as x.rs"),
            "{err}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `Builder::luau` writes each schema's Luau ModuleScript and the runtime module beside
    /// the Rust; a construct the Luau backend refuses fails the build by name.
    #[test]
    fn luau_modules_are_written_beside_the_rust() {
        let dir = temp_dir("luau");
        let schema = dir.join("hp.ksy");
        std::fs::write(
            &schema,
            "meta:\n  id: hp\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: hp\n    type: u2\n    repeat: expr\n    repeat-expr: n\n",
        )
        .unwrap();
        let (out, lua) = (dir.join("out"), dir.join("luau"));
        Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .luau(&lua)
            .compile(&[&schema])
            .unwrap();
        assert!(out.join("hp.rs").exists());
        let module = std::fs::read_to_string(lua.join("hp.luau")).unwrap();
        assert!(module.contains("statepack"), "{module}");
        assert!(lua.join("statepack.luau").exists());
        // A 64-bit bit field is more than a Luau number holds exactly: refused by name.
        std::fs::write(
            &schema,
            "meta:\n  id: hp\n  endian: le\nseq:\n  - id: wide\n    type: b64\n",
        )
        .unwrap();
        let err = Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .luau(&lua)
            .compile(&[&schema])
            .unwrap_err();
        assert!(!err.diags.is_empty(), "{err}");
        assert!(err.to_string().contains("wide"), "{err}");
    }

    /// `Builder::lua51` writes each schema's Lua 5.1 reader and the runtime beside the Rust;
    /// with the 32-bit-float profile, a u4 without a bound fails the build by name.
    #[test]
    fn lua51_modules_are_written_beside_the_rust() {
        let dir = temp_dir("lua51");
        let schema = dir.join("hp.ksy");
        std::fs::write(
            &schema,
            "meta:\n  id: hp\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: hp\n    type: u2\n    repeat: expr\n    repeat-expr: n\n  - id: total\n    type: u4\n",
        )
        .unwrap();
        let (out, lua) = (dir.join("out"), dir.join("lua51"));
        Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .lua51(&lua)
            .compile(&[&schema])
            .unwrap();
        assert!(out.join("hp.rs").exists());
        let module = std::fs::read_to_string(lua.join("hp.lua")).unwrap();
        assert!(
            module.contains("S.column(r, N(v.n), \"u16le\", \"hp\")"),
            "{module}"
        );
        assert!(lua.join("statepack51.lua").exists());
        let err = Builder::new()
            .cargo_metadata(false)
            .out_dir(&out)
            .lua51(&lua)
            .lua51_f32_profile(true)
            .compile(&[&schema])
            .unwrap_err();
        assert_eq!(err.diags.len(), 1, "{err}");
        assert!(err.to_string().contains("`total` (u4)"), "{err}");
        assert!(err.to_string().contains("hp.ksy:11:5"), "{err}");
    }
}
