//! The Luau backend: one ModuleScript per schema, over the runtime module
//! `lua/luau/statepack.luau` (Roblox's `buffer` library).
//!
//! Every user type becomes a table `M.<Type>` with `read(r, params...)` and
//! `write(w, value, params...)`; values are plain tables keyed by the schema's field names
//! (enum values are their integers, `M.enums.<enum>` maps names to integers and
//! `M.enumNames.<enum>` back), with `__type` naming the type read (the case a switch chose).
//! `M.decode(buf)` reads a whole buffer with the root type; `M.encode(value)` writes it and
//! returns the bytes. Counts, lengths and `-sp-sum-of` sums that a later field determines
//! are derived on write (and stored into the value written).

use super::expr::{dot, elem_kind, field_kind, lua_str, param_kind, param_local, Dialect, Kind};
use super::shared::{fixed_array, params_list, Backend, Core};
use super::{case_chain, ind, inline_path_ops, int_call, lua_key};
use crate::diag::Diag;
use crate::ir::{
    Endian, Field, FieldKind, ProcArg, Process, Repeat, Schema, Size, SrcExpr, TermSpec, TypeDef,
    Valid,
};
use crate::names::camel;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

type R<T> = Result<T, String>;

/// Emits the Luau module for a checked schema. Errors: every construct this backend cannot
/// express, as a [`Diag`] naming it (file:line:col, key path, hint).
pub fn emit(s: &Schema) -> Result<String, Vec<Diag>> {
    let mut e = Emitter {
        c: Core::new(s, Dialect::Luau),
        has_bits: s
            .types
            .iter()
            .any(|t| t.fields.iter().any(crate::bits::is_bit_field)),
        read_locals: s.types.len() + s.enums.len() <= MAX_MODULE_LOCALS,
        inline: inlinable(s),
        inlining: Vec::new(),
        // Any `_sizeof` in the schema (its expressions, conservatively its text).
        sizeof_used: format!("{s:?}").contains("_sizeof"),
        buf_in_scope: false,
        pos_local: false,
        sums: Vec::new(),
        elem_pos: false,
        elem_sums: Vec::new(),
        case_pos: false,
        elem_slot: false,
        case_slot: false,
        defer_enum: None,
        elem_byte: false,
        flat_slot: None,
        pending_enum: std::cell::RefCell::new(None),
    };
    let out = e.module();
    e.result(out)
}

struct Emitter<'a> {
    /// What both backends keep (schema, diagnostics, fresh names, minimum lengths, the
    /// field locals of the type being read).
    c: Core<'a>,
    /// Whether any type has a bit field: without one a reader's `nbits` stays 0, and the
    /// runs of plain numbers do not test it.
    has_bits: bool,
    /// Whether the types' read functions are called through module locals (one upvalue)
    /// rather than `M.Type.read` (two table look-ups): when the locals fit Luau's limit.
    read_locals: bool,
    /// Types whose read is written out where the one field of their type is read, instead
    /// of a call (see [`inlinable`]).
    inline: HashSet<String>,
    /// The types being written out inline, innermost last (a type is never inside itself).
    inlining: Vec<String>,
    /// Whether any expression uses `_sizeof`: only then do values carry `__sizeof`.
    sizeof_used: bool,
    /// Whether `__buf` and `__lim` of reader `r` are locals where the code goes.
    buf_in_scope: bool,
    /// Whether reader `r`'s position is in the local `__p` where the code goes (`r.pos` is
    /// behind it: set from `__p` before anything else reads it).
    pos_local: bool,
    /// The `-sp-sum-of` sums of the type being read that are added up while their list is
    /// read (see [`Emitter::sum_locals`]).
    sums: Vec<Sum<'a>>,
    /// Set by a list's loop for the element read next: when that element's type is written
    /// out in place, its body keeps the position in the loop's `__p` (declared by the loop,
    /// current at the body's start and end) instead of taking it from `r.pos` and storing
    /// it back. Taken (reset) by the body that honours it.
    elem_pos: bool,
    /// Set by a list's loop for the element read next: the sums over the list (local,
    /// member) that the element's body, when written out in place, adds its member to
    /// (from the member's local when a run read it). Taken by the body that adds them.
    elem_sums: Vec<(String, String)>,
    /// Whether the cases of the switch being read are written out in place with the
    /// position in the enclosing `__p` (each asks its body as `elem_pos` does); cleared
    /// inside each case's body.
    case_pos: bool,
    /// Set by a list's loop whose elements keep the position (see `elem_pos`) for the
    /// element read next: at the top level of that element's body the error path's next
    /// slot is `__pd` of path `__path` (locals the loop declares when they are used), so a
    /// switch's case there sets that slot instead of measuring the path twice per element.
    /// Taken by the body.
    elem_slot: bool,
    /// Whether the case of the switch being read sets the path's slot `__path[__pd]` for
    /// its segment (see `elem_slot`); cleared inside the case's value.
    case_slot: bool,
    /// The field, last of the run of numbers being read, whose enum check is left to the
    /// switch on it that follows (see [`Emitter::enum_deferrable`]).
    defer_enum: Option<String>,
    /// Set by a `repeat: eos` list's loop whose elements keep the position (its test is
    /// `__p < __lim`) for the element read next: at least one byte is left where that
    /// element's body starts, so a first run of one byte needs no test. Taken by the body.
    elem_byte: bool,
    /// Set by a switch's case that sets the path's slot (see `elem_slot`) when the case's
    /// type is read flat (see `Emitter::flat`): the segment (a Luau string) that the flat
    /// body puts into `__path[__pd]` only on its way to an error, instead of the case
    /// setting and clearing it around every value. Taken by the body.
    flat_slot: Option<String>,
    /// That check once the run left it: made by the switch's no-case branch, the only one
    /// a value outside the enum reaches (see [`PendingEnum`]).
    pending_enum: std::cell::RefCell<Option<PendingEnum>>,
}

/// An enum check a run of numbers left to the switch on the field that follows it: every
/// key of the switch is a value of the enum, so a value outside it takes the switch's
/// no-case branch, which makes the check first (the same error, field and offset).
struct PendingEnum {
    /// The local holding the field's value (the switch's selector).
    local: String,
    /// The enum.
    en: String,
    /// The field.
    field: String,
    /// The position after the run (`__p` or `r.pos`) and the field's offset back from it.
    pos: String,
    back: u32,
    /// Whether the field is unsigned (see `not_in_enum`).
    unsigned: bool,
}

/// A `-sp-sum-of` sum added up while its list is read.
struct Sum<'a> {
    /// The list field.
    list: &'a Field,
    /// The member of each element added.
    member: String,
    /// The local holding the sum so far.
    local: String,
}

super::shared::core_deref!(Emitter);

/// Locals a type's read keeps for the fields of its runs (see `Emitter::field_locals`).
const MAX_FIELD_LOCALS: usize = 16;

/// How deep types are written out inside each other (each level holds its locals).
const MAX_INLINE_DEPTH: usize = 4;

/// Types read in one place only (one field or switch case names them), without params,
/// instances, a byte order decided while reading or positional fields, other than the root:
/// their read is written out at that place, which saves a call and a table look-up per
/// value. The module still has their `read` function.
fn inlinable(s: &Schema) -> HashSet<String> {
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for t in &s.types {
        for f in &t.fields {
            match &f.kind {
                FieldKind::User { ty: name, .. } => {
                    *uses.entry(s.type_name(name)).or_default() += 1
                }
                FieldKind::Switch { cases, default, .. } => {
                    for n in cases.iter().map(|(_, n)| n).chain(default.iter()) {
                        *uses.entry(s.type_name(n)).or_default() += 1;
                    }
                }
                _ => {}
            }
        }
    }
    s.types
        .iter()
        .skip(1)
        .filter(|t| {
            uses.get(t.name.as_str()) == Some(&1)
                && t.params.is_empty()
                && t.instances.is_empty()
                && t.endian_switch.is_none()
                && t.fields.iter().all(|f| f.at.is_none())
        })
        .map(|t| t.name.clone())
        .collect()
}

/// Module-level locals the generator allows itself (enum name tables and read functions);
/// Luau allows 200 per function, the rest of the module's top level uses a few.
const MAX_MODULE_LOCALS: usize = 180;

/// The most fields a type read flat may have (each takes a local; see `Emitter::flat`).
const MAX_FLAT_FIELDS: usize = 16;

/// Luau name of a user type's table.
fn ty(name: &str) -> String {
    format!("M.{}", camel(name))
}

impl<'a> Emitter<'a> {
    /// How generated code calls type `tn`'s read function.
    fn read_fn(&self, tn: &str) -> String {
        if self.read_locals {
            format!("__read{}", camel(tn))
        } else {
            format!("{}.read", ty(tn))
        }
    }

    /// Whether field `g`'s `valid` rule (if any) may be checked inside a run of numbers,
    /// where the reader's position moves only at the run's end: a rule that does not use
    /// the stream (`_io`, `_sizeof`) nor a value instance (which may).
    fn valid_in_run(&self, t: &TypeDef, g: &Field) -> bool {
        let Some(rule) = &g.valid else {
            return true;
        };
        let srcs: Vec<&str> = match rule {
            Valid::Eq(e) | Valid::Expr(e) => vec![e.src.as_str()],
            Valid::Range(a, b) => a.iter().chain(b.iter()).map(|e| e.src.as_str()).collect(),
            Valid::AnyOf(l) => l.iter().map(|e| e.src.as_str()).collect(),
            Valid::InEnum => Vec::new(),
        };
        srcs.iter().all(|src| stream_free(t, src))
    }

    /// Whether field `f` (not in a run) is read with the position in `__p`: a conditional
    /// plain number or a short fixed array of them (the fast paths of `read_repeat`) whose
    /// condition does not use the stream, in a schema without bit fields.
    fn pos_local_item(&self, t: &TypeDef, f: &Field) -> bool {
        if self.has_bits || f.at.is_some() || !self.buf_in_scope {
            return false;
        }
        if f.cond.as_ref().is_some_and(|c| !stream_free(t, &c.src)) {
            return false;
        }
        match &f.repeat {
            Repeat::None => fast_elem_width(f).is_some() && self.enum_checked(f).is_none(),
            Repeat::Expr(e) => {
                matches!(e.expr, crate::expr::Expr::Int(1..=32))
                    && fast_elem_width(f).is_some()
                    && matches!(
                        f.kind,
                        FieldKind::Int {
                            enum_name: None,
                            ..
                        } | FieldKind::Float { .. }
                    )
            }
            _ => false,
        }
    }

    /// The lines that store `__p` into `r.pos` before a field-by-field read and take it
    /// back after, at indent `i0` plus one; empty outside a segment that keeps `__p`.
    fn pos_sync(&self, i0: &str) -> (String, String) {
        if self.pos_local {
            (
                format!("{i0}\tr.pos = __p\n"),
                format!("{i0}\t__p = r.pos\n"),
            )
        } else {
            (String::new(), String::new())
        }
    }

    /// The position of reader `r` in generated code: `__p` inside a segment that keeps it
    /// there, else `r.pos`.
    fn pos_of(&self, r: &str) -> String {
        if self.pos_local && r == "r" {
            "__p".into()
        } else {
            format!("{r}.pos")
        }
    }

    /// The reader's position in bits (`S.bitPos(r)`), or its byte position when no field is
    /// a bit field (the two then tell the same progress).
    fn bit_pos(&self, r: &str) -> String {
        if self.has_bits {
            format!("S.bitPos({r})")
        } else {
            format!("{r}.pos")
        }
    }

    /// `r.nbits == 0 and ` where a reader may be inside a byte, else nothing.
    fn aligned_test(&self, r: &str) -> String {
        if self.has_bits {
            format!("{r}.nbits == 0 and ")
        } else {
            String::new()
        }
    }

    fn module(&mut self) -> String {
        let s = self.s;
        let mut o = String::new();
        let _ = writeln!(
            o,
            "--!nonstrict\n-- @generated by statepack-codegen {} (--target luau) from {}.\n-- Do not edit: edit the schema and generate again (see docs/luau.md).",
            crate::GENERATOR_VERSION,
            s.file
        );
        if let Some(t) = &s.title {
            let _ = writeln!(o, "-- {}", t.replace('\n', " "));
        }
        o.push_str("local S = require(script.Parent.statepack)\n\nlocal M = {}\n\n");
        self.enum_tables(&mut o);
        // A local per enum's names table: a read's check is one upvalue index, not three.
        for en in &s.enums {
            let _ = writeln!(
                o,
                "local {} = {}",
                enum_names_local(&en.name),
                dot("M.enumNames", &en.name)
            );
        }
        o.push('\n');
        // Type annotations and tables.
        for t in &s.types {
            o.push_str(&self.type_decl(t));
        }
        for t in &s.types {
            let _ = writeln!(o, "{} = {{}}", ty(&t.name));
        }
        if self.read_locals {
            // Set once every read function is defined, before any is called.
            let names: Vec<String> = s.types.iter().map(|t| self.read_fn(&t.name)).collect();
            let _ = writeln!(
                o,
                "-- The read functions, called through these locals (one upvalue each).\nlocal {}",
                names.join(", ")
            );
        }
        o.push('\n');
        for t in &s.types {
            o.push_str(&self.reader(t));
            o.push_str(&self.writer(t));
        }
        if self.read_locals {
            for t in &s.types {
                let _ = writeln!(o, "{} = {}.read", self.read_fn(&t.name), ty(&t.name));
            }
            o.push('\n');
        }
        let root = &s.types[0];
        let params: Vec<String> = root.params.iter().map(|p| param_local(&p.id)).collect();
        let ps = params.iter().map(|p| format!(", {p}")).collect::<String>();
        // The path stack's push and pop, inline (no runtime call per nested value).
        let mut o = inline_path_ops(&o);
        let _ = writeln!(
            o,
            "--- Reads a whole buffer with the root type `{0}`. Errors: a table with `path`, `offset`, `kind`, `message` (see the runtime module).\nfunction M.decode(buf: buffer{ps}): {1}\n\tlocal r = S.reader(buf)\n\treturn {2}.read(r{ps})\nend\n\n--- Writes a value of the root type and returns the bytes. Errors: a value that does not fit its field, named with its path.\nfunction M.encode(v: {1}{ps}): buffer\n\tlocal w = S.writer()\n\t{2}.write(w, v{ps})\n\treturn S.finish(w)\nend\n\nreturn M",
            root.schema_name,
            camel(&root.name),
            ty(&root.name)
        );
        o
    }

    fn lua_type(&self, k: &Kind) -> String {
        match k {
            Kind::Int | Kind::Float | Kind::Enum(_) => "number".into(),
            Kind::Bool => "boolean".into(),
            Kind::Str | Kind::Bytes => "string".into(),
            Kind::User(ts) => {
                let names: Vec<String> = ts.iter().map(|t| camel(t)).collect();
                if names.len() == 1 {
                    names[0].clone()
                } else {
                    format!("({})", names.join(" | "))
                }
            }
            Kind::List(k) => format!("{{ {} }}", self.lua_type(k)),
            Kind::Any => "any".into(),
        }
    }

    fn type_decl(&mut self, t: &TypeDef) -> String {
        let mut o = String::new();
        if let Some(d) = &t.doc {
            for l in d.lines() {
                let _ = writeln!(o, "--- {l}");
            }
        }
        let _ = writeln!(
            o,
            "export type {} = {{\n\t__type: string,\n{}\t--- Bytes of a sized field after this value's `seq` (lenient rules), written back after it.\n\t__unread: string?,\n\t--- Padding bits dropped before a byte-aligned field after bit fields (lenient rules), by\n\t--- field name (`__end`: after the root's last field; `__unread`: at the end of a sized\n\t--- field's bytes), as read; written back. Absent means zero bits.\n\t__pads: {{ [string]: number }}?,",
            camel(&t.name),
            if self.sizeof_used {
                "\t--- Bytes the value took in its stream (kept when the schema uses `_sizeof`).\n\t__sizeof: number,\n"
            } else {
                ""
            }
        );
        if t.fields
            .iter()
            .any(|f| f.term.is_some() || matches!(f.kind, FieldKind::Str { size: None, .. }))
        {
            o.push_str("\t--- The bytes terminated fields had after their values (the terminator, the rest of\n\t--- their size, padding), by field name (a list by element for a repeated field), as\n\t--- read; written back.\n\t__tails: { [string]: any }?,\n");
        }
        if self.is_positional_root(t) {
            o.push_str("\t--- The bytes after the last `seq` field up to the furthest byte a positional instance\n\t--- read, as read; written back after the `seq`, under the instances (which replace them).\n\t__beyond: string?,\n");
        }
        for f in &t.fields {
            if let Some(k) = kept_pos(f) {
                let _ = writeln!(
                    o,
                    "\t--- Where `{}` was read (`pos: {}`, from the start of its stream): written back there.\n\t{k}: number?,",
                    f.id,
                    f.at.as_ref().map(|a| a.pos.src.as_str()).unwrap_or("")
                );
            }
            let k = field_kind(self.s, f);
            let opt = if f.cond.is_some() || matches!(f.kind, FieldKind::Switch { .. }) {
                "?"
            } else {
                ""
            };
            let _ = writeln!(o, "\t{}: {}{opt},", lua_key(&f.id), self.lua_type(&k));
        }
        for p in t.params.iter().filter(|p| p.context.is_none()) {
            let _ = writeln!(
                o,
                "\t{}: {},",
                lua_key(&p.id),
                self.lua_type(&param_kind(self.s, &p.kind))
            );
        }
        for i in &t.instances {
            let k = super::expr::instance_kind(self.s, t, i).unwrap_or(Kind::Any);
            let _ = writeln!(o, "\t{}: {}?,", lua_key(&i.id), self.lua_type(&k));
        }
        o.push_str("}\n\n");
        o
    }

    // ---------------------------------------------------------------- reader

    fn reader(&mut self, t: &'a TypeDef) -> String {
        let params = params_list(t);
        format!(
            "--- Reads one `{}` at the reader's position. Errors name the field path and byte offset.\nfunction {}.read(r: S.Reader{params}): {}\n{}\treturn v\nend\n\n",
            t.schema_name,
            ty(&t.name),
            camel(&t.name),
            self.read_body(t)
        )
    }

    /// A run of plain little-endian numbers (`run`, fields of `t` at its body's level): one
    /// check of the bytes left, then reads at constant offsets, each value also kept in a
    /// local for later expressions (up to [`MAX_FIELD_LOCALS`]); when the run does not fit,
    /// the field-by-field code names the first field that does not (the same path and
    /// offset).
    fn read_run(&mut self, t: &'a TypeDef, run: &[&'a Field], sure: bool) -> String {
        let mut o = String::new();
        let total: u32 = run.iter().filter_map(|g| fast_width(g)).sum();
        let room = MAX_FIELD_LOCALS.saturating_sub(self.field_locals.len());
        let locals: Vec<(String, String)> = run
            .iter()
            .filter(|g| !self.field_locals.iter().any(|(n, _)| n == &g.id))
            .take(room)
            .map(|g| (g.id.clone(), format!("__f_{}", g.id)))
            .collect();
        let local_of = |id: &str| locals.iter().find(|(n, _)| n == id).map(|(_, l)| l.clone());
        if !locals.is_empty() {
            let names: Vec<&str> = locals.iter().map(|(_, l)| l.as_str()).collect();
            let _ = writeln!(o, "\tlocal {}", names.join(", "));
        }
        let pos = self.pos_of("r");
        // With the position in `__p`, the reads take `__buf` and `__p` as they are;
        // else the position is taken into a local once.
        let (b, p) = if pos == "__p" {
            ("__buf", "__p")
        } else {
            ("b", "p")
        };
        if sure && total == 1 && pos == "__p" {
            // The loop's test left at least the one byte (Luau compiles only this branch).
            o.push_str("\tif true then\n");
        } else {
            let _ = writeln!(
                o,
                "\tif {}__lim - {pos} >= {total} then",
                self.aligned_test("r")
            );
        }
        if p == "p" {
            let _ = writeln!(o, "\t\tlocal b, p = __buf, {pos}");
        }
        let mut off = 0;
        for g in run {
            let call = fast_call(g);
            let at = plus(p, off);
            let dst = dot("v", &g.id);
            let val = match local_of(&g.id) {
                Some(l) => {
                    let _ = writeln!(o, "\t\t{l} = buffer.{call}({b}, {at})\n\t\t{dst} = {l}");
                    l
                }
                None => {
                    let _ = writeln!(o, "\t\t{dst} = buffer.{call}({b}, {at})");
                    dst.clone()
                }
            };
            let deferred = self.defer_enum.as_deref() == Some(g.id.as_str())
                && local_of(&g.id).as_deref() == Some(val.as_str());
            if let Some(en) = self.enum_checked(g).filter(|_| !deferred) {
                let _ = writeln!(
                    o,
                    "\t\tif {} then\n\t\t\tS.failAt(r, {at}, {}, \"enum\", `{{{val}}} is not a value of enum {en}`)\n\t\tend",
                    self.not_in_enum(&en, &val, unsigned(g)),
                    lua_str(g.id.as_bytes()),
                );
            }
            if g.valid.is_some() {
                let fname = lua_str(g.id.as_bytes());
                match self.valid_check(t, g, "r", &val, &at, &fname, None, 3) {
                    Ok(code) => {
                        let _ = write!(o, "\t\tdo\n{code}\t\tend\n");
                    }
                    Err(m) => self.diag(g.pos, &g.key_path, m),
                }
            }
            if deferred {
                *self.pending_enum.borrow_mut() = Some(PendingEnum {
                    local: val.clone(),
                    en: self.enum_checked(g).unwrap_or_default(),
                    field: g.id.clone(),
                    pos: pos.clone(),
                    back: total - off,
                    unsigned: unsigned(g),
                });
            }
            off += fast_width(g).unwrap_or(0);
        }
        let _ = writeln!(o, "\t\t{pos} = {}\n\telse", plus(p, total));
        if pos == "__p" {
            o.push_str("\t\tr.pos = __p\n");
        }
        // The field-by-field path (its fields do not take the one-number fast path).
        let saved_buf = std::mem::replace(&mut self.buf_in_scope, false);
        let saved_pos = std::mem::replace(&mut self.pos_local, false);
        for g in run {
            match self.read_field(t, g) {
                Ok(code) => {
                    o.push_str("\tdo\n");
                    o.push_str(&code);
                    o.push_str("\tend\n");
                }
                Err(m) => self.diag(g.pos, &g.key_path, m),
            }
        }
        self.buf_in_scope = saved_buf;
        self.pos_local = saved_pos;
        if pos == "__p" {
            o.push_str("\t\t__p = r.pos\n");
        }
        if !locals.is_empty() {
            let names: Vec<&str> = locals.iter().map(|(_, l)| l.as_str()).collect();
            let vals: Vec<String> = locals.iter().map(|(n, _)| dot("v", n)).collect();
            let _ = writeln!(o, "\t\t{} = {}", names.join(", "), vals.join(", "));
        }
        o.push_str("\tend\n");
        self.field_locals.extend(locals);
        o
    }

    /// The statements of `t`'s read function before its `return v`, one tab in: they read
    /// a value of `t` from reader `r` into a new table `v`.
    fn read_body(&mut self, t: &'a TypeDef) -> String {
        if self.flat(t) {
            return self.flat_body(t);
        }
        // What a list's loop asked of its element (see `elem_pos`, `elem_sums`).
        let shared_pos = std::mem::take(&mut self.elem_pos);
        let elem_slot = std::mem::take(&mut self.elem_slot) && shared_pos;
        let elem_byte = std::mem::take(&mut self.elem_byte)
            && shared_pos
            && t.endian_switch.is_none()
            && !self.sizeof_used;
        let elem_sums = std::mem::take(&mut self.elem_sums);
        let saved_case_pos = std::mem::take(&mut self.case_pos);
        let saved_case_slot = std::mem::take(&mut self.case_slot);
        // A check pending for a switch around is not this body's to make.
        let saved_pending = self.pending_enum.borrow_mut().take();
        let saved_locals = std::mem::take(&mut self.field_locals);
        let saved_of = self.locals_of.replace(t.name.clone());
        let mut o = String::new();
        let _ = writeln!(
            o,
            "\tlocal v = {{ __type = {}{} }}",
            lua_str(t.name.as_bytes()),
            value_keys(t, self.sizeof_used)
        );
        if self.sizeof_used {
            o.push_str("\tlocal __start = r.pos\n");
        }
        let saved_sums = self.sum_locals(t, &mut o);
        let saved_buf = self.buf_in_scope;
        if !self.buf_in_scope
            && t.fields.iter().any(|f| {
                f.at.is_none()
                    && (fast_number_width(f).is_some()
                        || matches!(&f.kind, FieldKind::User { ty: name, size: None } if self.inline.contains(self.s.type_name(name)))
                        || matches!(&f.kind, FieldKind::Switch { cases, size: None, .. }
                            if cases.iter().any(|(_, n)| self.inline.contains(self.s.type_name(n)))))
            })
        {
            // The reader's buffer and end, which its runs of numbers test and read.
            o.push_str("\tlocal __buf, __lim = r.buf, r.limit\n");
            self.buf_in_scope = true;
        }
        let saved_pos = std::mem::replace(&mut self.pos_local, false);
        let keeps_pos = !self.has_bits
            && self.buf_in_scope
            && t.fields
                .iter()
                .any(|f| f.at.is_none() && fast_number_width(f).is_some());
        if keeps_pos && !shared_pos {
            // The position while plain numbers are read one after another (see `pos_local`).
            o.push_str("\tlocal __p\n");
        }
        // An element of a list whose loop keeps the position: `__p` is current here.
        self.pos_local = shared_pos;
        if let Some(sw) = &t.endian_switch {
            match self.decide_endian(t, sw, "r", false) {
                Ok(code) => o.push_str(&code),
                Err(m) => self.diag(sw.pos, &sw.key_path, m),
            }
        }
        let mut unaligned = false;
        let mut i = 0;
        // Where the code of the field after the last run starts.
        let mut enum_at = 0;
        while i < t.fields.len() {
            // An enum check the switch after the last run did not make (never expected once
            // the switch is read) is made between the two.
            if i > 0 && o.len() > enum_at {
                if let Some(pe) = self.pending_enum.borrow_mut().take() {
                    o.insert_str(enum_at, &self.enum_check_at(&pe, 1));
                }
            }
            let f = &t.fields[i];
            if f.at.is_none() {
                let bit_field = crate::bits::is_bit_field(f);
                if unaligned && !bit_field && f.strict {
                    let _ = writeln!(o, "\tS.alignStrict(r, {})", lua_str(f.id.as_bytes()));
                } else if unaligned && !bit_field {
                    // Lenient rules: the padding bits before a byte-aligned field may be
                    // anything; kept in `__pads` and written back.
                    let _ = writeln!(
                        o,
                        "\tif r.nbits ~= 0 then S.keepPad(r, v, {}) end",
                        lua_str(f.id.as_bytes())
                    );
                }
                unaligned = bit_field;
            }
            // A run of plain little-endian numbers: one check of the bytes left, then reads
            // at constant offsets; when the run does not fit, the field-by-field code below
            // names the first field that does not (the same path and offset).
            let run: Vec<&'a Field> = t.fields[i..]
                .iter()
                .take_while(|g| fast_width(g).is_some() && self.valid_in_run(t, g))
                .collect();
            // Numbers read one after another keep the position in `__p`; anything else
            // reads and moves `r.pos`.
            let fast_item = keeps_pos && (!run.is_empty() || self.pos_local_item(t, f));
            // A conditional field of another kind, whose condition does not use the stream,
            // stores and takes back the position inside its `if` only (it is often skipped).
            let cond_only = !fast_item
                && run.is_empty()
                && self.pos_local
                && f.at.is_none()
                && f.cond.as_ref().is_some_and(|c| stream_free(t, &c.src));
            if cond_only {
                self.pos_local = false;
                match self.read_field(t, f) {
                    Ok(code) => {
                        let (head, rest) = code.split_once('\n').unwrap_or((&code, ""));
                        let body = rest.strip_suffix("\tend\n").unwrap_or(rest);
                        let _ = write!(
                            o,
                            "\tdo\n{head}\n\t\tr.pos = __p\n{body}\t\t__p = r.pos\n\tend\n\tend\n"
                        );
                    }
                    Err(m) => self.diag(f.pos, &f.key_path, m),
                }
                self.pos_local = true;
                i += 1;
                continue;
            }
            if !fast_item && self.pos_local && self.switch_keeps_pos(t, f) {
                // A switch whose cases are all written out in place: they keep the
                // position in `__p` too (see `case_pos`).
                self.case_pos = true;
                // At the element's top level the path's next slot is the loop's `__pd`.
                self.case_slot = elem_slot;
                let code = self.read_field(t, f);
                self.case_pos = false;
                self.case_slot = false;
                match code {
                    Ok(code) => {
                        let _ = write!(o, "\tdo\n{code}\tend\n");
                    }
                    Err(m) => self.diag(f.pos, &f.key_path, m),
                }
                i += 1;
                continue;
            }
            if fast_item && !self.pos_local {
                o.push_str("\t__p = r.pos\n");
                self.pos_local = true;
            } else if !fast_item && self.pos_local {
                o.push_str("\tr.pos = __p\n");
                self.pos_local = false;
            }
            if !run.is_empty() {
                self.defer_enum = self.enum_deferrable(t, &run, t.fields.get(i + run.len()));
                let sure = i == 0 && elem_byte;
                o.push_str(&self.read_run(t, &run, sure));
                self.defer_enum = None;
                unaligned = false;
                i += run.len();
                enum_at = o.len();
                continue;
            }
            match self.read_field(t, f) {
                // In a block of its own: a type's locals stay below Luau's 200 per function.
                Ok(code) => {
                    o.push_str("\tdo\n");
                    o.push_str(&code);
                    o.push_str("\tend\n");
                }
                Err(m) => self.diag(f.pos, &f.key_path, m),
            }
            i += 1;
        }
        if let Some(pe) = self.pending_enum.borrow_mut().take() {
            o.insert_str(enum_at, &self.enum_check_at(&pe, 1));
        }
        let end_pos = self.pos_local;
        if self.pos_local && (!shared_pos || t.fields.iter().any(|f| f.sum_of.is_some())) {
            // (An element whose loop keeps the position stores it only for its sum checks,
            // which name `r.pos`.)
            o.push_str("\tr.pos = __p\n");
        }
        self.pos_local = saved_pos;
        // -sp-sum-of checks
        for f in &t.fields {
            if let Some((list, field, _)) = &f.sum_of {
                let local = format!("__sum_{}", f.id);
                let added = self.sums.iter().find(|u| u.local == local);
                let total = match added {
                    Some(u) => format!("\t\tlocal sum = {}\n", u.local),
                    None => format!(
                        "\t\tlocal sum = 0\n\t\tfor _, e in {} do\n\t\t\tsum += {} or 0\n\t\tend\n",
                        dot("v", list),
                        dot("e", field)
                    ),
                };
                let _ = writeln!(
                    o,
                    "\tif {0} ~= nil and {1} ~= nil then\n{total}\t\tif sum ~= {0} then\n\t\t\tS.failAt(r, r.pos, {2}, \"semantic\", `{3} is {{{0}}} but the sum of {4}.{5} is {{sum}}`)\n\t\tend\n\tend",
                    dot("v", &f.id),
                    dot("v", list),
                    lua_str(f.id.as_bytes()),
                    f.id,
                    list,
                    field
                );
            }
        }
        if unaligned && !self.s.strict && std::ptr::eq(t, &self.s.types[0]) {
            // The root ends inside a byte: the bits after its last bit field are kept.
            let _ = writeln!(o, "\tif r.nbits ~= 0 then S.keepPad(r, v, \"__end\") end");
        }
        if self.is_positional_root(t) {
            // The bytes after the seq up to the furthest byte a positional instance read
            // belong to the root: kept, and written back under the instances.
            let _ = writeln!(o, "\tv.__beyond = S.takeBeyond(r)");
        }
        if self.sizeof_used {
            let _ = writeln!(o, "\tv.__sizeof = r.pos - __start");
        }
        self.params_and_instances(t, &mut o, |c, x| match c {
            Some(c) => format!("if {c} then {x} else nil"),
            None => x.to_owned(),
        });
        // The element's member added to the sums over its list.
        for (local, member) in &elem_sums {
            match self.field_locals.iter().find(|(n, _)| n == member) {
                Some((_, l)) => {
                    let _ = writeln!(o, "\t{local} += {l}");
                }
                None => {
                    let _ = writeln!(o, "\t{local} += {} or 0", dot("v", member));
                }
            }
        }
        if shared_pos && !end_pos {
            o.push_str("\t__p = r.pos\n");
        }
        self.field_locals = saved_locals;
        self.locals_of = saved_of;
        self.buf_in_scope = saved_buf;
        self.sums = saved_sums;
        self.case_pos = saved_case_pos;
        self.case_slot = saved_case_slot;
        *self.pending_enum.borrow_mut() = saved_pending;
        o
    }

    /// Whether `t`, written out where it is read (not its own `read` function), is read
    /// flat (see [`Self::flat_body`]): no params, instances, computed byte order, bit fields
    /// or `_sizeof`, at most [`MAX_FLAT_FIELDS`] fields, each a plain little-endian number
    /// or a short fixed array of them, without an enum, read in place, with a `valid` rule
    /// and an `if` (if any) that use neither the stream nor anything but the type's own
    /// fields.
    fn flat(&self, t: &TypeDef) -> bool {
        let mut ids = HashSet::new();
        !self.has_bits
            && !self.sizeof_used
            && self.inlining.last() == Some(&t.name)
            && t.params.is_empty()
            && t.instances.is_empty()
            && t.endian_switch.is_none()
            && !t.fields.is_empty()
            && t.fields.len() <= MAX_FLAT_FIELDS
            && self.elem_sums.is_empty()
            && t.fields.iter().all(|f| {
                ids.insert(f.id.as_str())
                    && flat_size(f).is_some()
                    && self.valid_in_run(t, f)
                    && f.cond.as_ref().is_none_or(|c| {
                        stream_free(t, &c.src)
                            && !c
                                .src
                                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                                .any(|w| w.starts_with('_'))
                    })
            })
    }

    /// Whether a value of type `tn` read here (without arguments) is written out in place
    /// and read flat (see [`Self::call_read`], [`Self::flat`]).
    fn inlined_flat(&mut self, tn: &str) -> bool {
        let Some(t) = self.s.type_named(tn) else {
            return false;
        };
        if !self.inline.contains(tn)
            || self.inlining.len() >= MAX_INLINE_DEPTH
            || self.inlining.iter().any(|n| n == tn)
        {
            return false;
        }
        self.inlining.push(tn.to_owned());
        let flat = self.flat(t);
        self.inlining.pop();
        flat
    }

    /// The statements of a flat read of `t` (see [`Self::flat`]) that leave its value in
    /// `v`, as the body of a hand-written reader would: each value read into a local, one
    /// test of the bytes left for all the fields without `if` (at the start), one per
    /// conditional field for its own bytes and those of the fields without `if` after it,
    /// reads at constant offsets from `__p`, then the value's table made in one
    /// constructor. A test that fails takes the reader back to the value's first byte and
    /// calls the type's own `read` function, which reads the same bytes field by field and
    /// so raises the error the failed test foresaw (with the field's path and offset): on
    /// the same bytes it takes the same branches and needs at least the bytes tested.
    fn flat_body(&mut self, t: &'a TypeDef) -> String {
        let shared_pos = std::mem::take(&mut self.elem_pos);
        let set_slot = match self.flat_slot.take() {
            Some(seg) => format!("__path[__pd] = {seg}; "),
            None => String::new(),
        };
        self.elem_slot = false;
        self.elem_byte = false;
        let saved_locals = std::mem::replace(
            &mut self.field_locals,
            t.fields
                .iter()
                .map(|f| (f.id.clone(), format!("__f_{}", f.id)))
                .collect(),
        );
        let saved_of = self.locals_of.replace(t.name.clone());
        let mut o = String::new();
        if !self.buf_in_scope {
            o.push_str("\tlocal __buf, __lim = r.buf, r.limit\n");
        }
        if !shared_pos {
            o.push_str("\tlocal __p = r.pos\n");
        }
        o.push_str("\tlocal __s0 = __p\n");
        let conds: Vec<String> = t
            .fields
            .iter()
            .filter(|f| f.cond.is_some())
            .map(|f| format!("__f_{}", f.id))
            .collect();
        if !conds.is_empty() {
            let _ = writeln!(o, "\tlocal {}", conds.join(", "));
        }
        // Bytes of the fields without `if` from field `i` on.
        let plain_from = |i: usize| -> u32 {
            t.fields[i..]
                .iter()
                .filter(|f| f.cond.is_none())
                .filter_map(flat_size)
                .map(|(k, w)| k * w)
                .sum()
        };
        let read_fn = self.read_fn(&t.name);
        let short = |need: u32, i0: &str| {
            format!("{i0}if __lim - __p < {need} then\n{i0}\t{set_slot}r.pos = __s0\n{i0}\t{read_fn}(r)\n{i0}end\n")
        };
        let need = plain_from(0);
        if need > 0 {
            o.push_str(&short(need, "\t"));
        }
        let mut off = 0u32;
        // The open `if` of the conditional fields just read: the field their conditions
        // test and their bits (see `exclusive_bit`).
        let mut chain: Option<(&str, Vec<i128>)> = None;
        for (i, f) in t.fields.iter().enumerate() {
            let Some((k, w)) = flat_size(f) else { continue };
            let l = format!("__f_{}", f.id);
            let call = fast_call(f);
            let bit = f.cond.as_ref().and_then(|c| bit_test(&c.expr));
            let joins = match (&chain, bit) {
                (Some((m, bits)), Some((n, b))) => {
                    *m == n && bits.iter().all(|&a| exclusive_bits(t, n, i, a, b))
                }
                _ => false,
            };
            if !joins && chain.take().is_some() {
                o.push_str("\tend\n");
            }
            let (i0, d) = match &f.cond {
                Some(c) => {
                    if off > 0 {
                        let _ = writeln!(o, "\t__p += {off}");
                        off = 0;
                    }
                    let word = if joins { "elseif" } else { "if" };
                    match self.ex(t, c, "r", None, None) {
                        Ok((c, _)) => {
                            let _ = writeln!(o, "\t{word} {c} then");
                        }
                        Err(m) => self.diag(f.pos, &f.key_path, m),
                    }
                    if let Some((n, b)) = bit {
                        chain.get_or_insert((n, Vec::new())).1.push(b);
                    }
                    o.push_str(&short(k * w + plain_from(i + 1), "\t\t"));
                    ("\t\t", 2)
                }
                None => ("\t", 1),
            };
            let decl = if f.cond.is_some() { "" } else { "local " };
            let at = plus("__p", off);
            if matches!(f.repeat, Repeat::None) {
                let _ = writeln!(o, "{i0}{decl}{l} = buffer.{call}(__buf, {at})");
            } else {
                let items: Vec<String> = (0..k)
                    .map(|j| format!("buffer.{call}(__buf, {})", plus("__p", off + j * w)))
                    .collect();
                let _ = writeln!(o, "{i0}{decl}{l} = {{ {} }}", items.join(", "));
            }
            if f.valid.is_some() {
                let fname = lua_str(f.id.as_bytes());
                match self.valid_check(t, f, "r", &l, &at, &fname, None, d + 1) {
                    Ok(code) => {
                        let code = code.replace("S.failAt(", &format!("{set_slot}S.failAt("));
                        let _ = write!(o, "{i0}do\n{code}{i0}end\n");
                    }
                    Err(m) => self.diag(f.pos, &f.key_path, m),
                }
            }
            off += k * w;
            if f.cond.is_some() {
                let _ = writeln!(o, "\t\t__p += {off}");
                if chain.is_none() {
                    o.push_str("\tend\n");
                }
                off = 0;
            }
        }
        if chain.is_some() {
            o.push_str("\tend\n");
        }
        if off > 0 {
            let _ = writeln!(o, "\t__p += {off}");
        }
        let members: Vec<String> = t
            .fields
            .iter()
            .map(|f| format!(", {} = __f_{}", lua_key(&f.id), f.id))
            .collect();
        let _ = writeln!(
            o,
            "\tlocal v = {{ __type = {}{} }}",
            lua_str(t.name.as_bytes()),
            members.concat()
        );
        if !shared_pos {
            o.push_str("\tr.pos = __p\n");
        }
        self.field_locals = saved_locals;
        self.locals_of = saved_of;
        o
    }

    /// Whether the enum check of the last field of `run` may be left to `next`, a switch on
    /// that field: a strict switch read as it stands, without a size or `_` case, whose
    /// selector is the field itself and whose keys are all values of the field's enum (so
    /// nothing runs between the two, and only a value outside the enum reaches the switch's
    /// no-case branch, which then makes the check; see [`PendingEnum`]).
    fn enum_deferrable(
        &mut self,
        t: &'a TypeDef,
        run: &[&'a Field],
        next: Option<&'a Field>,
    ) -> Option<String> {
        let g = run.last()?;
        let en = self.enum_checked(g)?;
        let f = next?;
        let FieldKind::Switch {
            on,
            cases,
            default: None,
            size: None,
            ..
        } = &f.kind
        else {
            return None;
        };
        if !f.strict || !r_free(f) || on.src.trim() != g.id {
            return None;
        }
        let values: Vec<i128> = self
            .s
            .enum_named(&en)?
            .values
            .iter()
            .map(|v| v.value)
            .collect();
        for (k, _) in cases {
            let (kx, _) = self.ex(t, k, "r", None, None).ok()?;
            let key: i128 = kx.trim().parse().ok()?;
            if !values.contains(&key) {
                return None;
            }
        }
        Some(g.id.clone())
    }

    /// The enum check `pe` at depth `d`: the error names the field at its offset.
    fn enum_check_at(&self, pe: &PendingEnum, d: usize) -> String {
        let i0 = ind(d);
        format!(
            "{i0}if {} then\n{i0}\tS.failAt(r, {} - {}, {}, \"enum\", `{{{}}} is not a value of enum {}`)\n{i0}end\n",
            self.not_in_enum(&pe.en, &pe.local, pe.unsigned),
            pe.pos,
            pe.back,
            lua_str(pe.field.as_bytes()),
            pe.local,
            pe.en
        )
    }

    /// Whether switch field `f` of `t` may be read with the position kept in `__p`: in
    /// place, unconditional, unsized, its selector and keys not reading the stream, and
    /// every case (the `_` one too) a user type written out in place (see
    /// [`Self::call_read`]), whose bodies then keep the position as a list's elements do.
    fn switch_keeps_pos(&self, t: &TypeDef, f: &Field) -> bool {
        let FieldKind::Switch {
            on,
            cases,
            default,
            size: None,
            ..
        } = &f.kind
        else {
            return false;
        };
        let in_place = |tn: &str| {
            self.s.type_named(tn).is_some()
                && self.inline.contains(tn)
                && self.inlining.len() < MAX_INLINE_DEPTH
                && !self.inlining.iter().any(|n| n == tn)
                && f.switch_args
                    .iter()
                    .all(|(n, a)| self.s.type_name(n) != tn || a.is_empty())
                && f.ctx_args
                    .iter()
                    .all(|(n, a)| self.s.ty(*n).name != tn || a.is_empty())
        };
        r_free(f)
            && stream_free(t, &on.src)
            && cases
                .iter()
                .all(|(k, tn)| stream_free(t, &k.src) && in_place(self.s.type_name(tn)))
            && default.iter().all(|tn| in_place(self.s.type_name(tn)))
    }

    /// Whether the elements of list `f`, read from reader `r`, may keep the position in a
    /// local of the loop (see `elem_pos`): `r`'s own buffer in locals, no bit field, no
    /// `_sizeof`, and a loop whose test does not read the stream (a count, or `repeat: eos`
    /// whose elements always take bytes, `progresses`).
    fn loop_keeps_pos(&self, f: &Field, r: &str, progresses: bool) -> bool {
        r == "r"
            && self.buf_in_scope
            && !self.has_bits
            && !self.sizeof_used
            && f.at.is_none()
            && matches!(f.kind, FieldKind::User { size: None, .. })
            && (matches!(f.repeat, Repeat::Expr(_))
                || (matches!(f.repeat, Repeat::Eos) && progresses))
    }

    /// Reads one element of list `f` into `e` at depth `d` (see [`Self::read_checked`]),
    /// asking a body written out in place to keep the position in the loop's `__p`
    /// (`keep_pos`) and to add to the sums over the list. Returns the code and whether the
    /// position was kept; the sums no body added are added here from `e`.
    fn read_list_elem(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &'a str,
        keep_pos: bool,
        i0: &str,
        d: usize,
    ) -> R<(String, bool)> {
        self.elem_pos = keep_pos;
        self.elem_slot = keep_pos;
        self.elem_sums = self
            .sums
            .iter()
            .filter(|u| std::ptr::eq(u.list, f))
            .map(|u| (u.local.clone(), u.member.clone()))
            .collect();
        let code = self.read_checked(t, f, r, "e", "nil", Some("i"), d);
        // What no body took (the element was not written out in place) is done here.
        let kept = keep_pos && !std::mem::take(&mut self.elem_pos);
        self.elem_slot = false;
        let left = std::mem::take(&mut self.elem_sums);
        let mut code = code?;
        for (local, member) in left {
            let _ = writeln!(code, "{i0}\t\t{local} += {} or 0", dot("e", &member));
        }
        Ok((code, kept))
    }

    /// The `-sp-sum-of` sums of `t` added up while their list is read (a list of user-type
    /// values read in `t`'s stream, in place), each in a local declared here (`o`), set as
    /// [`Self::sums`]; returns the sums of the type around, to restore after `t`'s body.
    fn sum_locals(&mut self, t: &'a TypeDef, o: &mut String) -> Vec<Sum<'a>> {
        let mut sums = Vec::new();
        for f in &t.fields {
            let Some((list, member, _)) = &f.sum_of else {
                continue;
            };
            let Some(l) = t.fields.iter().find(|g| g.id == *list) else {
                continue;
            };
            let added = l.at.is_none()
                && !l.varint
                && l.process.is_none()
                && !matches!(l.repeat, Repeat::None)
                && matches!(l.kind, FieldKind::User { .. });
            if added {
                let local = format!("__sum_{}", f.id);
                let _ = writeln!(o, "\tlocal {local} = 0");
                sums.push(Sum {
                    list: l,
                    member: member.clone(),
                    local,
                });
            }
        }
        std::mem::replace(&mut self.sums, sums)
    }

    /// Code deciding the byte order of a type whose `meta.endian` is a switch, into the
    /// local `p___is_le` (an error of kind `endian` when no case matches and there is no `_`).
    fn decide_endian(
        &mut self,
        t: &'a TypeDef,
        sw: &'a crate::ir::EndianSwitch,
        c: &str,
        write: bool,
    ) -> R<String> {
        let ex = |this: &mut Self, e: &SrcExpr| -> R<String> {
            if write {
                this.wex(t, e, None, None)
            } else {
                Ok(this.ex(t, e, "r", None, None)?.0)
            }
        };
        let on = ex(self, &sw.on)?;
        let mut o = format!("\tlocal p___is_le\n\tdo\n\t\tlocal on = {on}\n");
        let mut arms = Vec::new();
        for (k, e) in &sw.cases {
            let k = ex(self, k)?;
            arms.push((k, format!("\t\t\tp___is_le = {}\n", *e == Endian::Le)));
        }
        let fallback = match sw.default {
            Some(e) => format!("p___is_le = {}", e == Endian::Le),
            None => format!(
                "S.fail({c}, nil, \"endian\", `the byte order is undecided: no case of meta.endian matches {{S.show(on)}}`)"
            ),
        };
        let indent = if arms.is_empty() { "\t\t" } else { "\t\t\t" };
        o.push_str(&case_chain(&arms, &format!("{indent}{fallback}\n"), "\t\t"));
        o.push_str("\tend\n");
        Ok(o)
    }

    fn read_field(&mut self, t: &'a TypeDef, f: &'a Field) -> R<String> {
        let fname = lua_str(f.id.as_bytes());
        let target = dot("v", &f.id);
        let (mut o, depth) = self.cond_open(t, f)?;
        let mut reader = "r".to_string();
        if let Some(x) = f.at.as_ref().and_then(|a| a.io_later.as_ref()) {
            return Err(format!(
                "`io: _root.{x}._io` where `{x}` is read after the type holding `{}` (read on first use)",
                f.id
            ));
        }
        if let Some((at, io)) = f.at.as_ref().and_then(|a| Some((a, a.io_of.as_ref()?))) {
            // `io: X._io`: a reader over the substream `X` was read from (kept with `X`).
            self.io_type(t, f, io, false)?;
            let (x, _) = self.ex(t, io, "r", None, None)?;
            let rd = self.fresh("io");
            let leaked: &'a str = Box::leak(rd.clone().into_boxed_str());
            // `pos` is evaluated on the instance's own stream (`_io` there is the substream).
            let (pos, _) = self.ex(t, &at.pos, leaked, None, None)?;
            let _ = writeln!(
                o,
                "{0}local {rd} = S.foreignStream(r, {x}, {1}, {fname})\n{0}S.seekRel({rd}, {pos}, {fname})",
                ind(depth),
                lua_str(io.src.as_bytes())
            );
            reader = rd;
        } else if let Some(at) = &f.at {
            let (pos, _) = self.ex(t, &at.pos, "r", None, None)?;
            let io = self.fresh("io");
            let src = if at.whole { "S.rootOf(r)" } else { "S.view(r)" };
            // A `pos` computed from the stream (`_io.size - 8`) is kept: the writer, which
            // does not know the stream's size, puts the instance back there.
            let pos = match kept_pos(f) {
                Some(k) => {
                    let _ = writeln!(o, "{}{} = {pos}", ind(depth), dot("v", &k));
                    dot("v", &k)
                }
                None => pos,
            };
            let _ = writeln!(
                o,
                "{}local {io} = {src}\n{}S.seekRel({io}, {pos}, {fname})",
                ind(depth),
                ind(depth)
            );
            reader = io;
        }
        let body = self.read_repeat(t, f, &reader, &target, &fname, depth)?;
        o.push_str(&body);
        if f.at.is_some() {
            let _ = writeln!(o, "{}S.leaveInstance({reader})", ind(depth));
        }
        if f.cond.is_some() {
            o.push_str("\tend\n");
        }
        Ok(o)
    }

    fn read_repeat(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &str,
        target: &str,
        fname: &str,
        d: usize,
    ) -> R<String> {
        let mut o = String::new();
        let i0 = ind(d);
        if let Some(code) = Core::varint(f, r, target, fname, &i0) {
            return Ok(code);
        }
        let leaked: &'a str = Box::leak(r.to_owned().into_boxed_str());
        match &f.repeat {
            Repeat::None => {
                let slow = self.read_checked(t, f, leaked, target, fname, None, d)?;
                match fast_elem_width(f) {
                    // One plain number (a conditional one; a run takes the others): read
                    // here when it fits, else by the runtime, which names the field.
                    Some(w) if r == "r" && self.buf_in_scope && self.enum_checked(f).is_none() => {
                        let pos = self.pos_of(r);
                        let (sync, resync) = self.pos_sync(&i0);
                        let _ = writeln!(
                            o,
                            "{i0}if {}__lim - {pos} >= {w} then\n{i0}\t{target} = buffer.{}(__buf, {pos})\n{i0}\t{pos} += {w}\n{i0}else\n{sync}{slow}{resync}{i0}end",
                            self.aligned_test("r"),
                            fast_call(f)
                        );
                    }
                    _ => o.push_str(&slow),
                }
            }
            Repeat::Expr(e) => {
                let (n, _) = self.ex(t, e, leaked, None, None)?;
                let fixed = fixed_array(f, e);
                // A short fixed array of plain little-endian numbers: one check, one
                // table constructor; a short input takes the element-by-element path below.
                let fast = match (&e.expr, fast_elem_width(f)) {
                    (crate::expr::Expr::Int(k @ 1..=32), Some(w)) if fixed => Some((*k as u32, w)),
                    _ => None,
                };
                if let Some((k, w)) = fast {
                    let call = fast_call(f);
                    // With the position in `__p` and the buffer in `__buf`, read as they are.
                    let direct = r == "r" && self.buf_in_scope && self.pos_of(r) == "__p";
                    let (b, p) = if direct { ("__buf", "__p") } else { ("b", "p") };
                    let items: Vec<String> = (0..k)
                        .map(|j| format!("buffer.{call}({b}, {})", plus(p, j * w)))
                        .collect();
                    let take = if direct {
                        String::new()
                    } else {
                        format!(
                            "{i0}\tlocal b, p = {}, {}\n",
                            if r == "r" && self.buf_in_scope {
                                "__buf".to_owned()
                            } else {
                                format!("{r}.buf")
                            },
                            self.pos_of(r)
                        )
                    };
                    let _ = write!(
                        o,
                        "{i0}if {2}{3} - {5} >= {0} then\n{take}{4}{i0}\t{target} = {{ {1} }}\n{i0}\t{5} = {p} + {0}\n{i0}else\n{6}",
                        k * w,
                        items.join(", "),
                        self.aligned_test(r),
                        if r == "r" && self.buf_in_scope { "__lim".to_owned() } else { format!("{r}.limit") },
                        "",
                        self.pos_of(r),
                        self.pos_sync(&i0).0,
                    );
                }
                let _ = writeln!(o, "{i0}do\n{i0}\tlocal n = {n}");
                o.push_str(&self.count_check(f, fixed, r, fname, &i0));
                let (slot, index) = index_slot(f, r, &i0);
                let keep = self.loop_keeps_pos(f, r, false);
                let (elem, kept) = self.read_list_elem(t, f, leaked, keep, &i0, d + 2)?;
                let (take, store) = loop_pos(kept, &elem, &i0);
                let _ = writeln!(
                    o,
                    "{i0}\tlocal list = table.create(n)\n{i0}\tS.enter({r}, {fname})\n{slot}{take}{i0}\tfor i = 0, n - 1 do\n{index}{i0}\t\tlocal e\n{elem}{i0}\t\tlist[i + 1] = e\n{i0}\tend\n{store}{i0}\tS.leave({r})\n{i0}\tS.leave({r})\n{i0}\t{target} = list\n{i0}end"
                );
                if fast.is_some() {
                    let _ = writeln!(o, "{}{i0}end", self.pos_sync(&i0).1);
                }
            }
            Repeat::Eos | Repeat::Until(_) => {
                // An element that always takes bytes (a number, or a user type read in this
                // stream whose shortest encoding is not empty) needs no check that the list
                // moves on.
                let progresses = self.min_len(f) > 0
                    && f.term.is_none()
                    && f.process.is_none()
                    && !matches!(f.kind, FieldKind::User { size: Some(_), .. });
                let (slot, index) = index_slot(f, r, &i0);
                let keep = self.loop_keeps_pos(f, r, progresses);
                // The loop's test `__p < __lim` leaves the element at least one byte.
                self.elem_byte = keep && matches!(f.repeat, Repeat::Eos) && !self.has_bits;
                let elem = self.read_list_elem(t, f, leaked, keep, &i0, d + 2);
                self.elem_byte = false;
                let (elem, kept) = elem?;
                let (take, store) = loop_pos(kept, &elem, &i0);
                let _ = write!(
                    o,
                    "{i0}do\n{i0}\tlocal list = {{}}\n{i0}\tlocal i = 0\n{i0}\tS.enter({r}, {fname})\n{slot}{take}{i0}\twhile {} do\n{before}{index}{i0}\t\tlocal e\n{elem}",
                    match f.repeat {
                        Repeat::Eos if self.has_bits => format!("not S.isEof({r})"),
                        // The loop keeps the position in `__p` (the reader's end is `__lim`).
                        Repeat::Eos if kept => "__p < __lim".into(),
                        // No bit field: the reader is always on a byte boundary.
                        Repeat::Eos => format!("{r}.pos < {r}.limit"),
                        _ => "true".into(),
                    },
                    before = if progresses {
                        String::new()
                    } else {
                        format!("{i0}\t\tlocal before = {}\n", self.bit_pos(r))
                    },
                );
                // The element joins the list once its checks pass: while it is read, the
                // list's length is its index (see `index_slot`).
                if let Repeat::Until(u) = &f.repeat {
                    let k = elem_kind(self.s, f);
                    let (c, _) = self.ex(t, u, leaked, Some((k, "e")), Some("i"))?;
                    let _ = writeln!(
                        o,
                        "{i0}\t\tif {c} then\n{i0}\t\t\tlist[i + 1] = e\n{i0}\t\t\tbreak\n{i0}\t\tend"
                    );
                }
                let _ = writeln!(
                    o,
                    "{check}{i0}\t\tlist[i + 1] = e\n{i0}\t\ti += 1\n{i0}\tend\n{store}{i0}\tS.leave({r})\n{i0}\tS.leave({r})\n{i0}\t{target} = list\n{i0}end",
                    check = if progresses {
                        String::new()
                    } else {
                        format!("{i0}\t\tif {} == before then\n{i0}\t\t\tS.failAt({r}, {r}.pos, nil, \"semantic\", \"a repeated element took no bytes, so the list would never end\")\n{i0}\t\tend\n", self.bit_pos(r))
                    },
                );
            }
        }
        Ok(o)
    }

    /// One element into `dst`, then its `valid` rule and strict enum check.
    #[allow(clippy::too_many_arguments)]
    fn read_checked(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &'a str,
        dst: &str,
        fname: &str,
        index: Option<&'a str>,
        d: usize,
    ) -> R<String> {
        let mut o = String::new();
        let i0 = ind(d);
        let needs_at = f.valid.is_some() || self.enum_checked(f).is_some();
        if needs_at && matches!(f.kind, FieldKind::Bits { .. }) {
            // The byte holding the field's first bit, as the Rust reader names it.
            let _ = writeln!(o, "{i0}local at = {r}.pos - math.ceil({r}.nbits / 8)");
        } else if needs_at {
            let _ = writeln!(o, "{i0}local at = {r}.pos");
        }
        o.push_str(&self.read_elem(t, f, r, dst, fname, index, d)?);
        if let Some(en) = self.enum_checked(f) {
            let _ = writeln!(
                o,
                "{i0}if {} then\n{i0}\tS.failAt({r}, at, {fname}, \"enum\", `{{{dst}}} is not a value of enum {en}`)\n{i0}end",
                self.not_in_enum(&en, dst, unsigned(f))
            );
        }
        if f.valid.is_some() {
            o.push_str(&self.valid_check(t, f, r, dst, "at", fname, index, d)?);
        }
        Ok(o)
    }

    /// `f`'s `valid` rule checked on the value in `dst`, read at byte offset `at` (an
    /// expression); nothing when `f` has none.
    #[allow(clippy::too_many_arguments)]
    fn valid_check(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &'a str,
        dst: &str,
        at: &str,
        fname: &str,
        index: Option<&'a str>,
        d: usize,
    ) -> R<String> {
        let mut o = String::new();
        let i0 = ind(d);
        if let Some(rule) = &f.valid {
            let ev: &'a str = "e_valid";
            let _ = writeln!(o, "{i0}local {ev} = {dst}");
            let conds = self.valid_conds(t, f, r, ev, index, enum_names_local)?;
            if !conds.is_empty() {
                let _ = writeln!(
                    o,
                    "{i0}if not ({}) then\n{i0}\tS.failAt({r}, {at}, {fname}, \"valid\", `{{S.show({ev})}} {}`)\n{i0}end",
                    conds.join(" and "),
                    rule.describe().replace('`', "'").replace('{', "(").replace('}', ")")
                );
            }
        }
        Ok(o)
    }

    /// The test that the integer `x` is not a value of enum `en`: a range test when the
    /// values are the whole numbers lo..=hi (without its lower end when `x` is `unsigned`
    /// and lo is 0), else a look-up in the enum's names table.
    fn not_in_enum(&self, en: &str, x: &str, unsigned: bool) -> String {
        let vals: Option<Vec<i128>> = self
            .s
            .enum_named(en)
            .map(|e| e.values.iter().map(|v| v.value).collect());
        if let Some(mut vals) = vals {
            vals.sort_unstable();
            vals.dedup();
            if let (Some(&lo), Some(&hi)) = (vals.first(), vals.last()) {
                let exact = super::expr::EXACT;
                if lo.abs() <= exact
                    && hi.abs() <= exact
                    && (hi - lo) as u128 + 1 == vals.len() as u128
                {
                    if unsigned && lo == 0 {
                        return format!("{x} > {hi}");
                    }
                    return format!("{x} < {lo} or {x} > {hi}");
                }
            }
        }
        format!("{}[{x}] == nil", enum_names_local(en))
    }

    /// Code turning stored bytes `var` into the value (xor, rol, ror; zlib keeps the bytes).
    fn unprocess(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        var: &str,
        r: &'a str,
        index: Option<&'a str>,
        write: bool,
    ) -> R<String> {
        let code = self.unprocess_code(t, f, var, r, index, write)?;
        if !write || !code.contains("__noio") {
            return Ok(code);
        }
        // On write, a processor argument is evaluated where the reader evaluated it: after
        // the stored bytes (`_io.pos` there is the writer's position plus their length).
        let code = code.replace(
            "(__noio.pos - __noio.base)",
            &format!("(S.writerPos(w) + #{var})"),
        );
        if code.contains("__noio") {
            return Err(
                "a processor argument uses the stream (`_io.size`, `_io.eof`), which a writer does not know"
                    .into(),
            );
        }
        Ok(code)
    }

    /// [`Self::unprocess`]'s code before stream references are resolved for a writer.
    fn unprocess_code(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        var: &str,
        r: &'a str,
        index: Option<&'a str>,
        write: bool,
    ) -> R<String> {
        if f.term.is_some() && matches!(f.process, Some(Process::Zlib)) {
            return Err("`process: zlib` on a terminated field".into());
        }
        Ok(match &f.process {
            None | Some(Process::Zlib) => String::new(),
            Some(Process::Xor(ProcArg::Bytes(b))) => {
                format!("{var} = S.xorBytes({var}, {})", lua_str(b))
            }
            Some(Process::Xor(ProcArg::Expr(e))) => {
                let (k, kind) = self.ex(t, e, r, None, index)?;
                let k = if kind == Kind::Int {
                    format!("string.char(S.band({k}, 255))")
                } else {
                    k
                };
                format!("{var} = S.xorBytes({var}, {k})")
            }
            Some(Process::Rol(e)) | Some(Process::Ror(e)) => {
                let (n, _) = self.ex(t, e, r, None, index)?;
                let left = matches!(f.process, Some(Process::Rol(_))) != write;
                format!(
                    "{var} = S.rotateBytes({var}, {})",
                    if left { n } else { format!("-({n})") }
                )
            }
            Some(Process::Custom { name, .. }) => {
                return Err(format!("custom processor `{name}` (written in Rust)"))
            }
        })
    }

    /// Reads user type `tn` from reader `r` into `dst` (sized, processed, terminated).
    /// `dst = <a value of tn read from r>`: a call of its read function, or its read
    /// written out here in a block of its own (see [`inlinable`]).
    fn call_read(&mut self, tn: &str, r: &str, args: &str, dst: &str, d: usize) -> String {
        let i0 = ind(d);
        let def = self.s.type_named(tn).filter(|_| {
            args.is_empty()
                && self.inline.contains(tn)
                && self.inlining.len() < MAX_INLINE_DEPTH
                && !self.inlining.iter().any(|n| n == tn)
        });
        let Some(t) = def else {
            return format!("{i0}{dst} = {}({r}{args})\n", self.read_fn(tn));
        };
        // The diagnostics of the type are given once, by its read function.
        let diags = self.diags.len();
        self.inlining.push(tn.to_owned());
        // The same reader keeps the same buffer and end; another one has its own.
        let saved_buf = self.buf_in_scope;
        self.buf_in_scope &= r == "r";
        // A case of a switch whose cases keep the position in `__p`.
        self.elem_pos |= self.case_pos && r == "r";
        let body = self.read_body(t);
        self.buf_in_scope = saved_buf;
        self.inlining.pop();
        self.diags.truncate(diags);
        let tmp = self.fresh("val");
        let mut o = format!("{i0}local {tmp}\n{i0}do\n");
        if r != "r" {
            let _ = writeln!(o, "{i0}\tlocal r = {r}");
        }
        for line in body.lines() {
            let _ = writeln!(o, "{i0}{line}");
        }
        let _ = write!(o, "{i0}\t{tmp} = v\n{i0}end\n{i0}{dst} = {tmp}\n");
        o
    }

    /// `dst = <a value of tn read from substream sub>`, the path entered (unless `fname` is
    /// `nil`) and the substream checked to its end (strict rules) or its unread bytes kept.
    #[allow(clippy::too_many_arguments)]
    fn read_in_sub(
        &self,
        sub: &str,
        tn: &str,
        args: &str,
        dst: &str,
        fname: &str,
        strict: bool,
        i0: &str,
    ) -> String {
        let mut o = String::new();
        let enter = fname != "nil";
        if enter {
            let _ = writeln!(o, "{i0}S.enter({sub}, {fname})");
        }
        let _ = writeln!(o, "{i0}{dst} = {}({sub}{args})", self.read_fn(tn));
        if self.has_io_of() {
            // A positional instance may read this substream again (`io: X._io`).
            let _ = writeln!(o, "{i0}S.keepStream({sub}, {dst})");
        }
        if strict {
            let _ = writeln!(o, "{i0}S.finishSub({sub})");
        } else {
            let _ = writeln!(
                o,
                "{i0}if {sub}.pos < {sub}.limit or {sub}.nbits ~= 0 then S.keepUnread({sub}, {dst}) end"
            );
        }
        if enter {
            let _ = writeln!(o, "{i0}S.leave({sub})");
        }
        o
    }

    #[allow(clippy::too_many_arguments)]
    fn read_elem(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &'a str,
        dst: &str,
        fname: &str,
        index: Option<&'a str>,
        d: usize,
    ) -> R<String> {
        let i0 = ind(d);
        let mut o = String::new();
        if let Some(code) = self.read_plain(f, r, dst, fname, &i0)? {
            return Ok(code);
        }
        match &f.kind {
            FieldKind::Bytes(size) => {
                let n = self.size_expr(t, Some(size), r, index)?;
                if let Some(term) = &f.term {
                    // The bytes after the value (terminator, padding) are kept for the writer.
                    let tl = self.fresh("tail");
                    let _ = writeln!(
                        o,
                        "{i0}local {tl}\n{i0}{dst}, {tl} = S.readTerm({r}, {n}, {}, {fname})\n{i0}{}",
                        self.term_args(term)?,
                        keep_tail(f, index, &tl)
                    );
                } else {
                    let _ = writeln!(o, "{i0}{dst} = S.bytes({r}, {n}, {fname})");
                }
                let up = self.unprocess(t, f, dst, r, index, false)?;
                if !up.is_empty() {
                    let _ = writeln!(o, "{i0}{up}");
                }
            }
            FieldKind::Str { size, encoding } => {
                let term = super::text_term(f, size.is_none(), encoding)?;
                let n = self.size_expr(t, size.as_ref(), r, index)?;
                let at = self.fresh("at");
                let _ = writeln!(o, "{i0}local {at} = {r}.pos");
                let raw = match &term {
                    Some(term) => {
                        let (call, args) = self.term_read(term)?;
                        let (raw, tl) = (self.fresh("raw"), self.fresh("tail"));
                        let _ = writeln!(
                            o,
                            "{i0}local {raw}, {tl} = S.{call}({r}, {n}, {args}, {fname})\n{i0}{}",
                            keep_tail(f, index, &tl)
                        );
                        raw
                    }
                    None => format!("S.bytes({r}, {n}, {fname})"),
                };
                let _ = writeln!(
                    o,
                    "{i0}{dst} = S.checkText({r}, {at}, {fname}, {raw}, {})",
                    lua_str(encoding.as_bytes())
                );
            }
            _ => {
                if let Some(code) = self.read_nested(t, f, r, dst, fname, index, d)? {
                    o.push_str(&code);
                }
            }
        }
        Ok(o)
    }

    // ---------------------------------------------------------------- writer

    fn writer(&mut self, t: &'a TypeDef) -> String {
        let mut o = String::new();
        let params = params_list(t);
        let _ = writeln!(
            o,
            "--- Writes one `{}`; counts, lengths and sums that later fields determine are derived (and stored into `v`). Errors: a value that does not fit, named with its path.\nfunction {}.write(w: S.Writer, v: {}{params})",
            t.schema_name,
            ty(&t.name),
            camel(&t.name)
        );
        let mut body = String::new();
        let mut problem = None;
        if let Some(sw) = &t.endian_switch {
            match self.decide_endian(t, sw, "w", true) {
                Ok(code) => body.push_str(&code),
                Err(m) => problem = Some(format!("{}: {m}", sw.key_path)),
            }
        }
        let mut unaligned = false;
        for f in &t.fields {
            if f.at.is_none() {
                let bit_field = crate::bits::is_bit_field(f);
                if unaligned && !bit_field && !f.strict {
                    // The padding bits the reader kept before this field (zero if none).
                    let _ = writeln!(
                        body,
                        "\tif w.nbits ~= 0 then S.alignPad(w, v, {}) end",
                        lua_str(f.id.as_bytes())
                    );
                }
                unaligned = bit_field;
            }
            match self.write_field(t, f) {
                Ok(code) => {
                    body.push_str("\tdo\n");
                    body.push_str(&code);
                    body.push_str("\tend\n");
                }
                Err(m) => {
                    problem = Some(format!("{}: {m}", f.key_path));
                    break;
                }
            }
        }
        if problem.is_none() && unaligned && !self.s.strict && std::ptr::eq(t, &self.s.types[0]) {
            body.push_str("\tif w.nbits ~= 0 then S.alignPad(w, v, \"__end\") end\n");
        }
        if problem.is_none() && self.is_positional_root(t) {
            // The root's stream ends here: its kept bytes, then the queued instances.
            body.push_str("\tS.layOut(w, v.__beyond)\n");
        }
        match problem {
            None => o.push_str(&body),
            Some(m) => {
                // Reading works; writing this type is refused at run time, naming why.
                let _ = writeln!(
                    o,
                    "\tS.fail(w, nil, \"unsupported\", {})",
                    lua_str(format!("this module cannot write {}", m).as_bytes())
                );
            }
        }
        o.push_str("end\n\n");
        o
    }

    fn wex(
        &mut self,
        t: &'a TypeDef,
        e: &SrcExpr,
        elem: Option<(Kind, &'a str)>,
        index: Option<&'a str>,
    ) -> R<String> {
        let (x, _) = self.ex(t, e, "__noio", elem, index)?;
        // `_io.pos` while writing: the bytes written in the writer's stream so far.
        let x = x.replace("(__noio.pos - __noio.base)", "S.writerPos(w)");
        if x.contains("__noio") || x.contains("__start") {
            return Err(format!(
                "`{}` uses the stream (`_io`, `_sizeof`), which a writer does not know",
                e.src
            ));
        }
        Ok(x)
    }

    /// A `size` on write: `nil` (the value's own length decides) when it uses the stream's
    /// size or end (`_io.size - _io.pos - 2`), which a writer does not know.
    fn wsize(&mut self, t: &'a TypeDef, e: &SrcExpr, index: Option<&'a str>) -> R<String> {
        match self.wex(t, e, None, index) {
            Err(_) if crate::instances::uses_io(&e.expr) => Ok("nil".into()),
            other => other,
        }
    }

    /// How a field's value is derived on write from a later field, if it is.
    /// The derivation and the field it comes from (`None` for a `-sp-sum-of`).
    fn derived(&self, t: &TypeDef, f: &Field) -> Option<(String, Option<String>)> {
        if !matches!(f.kind, FieldKind::Int { .. }) || !matches!(f.repeat, Repeat::None) {
            return None;
        }
        if let Some((list, field, _)) = &f.sum_of {
            return Some((
                format!("S.sumOf({}, {})", dot("v", list), lua_str(field.as_bytes())),
                Some(dot("v", list)),
            ));
        }
        let is_me = |e: &SrcExpr| matches!(&e.expr, crate::expr::Expr::Name(n) if *n == f.id);
        for l in &t.fields {
            if l.at.is_some() {
                continue;
            }
            if let Repeat::Expr(e) = &l.repeat {
                if is_me(e) && !l.varint {
                    return Some((format!("#{}", dot("v", &l.id)), Some(dot("v", &l.id))));
                }
            }
            let size = match &l.kind {
                FieldKind::Bytes(Size::Expr(e))
                | FieldKind::Str {
                    size: Some(Size::Expr(e)),
                    ..
                } => Some(e),
                _ => None,
            };
            if let Some(e) = size {
                if is_me(e)
                    && l.term.is_none()
                    && l.process.is_none()
                    && matches!(l.repeat, Repeat::None)
                {
                    return Some((format!("#{}", dot("v", &l.id)), Some(dot("v", &l.id))));
                }
            }
        }
        None
    }

    /// A positional instance's write: opened with a writer of its own (`w` inside), closed
    /// by queueing it for its position (laid out when the stream is finished).
    fn positional_write(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        at: &'a crate::ir::Positional,
        d: usize,
    ) -> R<(String, String)> {
        if let Some(io) = &at.io_of {
            return self.foreign_write(t, f, at, io, d);
        }
        let pos = if let Some(k) = kept_pos(f) {
            dot("v", &k)
        } else if crate::instances::is_stream_position(&at.pos.expr) {
            "S.writerPos(w)".to_string()
        } else {
            self.wex(t, &at.pos, None, None)?
        };
        let i0 = ind(d);
        let iw = self.fresh("iw");
        let fname = lua_str(f.id.as_bytes());
        // The root's one instance at `_io.size - k` ends the output, as the Rust writer's
        // trailer does (`S.placeTrailer`).
        let trailer = crate::instances::trailer(self.s)
            .filter(|(id, _)| *id == f.id && self.s.types.first().is_some_and(|r| r.name == t.name))
            .map(|(_, k)| k);
        let place = match trailer {
            Some(k) => format!(
                "{i0}end\n{i0}S.placeTrailer(w, {iw}, {}, {k})\n",
                lua_str(f.key_path.as_bytes())
            ),
            None => format!(
                "{i0}end\n{i0}S.place(w, {iw}, {})\n",
                lua_str(f.key_path.as_bytes())
            ),
        };
        Ok((
            format!(
                "{i0}local {iw} = S.instanceWriter(w, {pos}, {}, {fname})\n{i0}do\n{i0}\tlocal w = {iw}\n",
                at.whole
            ),
            place,
        ))
    }

    /// The user type of the value named by `io: X._io` in field `f` of `t` (see
    /// [`Core::io_value_type`]); for a writer (`write`), also one without params, whose
    /// writer rebuilds the substream.
    fn io_type(&mut self, t: &'a TypeDef, f: &Field, io: &SrcExpr, write: bool) -> R<String> {
        let tn = self.io_value_type(t, f, io)?;
        if write && self.s.type_named(&tn).is_some_and(|d| !d.params.is_empty()) {
            return Err(format!(
                "`io: {}._io`: the writer of `{tn}` takes params, which the substream's rebuild does not know",
                io.src
            ));
        }
        Ok(tn)
    }

    /// The write of a positional instance in another value's substream (`io: X._io`): `X` is
    /// written again into a writer of its own (its substream as its reader saw it, with
    /// what its type left unread), and the instance, written into an instance writer at its
    /// position, must agree with those bytes (`S.checkInStream`); it is not written anywhere
    /// else, its bytes being `X`'s.
    fn foreign_write(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        at: &'a crate::ir::Positional,
        io: &'a SrcExpr,
        d: usize,
    ) -> R<(String, String)> {
        let tn = self.io_type(t, f, io, true)?;
        let x = self.wex(t, io, None, None)?;
        let pos = self.wex(t, &at.pos, None, None)?;
        let i0 = ind(d);
        let (xs, iw) = (self.fresh("xs"), self.fresh("iw"));
        let fname = lua_str(f.id.as_bytes());
        let src = lua_str(io.src.as_bytes());
        Ok((
            format!(
                "{i0}local {xs} = S.rebuildStream(w, {x}, {}.write, {src}, {fname})\n{i0}local {iw} = S.instanceWriter(w, {pos}, false, {fname})\n{i0}do\n{i0}\tlocal w = {iw}\n",
                ty(&tn)
            ),
            format!(
                "{i0}end\n{i0}S.checkInStream(w, {iw}, {xs}, {}, {src}, {fname})\n",
                lua_str(f.key_path.as_bytes())
            ),
        ))
    }

    fn write_field(&mut self, t: &'a TypeDef, f: &'a Field) -> R<String> {
        let mut o = String::new();
        let fname = lua_str(f.id.as_bytes());
        let mut d = 1;
        if let Some(c) = &f.cond {
            let c = if crate::instances::uses_io(&c.expr) {
                // `_io.size`, `_io.eof` are not known while writing: the value decides.
                format!("{} ~= nil", dot("v", &f.id))
            } else {
                self.wex(t, c, None, None)?
            };
            let _ = writeln!(o, "\tif {c} then");
            d += 1;
        }
        let mut close = None;
        if let Some(at) = &f.at {
            let (open, end) = self.positional_write(t, f, at, d)?;
            o.push_str(&open);
            close = Some(end);
            d += 1;
        }
        let i0 = ind(d);
        let target = dot("v", &f.id);
        if let Some((der, Some(from))) = self.derived(t, f) {
            // Derived from the later field when it is given; else the value given is written.
            let _ = writeln!(
                o,
                "{i0}if {from} ~= nil then\n{i0}\t{target} = {der}\n{i0}elseif {target} == nil then\n{i0}\tS.fail(w, {fname}, \"missing\", \"no value given\")\n{i0}end"
            );
        } else if !matches!(f.kind, FieldKind::Contents(_) | FieldKind::Switch { .. }) {
            let _ = writeln!(
                o,
                "{i0}if {target} == nil then\n{i0}\tS.fail(w, {fname}, \"missing\", \"no value given\")\n{i0}end"
            );
        }
        if f.varint {
            let call = if matches!(f.kind, FieldKind::Bits { .. }) {
                "writeUleb128Bits"
            } else {
                "writeUleb128"
            };
            let _ = writeln!(o, "{i0}S.{call}(w, {target}, {fname})");
        } else {
            match &f.repeat {
                Repeat::None => o.push_str(&self.write_elem(t, f, &target, &fname, None, d)?),
                Repeat::Expr(e) => {
                    let n = self.wex(t, e, None, None)?;
                    let _ = writeln!(
                        o,
                        "{i0}S.checkLen(w, {target}, {n}, {fname})\n{i0}S.enter(w, {fname})\n{i0}for i = 0, #{target} - 1 do\n{i0}\tS.enter(w, i)"
                    );
                    o.push_str(&self.write_elem(
                        t,
                        f,
                        &format!("{target}[i + 1]"),
                        "nil",
                        Some("i"),
                        d + 1,
                    )?);
                    let _ = writeln!(o, "{i0}\tS.leave(w)\n{i0}end\n{i0}S.leave(w)");
                }
                Repeat::Eos | Repeat::Until(_) => {
                    let _ = writeln!(
                        o,
                        "{i0}S.enter(w, {fname})\n{i0}for i = 0, #{target} - 1 do\n{i0}\tS.enter(w, i)"
                    );
                    o.push_str(&self.write_elem(
                        t,
                        f,
                        &format!("{target}[i + 1]"),
                        "nil",
                        Some("i"),
                        d + 1,
                    )?);
                    let _ = writeln!(o, "{i0}\tS.leave(w)\n{i0}end\n{i0}S.leave(w)");
                }
            }
        }
        if let Some(end) = close {
            o.push_str(&end);
        }
        if f.cond.is_some() {
            o.push_str("\tend\n");
        }
        Ok(o)
    }

    /// Whether `t` is the root type of a schema with positional instances: its reader keeps
    /// `__beyond` and its writer lays the instances out.
    fn is_positional_root(&self, t: &TypeDef) -> bool {
        std::ptr::eq(t, &self.s.types[0]) && self.has_positional()
    }

    /// Whether any type of the schema has a positional instance.
    fn has_positional(&self) -> bool {
        self.s
            .types
            .iter()
            .any(|t| t.fields.iter().any(|f| f.at.is_some()))
    }

    #[allow(clippy::too_many_arguments)]
    fn write_user(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        tn: &str,
        size: Option<&'a Size>,
        val: &str,
        fname: &str,
        index: Option<&'a str>,
        explicit: &'a [SrcExpr],
        d: usize,
    ) -> R<String> {
        let i0 = ind(d);
        let mut o = String::new();
        if self.s.type_named(tn).is_none() {
            return Err(format!(
                "type `{tn}` is not defined in the schema (an opaque type)"
            ));
        }
        let mut args = String::new();
        for a in explicit {
            let _ = write!(args, ", {}", self.wex(t, a, None, index)?);
        }
        if let Some((_, ctx)) = f.ctx_args.iter().find(|(n, _)| self.s.ty(*n).name == tn) {
            for a in ctx {
                match a {
                    Some(a) => {
                        let _ = write!(args, ", {}", self.wex(t, a, None, index)?);
                    }
                    None => args.push_str(", nil"),
                }
            }
        }
        let enter = fname != "nil";
        if enter {
            let _ = writeln!(o, "{i0}S.enter(w, {fname})");
        }
        let plain = size.is_none() && f.term.is_none() && f.process.is_none();
        // `size-eos` is a substream of its own where the reader makes one (lenient rules).
        let eos_plain =
            matches!(size, Some(Size::Eos)) && f.process.is_none() && f.term.is_none() && f.strict;
        if plain || eos_plain {
            let _ = writeln!(o, "{i0}{}.write(w, {val}{args})", ty(tn));
        } else if matches!(f.process, Some(Process::Zlib)) {
            let n = match size {
                Some(Size::Expr(e)) => self.wsize(t, e, index)?,
                _ => "nil".into(),
            };
            let _ = writeln!(o, "{i0}S.writeBytes(w, {val}, nil, {n})");
        } else {
            let sub = self.fresh("sub");
            let _ = writeln!(
                o,
                "{i0}local {sub} = S.writer()\n{i0}{sub}.path = w.path\n{i0}{sub}.root = w.root or w\n{i0}{}.write({sub}, {val}{args})\n{i0}S.writeUnread({sub}, {val})",
                ty(tn)
            );
            if f.process.is_some() || f.term.is_some() {
                // Transformed bytes: the substream's instances are laid out in it first.
                let _ = writeln!(o, "{i0}local {sub}s = S.streamBytes({sub})");
            } else {
                // A sized substream: its instances move to this stream, where it is written.
                let _ = writeln!(
                    o,
                    "{i0}S.adopt(w, {sub})\n{i0}local {sub}s = buffer.tostring(S.finish({sub}))"
                );
            }
            let up = self.unprocess(t, f, &format!("{sub}s"), "__noio", index, true)?;
            if !up.is_empty() {
                let _ = writeln!(o, "{i0}{up}");
            }
            let n = match size {
                Some(Size::Expr(e)) => self.wsize(t, e, index)?,
                _ => "nil".into(),
            };
            match &f.term {
                Some(term) => {
                    let _ = writeln!(
                        o,
                        "{i0}S.writeTerm(w, {sub}s, {n}, {}, nil, {})",
                        self.term_args(term)?,
                        tail_of(f, index)
                    );
                }
                None => {
                    let _ = writeln!(o, "{i0}S.writePadded(w, {sub}s, {n}, nil)");
                }
            }
        }
        if enter {
            let _ = writeln!(o, "{i0}S.leave(w)");
        }
        Ok(o)
    }

    fn write_elem(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        val: &str,
        fname: &str,
        index: Option<&'a str>,
        d: usize,
    ) -> R<String> {
        let i0 = ind(d);
        let mut o = String::new();
        match &f.kind {
            FieldKind::Int {
                bytes,
                signed,
                endian,
                ..
            } => {
                if *endian == Endian::Computed && *bytes > 1 {
                    let le = write_name(&int_call(*bytes, *signed, Endian::Le)?);
                    let be = write_name(&int_call(*bytes, *signed, Endian::Be)?);
                    let _ = writeln!(o, "{i0}if p___is_le then S.{le}(w, {val}, {fname}) else S.{be}(w, {val}, {fname}) end");
                } else {
                    let call = write_name(&int_call(*bytes, *signed, *endian)?);
                    let _ = writeln!(o, "{i0}S.{call}(w, {val}, {fname})");
                }
            }
            FieldKind::Float { bytes, endian } => {
                let bits = u32::from(*bytes) * 8;
                if *endian == Endian::Computed {
                    let _ = writeln!(o, "{i0}if p___is_le then S.writeF{bits}le(w, {val}, {fname}) else S.writeF{bits}be(w, {val}, {fname}) end");
                } else {
                    let e = if *endian == Endian::Be { "be" } else { "le" };
                    let _ = writeln!(o, "{i0}S.writeF{bits}{e}(w, {val}, {fname})");
                }
            }
            FieldKind::Bits {
                width,
                offset_binary,
                le,
                enum_name,
            } => {
                let w = u32::from(*width);
                if w > 53 {
                    return Err(format!("bit field b{w} is wider than 53 bits"));
                }
                let v = if w == 1 && !offset_binary && enum_name.is_none() {
                    format!("(if {val} then 1 else 0)")
                } else if *offset_binary {
                    format!("{val} + {}", 1u64 << (w - 1))
                } else {
                    val.to_owned()
                };
                let call = if *le { "writeBitsLe" } else { "writeBitsBe" };
                let wide = if w > 32 { "Wide" } else { "" };
                let _ = writeln!(o, "{i0}S.{call}{wide}(w, {v}, {w}, {fname})");
            }
            FieldKind::Contents(c) => {
                let _ = writeln!(o, "{i0}S.writeBytes(w, {}, {fname})", lua_str(c));
            }
            FieldKind::Bytes(_) | FieldKind::Str { .. } => {
                let size = match &f.kind {
                    FieldKind::Bytes(s) => Some(s),
                    FieldKind::Str { size, .. } => size.as_ref(),
                    _ => None,
                };
                let enc = match &f.kind {
                    FieldKind::Str { encoding, .. } => *encoding,
                    _ => "",
                };
                let wide = enc.starts_with("UTF-16");
                let term = f.term.or(match (&f.kind, size) {
                    (FieldKind::Str { .. }, None) => {
                        Some(TermSpec::zero_terminated(if wide { 2 } else { 1 }))
                    }
                    _ => None,
                });
                let n = match size {
                    Some(Size::Expr(e)) => self.wsize(t, e, index)?,
                    _ => "nil".into(),
                };
                let mut v = val.to_owned();
                if matches!(enc, "UTF-16LE" | "UTF-16BE" | "ISO-8859-1") {
                    v = format!("S.encodeText({val}, {})", lua_str(enc.as_bytes()));
                }
                if f.process.is_some() && !matches!(f.process, Some(Process::Zlib)) {
                    let tmp = self.fresh("pv");
                    let _ = writeln!(o, "{i0}local {tmp} = {val}");
                    let up = self.unprocess(t, f, &tmp, "__noio", index, true)?;
                    let _ = writeln!(o, "{i0}{up}");
                    v = tmp;
                }
                match term {
                    Some(term) if term.width == 2 => {
                        let _ = writeln!(
                            o,
                            "{i0}S.writeTerm2(w, {v}, {n}, {}, {}, {}, {fname}, {})",
                            term.include,
                            term.consume,
                            term.pad_right.map_or("nil".to_string(), |b| b.to_string()),
                            tail_of(f, index)
                        );
                    }
                    Some(term) => {
                        let _ = writeln!(
                            o,
                            "{i0}S.writeTerm(w, {v}, {n}, {}, {fname}, {})",
                            self.term_args(&term)?,
                            tail_of(f, index)
                        );
                    }
                    None => {
                        let _ = writeln!(o, "{i0}S.writeBytes(w, {v}, {fname}, {n})");
                    }
                }
            }
            FieldKind::User { ty: name, size } => {
                o.push_str(&self.write_user(
                    t,
                    f,
                    self.s.type_name(name),
                    size.as_ref(),
                    val,
                    fname,
                    index,
                    &f.args,
                    d,
                )?);
            }
            FieldKind::Switch { .. } => o.push_str(&self.write_switch(t, f, val, fname, index, d)?),
        }
        Ok(o)
    }

    /// A switch's write: the case the selector picks, as its reader reads it. In a sized
    /// substream (`size` beside `switch-on`) the case is written into a writer of its own (a
    /// user type's unread bytes after it, as read), whose instances move to `w` and whose
    /// bytes are padded with zero bytes to the size (under strict rules they must fill it).
    fn write_switch(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        val: &str,
        fname: &str,
        index: Option<&'a str>,
        d: usize,
    ) -> R<String> {
        let FieldKind::Switch {
            on,
            cases,
            default,
            size,
            ..
        } = &f.kind
        else {
            return Err("not a switch".into());
        };
        if f.process.is_some() {
            return Err("`process` on a switch of types".into());
        }
        let i0 = ind(d);
        let mut o = String::new();
        let sel = self.wex(t, on, None, index)?;
        let _ = writeln!(o, "{i0}do\n{i0}\tlocal on = {sel}");
        // In a sized substream the cases are written one level deeper, into `w` = the
        // substream's writer.
        let (cd, sub) = match size {
            Some(_) => {
                let sub = self.fresh("sub");
                let _ = writeln!(
                    o,
                    "{i0}\tlocal {sub} = S.writer()\n{i0}\t{sub}.path = w.path\n{i0}\t{sub}.root = w.root or w\n{i0}\tdo\n{i0}\t\tlocal w = {sub}"
                );
                (d + 1, Some(sub))
            }
            None => (d, None),
        };
        let ic = ind(cd);
        let sized = size.is_some();
        let case_code = |this: &mut Self, tn: &str| -> R<String> {
            if let Some(call) = super::number_case_call(tn, this.s.endian)? {
                let call = write_name(&call);
                return Ok(format!("{}S.{call}(w, {val}, {fname})\n", ind(cd + 2)));
            }
            let explicit: &'a [SrcExpr] = f
                .switch_args
                .iter()
                .find(|(n, _)| this.s.type_name(n) == tn)
                .map(|(_, a)| a.as_slice())
                .unwrap_or(&[]);
            let mut code = this.write_user(t, f, tn, None, val, fname, index, explicit, cd + 2)?;
            if sized && !f.strict {
                // The bytes of the substream the reader left unread after the value.
                let _ = writeln!(code, "{}S.writeUnread(w, {val})", ind(cd + 2));
            }
            Ok(code)
        };
        let mut arms = Vec::new();
        for (k, tn) in cases {
            let kx = self.wex(t, k, None, index)?;
            arms.push((kx, case_code(self, self.s.type_name(tn))?));
        }
        let fallback = match default {
            Some(tn) => case_code(self, self.s.type_name(tn))?,
            // No case under lenient rules: the substream's bytes, as the reader kept them.
            None if sized && !f.strict => format!(
                "{}if {val} ~= nil then S.writeBytes(w, {val}, {fname}) end\n",
                ind(cd + 2)
            ),
            None => format!(
                "{}if {val} ~= nil then S.fail(w, {fname}, \"valid\", `{{S.show(on)}} selects no case, but a value is given`) end\n",
                ind(cd + 2)
            ),
        };
        o.push_str(&case_chain(&arms, &fallback, &format!("{ic}\t")));
        if let (Some(sub), Some(Size::Expr(e))) = (&sub, size) {
            let n = self.wsize(t, e, index)?;
            let put = if f.strict {
                format!("S.writeBytes(w, {sub}s, {fname}, {n})")
            } else {
                format!("S.writePadded(w, {sub}s, {n}, {fname})")
            };
            let _ = writeln!(
                o,
                "{i0}\tend\n{i0}\tS.adopt(w, {sub})\n{i0}\tlocal {sub}s = buffer.tostring(S.finish({sub}))\n{i0}\t{put}"
            );
        } else if let Some(sub) = &sub {
            // `size-eos`: the substream's bytes, as they are.
            let _ = writeln!(
                o,
                "{i0}\tend\n{i0}\tS.adopt(w, {sub})\n{i0}\tS.writeBytes(w, buffer.tostring(S.finish({sub})), {fname})"
            );
        }
        let _ = writeln!(o, "{i0}end");
        Ok(o)
    }
}

impl<'a> Backend<'a> for Emitter<'a> {
    #[allow(clippy::too_many_arguments)]
    fn read_user(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        tn: &str,
        size: Option<&'a Size>,
        r: &'a str,
        dst: &str,
        fname: &str,
        index: Option<&'a str>,
        explicit: &'a [SrcExpr],
        d: usize,
    ) -> R<String> {
        let i0 = ind(d);
        let mut o = String::new();
        let enter = fname != "nil";
        let args = self.args(t, f, tn, r, index, explicit)?;
        let strict = f.strict;
        if let Some(term) = &f.term {
            let n = self.size_expr(t, size, r, index)?;
            let (raw, tl) = (self.fresh("raw"), self.fresh("tail"));
            let _ = writeln!(
                o,
                "{i0}local {raw}, {tl} = S.readTerm({r}, {n}, {}, {fname})\n{i0}{}",
                self.term_args(term)?,
                keep_tail(f, index, &tl)
            );
            let up = self.unprocess(t, f, &raw, r, index, false)?;
            if !up.is_empty() {
                let _ = writeln!(o, "{i0}{up}");
            }
            let sub = self.fresh("sub");
            let _ = writeln!(o, "{i0}local {sub} = S.subOver({r}, {raw})");
            o.push_str(&self.read_in_sub(&sub, tn, &args, dst, fname, strict, &i0));
            return Ok(o);
        }
        if f.process.is_some() {
            let Some(sz) = size else {
                return Err("`process` on a type without a size".into());
            };
            let n = self.size_expr(t, Some(sz), r, index)?;
            let raw = self.fresh("raw");
            let _ = writeln!(o, "{i0}local {raw} = S.bytes({r}, {n}, {fname})");
            if matches!(f.process, Some(Process::Zlib)) {
                // No zlib in Luau: the stored bytes are kept as they are.
                let _ = writeln!(o, "{i0}{dst} = {raw}");
                return Ok(o);
            }
            let up = self.unprocess(t, f, &raw, r, index, false)?;
            let sub = self.fresh("sub");
            let _ = writeln!(o, "{i0}{up}\n{i0}local {sub} = S.subOver({r}, {raw})");
            o.push_str(&self.read_in_sub(&sub, tn, &args, dst, fname, strict, &i0));
            return Ok(o);
        }
        match size {
            // A substream of the size (a strict `size-eos` value is read in the reader's own
            // stream, which it must end with).
            Some(sz) if !(strict && matches!(sz, Size::Eos)) => {
                let n = self.size_expr(t, Some(sz), r, index)?;
                let sub = self.fresh("sub");
                let _ = writeln!(o, "{i0}local {sub} = S.sub({r}, {n}, {fname})");
                o.push_str(&self.read_in_sub(&sub, tn, &args, dst, fname, strict, &i0));
            }
            _ => {
                // A switch's case at the top level of a list's element: the segment goes
                // into the slot the loop measured (see `elem_slot`).
                let slot = enter && r == "r" && self.case_slot;
                self.case_slot = false;
                // A flat body sets the slot on its error paths only.
                let flat = slot && args.is_empty() && self.inlined_flat(tn);
                if flat {
                    self.flat_slot = Some(fname.to_owned());
                } else if slot {
                    let _ = writeln!(o, "{i0}__path[__pd] = {fname}");
                } else if enter {
                    let _ = writeln!(o, "{i0}S.enter({r}, {fname})");
                }
                o.push_str(&self.call_read(tn, r, &args, dst, d));
                self.flat_slot = None;
                if slot && !flat {
                    let _ = writeln!(o, "{i0}__path[__pd] = nil");
                } else if !slot && enter {
                    let _ = writeln!(o, "{i0}S.leave({r})");
                }
                self.case_slot = slot;
            }
        }
        Ok(o)
    }

    fn dispatch(
        &self,
        sel: &str,
        arms: &[(String, String)],
        fallback: &str,
        numeric: bool,
        d: usize,
    ) -> String {
        // A selector held in a field local was read by a run of numbers: always a number.
        let number = self.field_locals.iter().any(|(_, l)| l == sel);
        // The enum check the run left to this switch (see `PendingEnum`).
        let pending = self.pending_enum.borrow_mut().take_if(|pe| pe.local == sel);
        let fallback = match pending {
            Some(pe) => format!("{}{fallback}", self.enum_check_at(&pe, d + 1)),
            None => fallback.to_owned(),
        };
        case_tree(arms, &fallback, numeric, number, d)
            .unwrap_or_else(|| case_chain(arms, &fallback, &ind(d)))
    }

    fn pos_expr(&self, r: &str) -> String {
        self.pos_of(r)
    }

    fn after_lenient_sized_case(&self, rr: &str, dst: &str, i0: &str) -> String {
        // Lenient rules: what a user-type case left unread is kept for its writer.
        format!("{i0}\tif {rr}.pos < {rr}.limit or {rr}.nbits ~= 0 then S.keepUnread({rr}, {dst}) end\n")
    }
}

/// The path's slot for the index of a list's element being read, pushed after the list's
/// name (`slot`, lines at `i0` plus one), and what sets it per element (`index`, at `i0`
/// plus two). The slot holds the list itself where every element is a value (never `nil`):
/// each element joins the list once read and checked, so while one is read the list's
/// length is its index, which the runtime puts into an error's path (`[n]`) only when an
/// error is raised. Elements that may be `nil` (a switch without `_` case) set the index.
fn index_slot(f: &Field, r: &str, i0: &str) -> (String, String) {
    if matches!(f.kind, FieldKind::Switch { default: None, .. }) {
        (
            format!(
                "{i0}\tS.enter({r}, 0)\n{i0}\tlocal path = {r}.path\n{i0}\tlocal slot = #path\n"
            ),
            format!("{i0}\t\tpath[slot] = i\n"),
        )
    } else {
        (format!("{i0}\tS.enter({r}, list)\n"), String::new())
    }
}

/// `(x & k) != 0` with `k` a nonzero integer: the field `x` and the bits `k`.
fn bit_test(e: &crate::expr::Expr) -> Option<(&str, i128)> {
    use crate::expr::{BinOp, Expr};
    let Expr::Binary(BinOp::Ne, a, z) = e else {
        return None;
    };
    let Expr::Binary(BinOp::BitAnd, x, k) = &**a else {
        return None;
    };
    match (&**x, &**k, &**z) {
        (Expr::Name(n), Expr::Int(k), Expr::Int(0))
        | (Expr::Int(k), Expr::Name(n), Expr::Int(0))
            if *k != 0 && n != "_" =>
        {
            Some((n.as_str(), *k))
        }
        _ => None,
    }
}

/// Whether the bits `a` and `b` of field `m` of `t` (read before field `i`) are never both
/// set in a value that passed `m`'s `valid` rule: disjoint, and the rule is an `and` of
/// terms one of which is `(_ & k) != k` with `k` = `a | b` (so of two conditional fields
/// testing them, at most one is present, and the second is read in an `elseif`).
fn exclusive_bits(t: &TypeDef, m: &str, i: usize, a: i128, b: i128) -> bool {
    use crate::expr::{BinOp, Expr};
    fn never_all(e: &Expr, k: i128) -> bool {
        match e {
            Expr::Binary(BinOp::And, x, y) => never_all(x, k) || never_all(y, k),
            Expr::Binary(BinOp::Ne, x, y) => {
                matches!((&**x, &**y), (Expr::Binary(BinOp::BitAnd, u, k1), Expr::Int(k2))
                    if **u == Expr::Name("_".into()) && **k1 == Expr::Int(k) && *k2 == k)
            }
            _ => false,
        }
    }
    if a & b != 0 {
        return false;
    }
    t.fields[..i].iter().any(|g| {
        g.id == m
            && g.cond.is_none()
            && matches!(&g.valid, Some(Valid::Expr(e)) if never_all(&e.expr, a | b))
    })
}

/// The element count and width of a field a flat read takes (see `Emitter::flat`): a plain
/// little-endian number without an enum (1 element), or a fixed array of 1 to 32 of them
/// without a `valid` rule; read in place, not LEB128 nor processed, not a `-sp-sum-of`.
fn flat_size(f: &Field) -> Option<(u32, u32)> {
    if f.at.is_some() || f.sum_of.is_some() || f.term.is_some() {
        return None;
    }
    if !matches!(
        f.kind,
        FieldKind::Int {
            enum_name: None,
            ..
        } | FieldKind::Float { .. }
    ) {
        return None;
    }
    match &f.repeat {
        Repeat::None => Some((1, fast_number_width(f)?)),
        Repeat::Expr(e) => match e.expr {
            crate::expr::Expr::Int(k @ 1..=32) => Some((k as u32, fast_elem_width(f)?)),
            _ => None,
        },
        _ => None,
    }
}

/// `p + off`, or `p` when `off` is 0.
fn plus(p: &str, off: u32) -> String {
    if off == 0 {
        p.to_owned()
    } else {
        format!("{p} + {off}")
    }
}

/// Whether the values of field `f` are never negative (an unsigned integer or a bit field).
fn unsigned(f: &Field) -> bool {
    matches!(
        f.kind,
        FieldKind::Int { signed: false, .. }
            | FieldKind::Bits {
                offset_binary: false,
                ..
            }
    )
}

/// Whether field `f` is read once, in place, as it stands: no `if`, `repeat`, position,
/// `process`, terminator or LEB128.
fn r_free(f: &Field) -> bool {
    f.cond.is_none()
        && f.at.is_none()
        && matches!(f.repeat, Repeat::None)
        && !f.varint
        && f.process.is_none()
        && f.term.is_none()
}

/// The lines before and after a list's loop (at `i0` plus one) when its elements keep the
/// position in the loop's own `__p` (`kept`): taken from the reader, stored back after;
/// with the path and its next slot in locals when the element's code `elem` sets that slot
/// (see `Emitter::elem_slot`).
fn loop_pos(kept: bool, elem: &str, i0: &str) -> (String, String) {
    if kept {
        let slot = if elem.contains("__path[__pd] = ") {
            format!("{i0}\tlocal __path = r.path\n{i0}\tlocal __pd = #__path + 1\n")
        } else {
            String::new()
        };
        (
            format!("{i0}\tlocal __p = r.pos\n{slot}"),
            format!("{i0}\tr.pos = __p\n"),
        )
    } else {
        (String::new(), String::new())
    }
}

/// `S.keepTail(...)`: the bytes terminated field `f` had after its value (in `tl`), kept in
/// the value's `__tails` for the writer (by element for a repeated field, `index`).
fn keep_tail(f: &Field, index: Option<&str>, tl: &str) -> String {
    format!(
        "S.keepTail(v, {}, {}, {tl})",
        lua_str(f.id.as_bytes()),
        index.unwrap_or("nil")
    )
}

/// `S.tailOf(...)`: the kept bytes after terminated field `f`'s value, for its writer.
fn tail_of(f: &Field, index: Option<&str>) -> String {
    format!(
        "S.tailOf(v, {}, {})",
        lua_str(f.id.as_bytes()),
        index.unwrap_or("nil")
    )
}

/// Whether an expression's text uses neither the stream (`_io`, `_sizeof`) nor a value
/// instance of `t` (which may): such an expression gives the same value whether or not the
/// reader's position has been stored back yet.
fn stream_free(t: &TypeDef, src: &str) -> bool {
    !src.contains("_io")
        && !src.contains("_sizeof")
        && !src
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| t.instances.iter().any(|i| i.id == w))
}

/// The cases of a switch over a number as a search tree (`if on < k then ... else ...`)
/// instead of a chain of `==` tests: taken when there are at least 8 cases, every key is an
/// integer literal, they differ, and the fallback (no case matches) is small enough to
/// repeat at each leaf (`small`: no `_` case). A selector that is not a number takes the
/// fallback, as the chain does (a selector known to be a number, `number`, is not tested).
/// `None` when it does not apply. `d`: the depth of the `if`.
fn case_tree(
    arms: &[(String, String)],
    fallback: &str,
    small: bool,
    number: bool,
    d: usize,
) -> Option<String> {
    if !small || arms.len() < 8 {
        return None;
    }
    let mut keyed: Vec<(i64, &str)> = Vec::new();
    for (k, code) in arms {
        keyed.push((k.trim().parse::<i64>().ok()?, code.as_str()));
    }
    keyed.sort_by_key(|(k, _)| *k);
    if keyed.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    fn node(keyed: &[(i64, &str)], fallback: &str, d: usize, o: &mut String) {
        let i0 = ind(d);
        if keyed.len() <= 3 {
            let arms: Vec<(String, String)> = keyed
                .iter()
                .map(|(k, c)| (k.to_string(), c.to_string()))
                .collect();
            o.push_str(&case_chain(&arms, fallback, &i0));
            return;
        }
        let mid = keyed.len() / 2;
        let _ = writeln!(o, "{i0}if on < {} then", keyed[mid].0);
        node(&keyed[..mid], fallback, d + 1, o);
        let _ = writeln!(o, "{i0}else");
        node(&keyed[mid..], fallback, d + 1, o);
        let _ = writeln!(o, "{i0}end");
    }
    if number {
        let mut o = String::new();
        node(&keyed, fallback, d, &mut o);
        return Some(o);
    }
    let i0 = ind(d);
    let mut o = format!("{i0}if type(on) ~= \"number\" then\n{fallback}{i0}else\n");
    node(&keyed, fallback, d + 1, &mut o);
    let _ = writeln!(o, "{i0}end");
    Some(o)
}

/// The width of a field the reader may read in a run at a constant offset: a plain
/// little-endian (or one-byte) integer or float, read once, without `if`, `valid`, position
/// or varint.
fn fast_width(f: &Field) -> Option<u32> {
    if f.at.is_some() || f.cond.is_some() || !matches!(f.repeat, Repeat::None) {
        return None;
    }
    fast_number_width(f)
}

/// As [`fast_width`] for one element of a field (its `repeat` and `if` aside), without a
/// `valid` rule.
fn fast_elem_width(f: &Field) -> Option<u32> {
    if f.valid.is_some() {
        return None;
    }
    fast_number_width(f)
}

/// The width of a plain little-endian number (or a byte), its `valid`, `repeat` and `if`
/// aside.
fn fast_number_width(f: &Field) -> Option<u32> {
    if f.varint || f.process.is_some() {
        return None;
    }
    match &f.kind {
        FieldKind::Int { bytes, endian, .. }
            if *bytes <= 4 && (*bytes == 1 || *endian == Endian::Le) =>
        {
            Some(u32::from(*bytes))
        }
        FieldKind::Float {
            bytes,
            endian: Endian::Le,
        } => Some(u32::from(*bytes)),
        _ => None,
    }
}

/// The `buffer` read of a field [`fast_width`] accepts.
fn fast_call(f: &Field) -> &'static str {
    match &f.kind {
        FieldKind::Int { bytes, signed, .. } => match (bytes, signed) {
            (1, false) => "readu8",
            (1, true) => "readi8",
            (2, false) => "readu16",
            (2, true) => "readi16",
            (_, false) => "readu32",
            (_, true) => "readi32",
        },
        FieldKind::Float { bytes: 4, .. } => "readf32",
        _ => "readf64",
    }
}

/// The writer function matching a read function name (`u16le` -> `writeU16le`).
fn write_name(read: &str) -> String {
    let mut c = read.chars();
    match c.next() {
        Some(f) => format!("write{}{}", f.to_ascii_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// The module-level local holding `M.enumNames.<name>` (an enum name is a schema identifier).
fn enum_names_local(name: &str) -> String {
    format!("__enum_{name}")
}

/// The members a type's value may hold, as `, name = nil` entries of its table constructor:
/// the table is made with its keys in place (no growth while the fields are read).
fn value_keys(t: &TypeDef, sizeof: bool) -> String {
    let mut seen = std::collections::HashSet::new();
    let mut o = String::new();
    let names = t
        .fields
        .iter()
        .map(|f| f.id.as_str())
        .chain(
            t.params
                .iter()
                .filter(|p| p.context.is_none())
                .map(|p| p.id.as_str()),
        )
        .chain(sizeof.then_some("__sizeof"));
    for n in names {
        if n != "__type" && seen.insert(n) {
            let _ = write!(o, ", {} = nil", lua_key(n));
        }
    }
    o
}

/// The member keeping where a positional instance was read, when its `pos` is computed from
/// the stream (`_io.size - 8`), which a writer does not know: `__pos_<name>`. `pos: _io.pos`
/// (also an instance without `pos`) is the writer's own position and needs none.
fn kept_pos(f: &Field) -> Option<String> {
    if !crate::instances::keeps_read_pos(f.at.as_ref()?) {
        return None;
    }
    Some(match f.id.strip_prefix('_') {
        Some(rest) => format!("__pos_{rest}_"),
        None => format!("__pos_{}", f.id),
    })
}
