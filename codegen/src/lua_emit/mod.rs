//! Lua-family backends over the checked IR: `--target luau` (readers and writers for
//! Roblox's Luau, on the `buffer` library) and `--target lua51` (readers for Lua 5.1, by
//! arithmetic, with an optional 32-bit-float profile).
//!
//! A backend here only consumes the schema [`crate::load_checked`] gives (loaded, imports
//! resolved, `_parent`/`_root` lowered to context params, every check of the Rust generator
//! passed); it never reads YAML. What a backend cannot express is refused with a
//! [`Diag`] naming the construct (file:line:col, key path, hint), never emitted as code that
//! reads something else. The module layout, number rules and limits are in `docs/luau.md`
//! and `docs/lua.md`.

pub mod expr;
mod lua51;
mod luau;
mod shared;

pub use lua51::{f32_profile, Lua51Options};

use crate::diag::Diag;
use crate::ir::Endian;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A Lua-family target of the generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Luau (Roblox): one ModuleScript per schema, `.luau`, requiring the runtime module
    /// `statepack` ([`LUAU_RUNTIME`]) beside it.
    Luau,
    /// Lua 5.1 (engines such as Recoil): one reader module per schema, `.lua`, a function of
    /// the runtime `statepack51.lua` ([`LUA51_RUNTIME`]), with its options.
    Lua51(Lua51Options),
}

impl Target {
    /// The target named on the command line (`luau`, `lua51`; the options at their
    /// defaults).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "luau" => Some(Target::Luau),
            "lua51" => Some(Target::Lua51(Lua51Options::default())),
            _ => None,
        }
    }

    /// File extension of generated modules, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Target::Luau => "luau",
            Target::Lua51(_) => "lua",
        }
    }

    /// The runtime module's file name and text, written beside the generated modules.
    pub fn runtime(self) -> (&'static str, &'static str) {
        match self {
            Target::Luau => ("statepack.luau", LUAU_RUNTIME),
            Target::Lua51(_) => ("statepack51.lua", LUA51_RUNTIME),
        }
    }
}

/// The Luau runtime module the generated modules require (`lua/luau/statepack.luau` of the
/// repository).
pub const LUAU_RUNTIME: &str = include_str!("../../../lua/luau/statepack.luau");

/// The Lua 5.1 runtime module the generated Lua 5.1 modules are given
/// (`lua/lua51/statepack51.lua` of the repository).
pub const LUA51_RUNTIME: &str = include_str!("../../../lua/lua51/statepack51.lua");

/// Generates the module for one schema's text. `file` names it in diagnostics and in the
/// header; imports are looked up from `path` and then `include_paths`. Errors: the schema's
/// own diagnostics, or a [`Diag`] for every construct the target cannot express.
pub fn generate(
    text: &str,
    file: &str,
    path: &Path,
    include_paths: &[PathBuf],
    target: Target,
) -> Result<String, Vec<Diag>> {
    let schema = crate::load_checked(text, file, path, include_paths)?;
    // The Lua readers read a positional instance with its type, so a type that contains
    // itself through one (read on first use by the Rust reader) would never end.
    let (_, cycles) = crate::sizes::min_lens(&schema);
    if let Some((name, pos)) = cycles.first() {
        let t = match target {
            Target::Luau => "luau",
            Target::Lua51(_) => "lua51",
        };
        return Err(vec![Diag::new(
            &schema.file,
            *pos,
            &format!("types.{name}"),
            format!("--target {t}: type `{name}` contains itself through a positional instance, which the Lua readers read with their type"),
            "read the file with the Rust reader, or break the cycle with `if`",
        )]);
    }
    if let Some(d) = unsupported_switch(&schema, target) {
        return Err(vec![d]);
    }
    match target {
        Target::Luau => luau::emit(&schema),
        Target::Lua51(opts) => lua51::emit(&schema, opts),
    }
}

/// A switch field with a `str` or `strz` case, which the Lua backends do not read yet
/// (refused by name rather than read as something else). `None` when `s` has none.
fn unsupported_switch(s: &crate::ir::Schema, target: Target) -> Option<Diag> {
    use crate::ir::FieldKind;
    let name = match target {
        Target::Luau => "luau",
        Target::Lua51(_) => "lua51",
    };
    for t in &s.types {
        for f in &t.fields {
            let FieldKind::Switch { cases, default, .. } = &f.kind else {
                continue;
            };
            let Some(n) = cases
                .iter()
                .map(|(_, n)| n)
                .chain(default.iter())
                .map(|n| s.type_name(n))
                .find(|n| crate::num_type::case_string(n).is_some())
            else {
                continue;
            };
            return Some(Diag::new(
                &s.file,
                f.pos_of("type"),
                &format!("{}.type", f.key_path),
                format!("--target {name}: switch case type `{n}` (a string) is not supported by the Lua backends yet"),
                "read and write this schema with the Rust reader or `decode --schema`",
            ));
        }
    }
    None
}

/// Generates every `*.ksy` of `schema_dir` into `out_dir` as `<stem>.<ext>`, in file-name
/// order, plus the runtime module; names in diagnostics are `<display_prefix>/<file name>`.
/// Returns the files written. Errors: the rendered diagnostics of every failing schema (the
/// others are still written).
pub fn generate_dir(
    schema_dir: &Path,
    out_dir: &Path,
    display_prefix: &str,
    target: Target,
) -> Result<Vec<String>, String> {
    let mut entries: Vec<_> = std::fs::read_dir(schema_dir)
        .map_err(|e| format!("cannot read {}: {e}", schema_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("ksy"))
        .collect();
    entries.sort();
    let mut diags = Vec::new();
    let mut written = Vec::new();
    let (rt_name, rt_text) = target.runtime();
    crate::write_if_changed(&out_dir.join(rt_name), rt_text)
        .map_err(|e| format!("cannot write {}: {e}", out_dir.join(rt_name).display()))?;
    written.push(rt_name.to_owned());
    for path in entries {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("?")
            .to_owned();
        let display = format!("{display_prefix}/{name}");
        let text = crate::read_schema_file(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        match generate(&text, &display, &path, &[], target) {
            Ok(code) => {
                let out = format!("{}.{}", name.trim_end_matches(".ksy"), target.extension());
                crate::write_if_changed(&out_dir.join(&out), &code)
                    .map_err(|e| format!("cannot write {out}: {e}"))?;
                written.push(out);
            }
            Err(d) => diags.extend(d),
        }
    }
    if diags.is_empty() {
        Ok(written)
    } else {
        Err(crate::render(&diags))
    }
}

/// The terminator rule of a text field `f` (`strz` when it has no size, else its own
/// `terminator`/`pad-right`, if any), or the error for an encoding the Lua runtimes do not
/// read (they read UTF-8, ASCII, UTF-16 and ISO-8859-1).
pub(super) fn text_term(
    f: &crate::ir::Field,
    sizeless: bool,
    encoding: &str,
) -> Result<Option<crate::ir::TermSpec>, String> {
    if !matches!(
        encoding,
        "UTF-8" | "ASCII" | "UTF-16LE" | "UTF-16BE" | "ISO-8859-1"
    ) {
        return Err(format!(
            "text in {encoding} (this backend reads UTF-8, ASCII, UTF-16 and ISO-8859-1)"
        ));
    }
    Ok(f.term
        .or(sizeless.then(|| crate::ir::TermSpec::strz(encoding))))
}

/// The cases of a switch (`arms`: key expression, code), of either backend, reader's or
/// writer's, as a chain of
/// `on == key` tests at indent `i0`, with `fallback` when none matches (only the fallback
/// when there is no case).
pub(super) fn case_chain(arms: &[(String, String)], fallback: &str, i0: &str) -> String {
    if arms.is_empty() {
        return fallback.to_owned();
    }
    let mut o = String::new();
    for (j, (k, code)) in arms.iter().enumerate() {
        let kw = if j == 0 { "if" } else { "elseif" };
        let _ = write!(o, "{i0}{kw} on == {k} then\n{code}");
    }
    let _ = write!(o, "{i0}else\n{fallback}{i0}end\n");
    o
}

/// `n` tabs.
pub(super) fn ind(n: usize) -> String {
    "\t".repeat(n)
}

/// `S.enter(c, seg)` and `S.leave(c)` of generated code written as the table operations
/// they are.
pub(super) fn inline_path_ops(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    for line in code.split_inclusive('\n') {
        let body = line.trim_start();
        let indent = &line[..line.len() - body.len()];
        let trimmed = body.trim_end();
        if let Some(args) = trimmed
            .strip_prefix("S.enter(")
            .and_then(|a| a.strip_suffix(')'))
        {
            if let Some((c, seg)) = args.split_once(", ") {
                if !c.contains(['(', ')', ' ']) && !seg.contains(['(', ')']) {
                    out.push_str(&format!("{indent}{c}.path[#{c}.path + 1] = {seg}\n"));
                    continue;
                }
            }
        }
        if let Some(c) = trimmed
            .strip_prefix("S.leave(")
            .and_then(|a| a.strip_suffix(')'))
        {
            if !c.contains(['(', ')', ' ', ',']) {
                out.push_str(&format!("{indent}{c}.path[#{c}.path] = nil\n"));
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

/// A table key: `name = ` or `["end"] = ` for reserved words.
pub(super) fn lua_key(name: &str) -> String {
    let d = expr::dot("", name);
    match d.strip_prefix('.') {
        Some(n) => n.to_owned(),
        None => d,
    }
}

type R<T> = Result<T, String>;

/// The runtime's read function for an integer (`u8`, `s16le`, `u32be`, ...).
pub(super) fn int_call(bytes: u8, signed: bool, endian: Endian) -> R<String> {
    let e = match endian {
        Endian::Le => "le",
        Endian::Be => "be",
        Endian::Computed => {
            return Err("an integer whose byte order is decided while reading".into())
        }
    };
    let k = if signed { "s" } else { "u" };
    Ok(if bytes == 1 {
        format!("{k}8")
    } else {
        format!("{k}{}{e}", u32::from(bytes) * 8)
    })
}

/// The runtime's read function for a switch case that names a number type (`u2`, `f4be`,
/// ...), in the schema's default byte order `default` when the name has none (little-endian
/// without one); `None` for a case that names a user type.
pub(super) fn number_case_call(tn: &str, default: Option<Endian>) -> R<Option<String>> {
    let Some((bytes, signed, float, e)) = crate::sem::number_type(tn) else {
        return Ok(None);
    };
    let e = e.or(default).unwrap_or(Endian::Le);
    Ok(Some(if float {
        format!(
            "f{}{}",
            u32::from(bytes) * 8,
            if e == Endian::Be { "be" } else { "le" }
        )
    } else {
        int_call(bytes, signed, e)?
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn luau(text: &str) -> Result<String, Vec<Diag>> {
        generate(text, "t.ksy", Path::new("t.ksy"), &[], Target::Luau)
    }

    #[test]
    fn refuses_what_a_double_cannot_hold_naming_the_field() {
        let d = luau("meta:\n  id: rec\n  endian: le\nseq:\n  - id: a\n    type: u1\n  - id: wide\n    type: b64\n")
            .unwrap_err();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].pos.line, d[0].pos.col), (7, 5));
        assert_eq!(d[0].key_path, "seq[1]");
        assert!(d[0].message.contains("b64"), "{}", d[0].message);
        assert!(!d[0].hint.is_empty());
        let d = luau(
            "meta:\n  id: rec\nseq:\n  - id: a\n    type: u1\n    valid: 18446744073709551615\n",
        )
        .unwrap_err();
        assert!(d[0].message.contains("beyond 2^53"), "{}", d[0].message);
    }

    #[test]
    fn emits_readers_writers_and_derived_counts() {
        let code = luau("meta:\n  id: rec\n  endian: be\nseq:\n  - id: n\n    type: u2\n  - id: xs\n    type: s4\n    repeat: expr\n    repeat-expr: n\n  - id: kind\n    type: u1\n    enum: k\nenums:\n  k:\n    1: one\n").unwrap();
        assert!(
            code.contains("function M.Rec.read(r: S.Reader): Rec"),
            "{code}"
        );
        assert!(code.contains("S.u16be(r, \"n\")"), "{code}");
        assert!(code.contains("v.n = #v.xs"), "{code}");
        assert!(code.contains("M.enums.k = { one = 1 }"), "{code}");
        assert!(
            code.contains("function M.decode(buf: buffer): Rec"),
            "{code}"
        );
        // A schema the Rust generator refuses is refused here with its diagnostics.
        assert!(luau("meta:\n  id: rec\nseq:\n  - id: a\n    type: nope\n").is_err());
    }

    fn lua51(text: &str, f32_profile: bool) -> Result<String, Vec<Diag>> {
        let t = Target::Lua51(Lua51Options { f32_profile });
        generate(text, "t.ksy", Path::new("t.ksy"), &[], t)
    }

    #[test]
    fn lua51_reads_columns_and_conditionals_without_luau_syntax() {
        let code = lua51("meta:\n  id: rec\n  endian: le\nseq:\n  - id: n\n    type: u2\n  - id: xs\n    type: s2\n    repeat: expr\n    repeat-expr: n\n  - id: f\n    type: u1\n    if: n > 1\ninstances:\n  pick:\n    value: 'n > 2 ? xs[0] & 255 : 7'\n", false).unwrap();
        assert!(code.contains("return function(SP)"), "{code}");
        assert!(
            code.contains("S.column(r, N(v.n), \"s16le\", \"xs\")"),
            "{code}"
        );
        assert!(
            code.contains("((((v.n > 2)) and {S.band(S.at(v.xs, 0), 255)} or {7})[1])"),
            "{code}"
        );
        assert!(!code.contains("bit32"), "{code}");
        assert!(!code.contains("+="), "{code}");
        assert!(code.contains("function M.open(src, inflate)"), "{code}");
    }

    #[test]
    fn f32_profile_names_the_field_and_where_it_is() {
        // A u4 without a bound, and a position that can exceed 2^24.
        let text = "meta:\n  id: rec\n  endian: le\nseq:\n  - id: big\n    type: u4\n  - id: block\n    type: u4\n    valid:\n      max: 16777215\ninstances:\n  ok:\n    pos: block * 64\n    type: u1\n  bad:\n    pos: block * 3\n    type: u1\n";
        let d = lua51(text, true).unwrap_err();
        assert_eq!(d.len(), 2, "{d:?}");
        assert!(d[0].message.contains("`big` (u4)"), "{}", d[0].message);
        assert_eq!((d[0].pos.line, d[0].pos.col), (5, 5));
        assert_eq!(d[0].key_path, "seq[0]");
        assert!(
            d[1].message.contains("position of `bad`"),
            "{}",
            d[1].message
        );
        assert!(d[1].message.contains("block * 3"), "{}", d[1].message);
        assert!(!d[1].hint.is_empty());
        // Without the profile the same schema generates.
        assert!(lua51(text, false).is_ok());
        // A counted list's count, derived on write, passes: the reader bounds it.
        assert!(lua51("meta:\n  id: rec\n  endian: le\nseq:\n  - id: n\n    type: u4\n  - id: xs\n    type: u2\n    repeat: expr\n    repeat-expr: n\n", true).is_ok());
    }
}
