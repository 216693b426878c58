//! The check stage: every problem of a loaded schema that is not a problem of its YAML shape
//! (those `lower` reports) and not of one expression (those are found where the expression
//! is typed): a type defined twice, members of one type that would
//! clash (every other Rust name is made distinct by `crate::resolve`), references to types
//! and enums that do not exist, arguments to types without `params`, enum values that do not
//! fit their field, types that contain themselves, `-sp-sum-of` fields that cannot be
//! derived, opaque-type paths. `crate::typed::check` runs it before it types the expressions;
//! the Rust emitter and the interpreter's loader (`load_checked`) both run that, so both
//! refuse a schema with the same diagnostics.

use crate::diag::{Diag, Pos};
use crate::ir::*;
use crate::names::{camel, field_ident};
use crate::num_type::{case_builtin, looks_like_number_type};
use crate::shape::has_no_case;
use std::collections::{HashMap, HashSet};

/// The names and references of `s`: a type defined twice, Rust members of a type that
/// clash (see `Checker::rust_names`), unknown types,
/// enums and param types, arguments to types without `params`, enum values out of their
/// field's range, `io: _root._io` under a processed field. Nothing else is checked while
/// these fail (the later stages look types up by these names). Returns the problems found,
/// in the order found.
pub(crate) fn names_and_refs(s: &Schema) -> Vec<Diag> {
    let mut c = Checker {
        s,
        diags: Vec::new(),
    };
    c.refs();
    c.diags
}

/// The layout of `s`, once its names and references are sound: the minimum encoded length of
/// every type (bytes), and the problems found: a type that contains itself without a list,
/// an `if` or a positional instance read on first use in between, a `-sp-sum-of` that cannot
/// be derived, the Rust paths
/// of opaque types in `opts`.
pub(crate) fn layout(s: &Schema, opts: &crate::Options) -> (HashMap<TypeId, usize>, Vec<Diag>) {
    let mut c = Checker {
        s,
        diags: Vec::new(),
    };
    let refs = crate::lazy::schema_refs(s);
    let lazy = s
        .types
        .iter()
        .map(|t| (t.id, crate::lazy::lazy_instances(s, t, &refs)))
        .filter(|(_, l)| !l.is_empty())
        .collect();
    let (lens, cycles) = crate::sizes::min_lens_skipping(s, &lazy);
    for (name, pos) in cycles {
        c.err(
            pos,
            &format!("types.{name}"),
            format!("type `{name}` contains itself without a list or `if` in between"),
            "break the cycle with `repeat` or `if`, or the data would be infinite",
        );
    }
    for t in &s.types {
        crate::derive::derived(s, t, &mut c.diags);
        crate::derive::check_placement_keys(s, t, &mut c.diags);
    }
    for n in &s.opaque {
        if let Err(m) = crate::process::opaque_path(opts, n) {
            c.err(
                Pos { line: 1, col: 1 },
                "meta.ks-opaque-types",
                m,
                "give a Rust path such as `crate::external::Header`",
            );
        }
    }
    (lens, c.diags)
}

struct Checker<'s> {
    s: &'s Schema,
    diags: Vec<Diag>,
}

impl Checker<'_> {
    fn err(&mut self, pos: Pos, path: &str, msg: impl Into<String>, hint: impl Into<String>) {
        self.diags
            .push(Diag::new(&self.s.file, pos, path, msg, hint));
    }

    /// A positional instance of the whole input under a processed or terminated user-type
    /// field is refused: its reader would see only the transformed bytes (a wrong value).
    fn whole_io_in_substreams(&mut self) {
        let mut found = Vec::new();
        for t in &self.s.types {
            for f in &t.fields {
                if f.process.is_none() && f.term.is_none() {
                    continue;
                }
                let names: Vec<&TypeRef> = match &f.kind {
                    FieldKind::User { ty: name, .. } => vec![name],
                    FieldKind::Switch { cases, default, .. } => {
                        cases.iter().map(|(_, n)| n).chain(default).collect()
                    }
                    _ => continue,
                };
                for name in names {
                    let mut seen = HashSet::new();
                    if let Some((path, pos)) =
                        crate::instances::whole_io_under(self.s, name, &mut seen)
                    {
                        found.push((f.pos, f.key_path.clone(), path.to_owned(), pos));
                        break;
                    }
                }
            }
        }
        for (at, kp, inst, inst_pos) in found {
            let d = Diag::new(
                &self.s.file,
                at,
                &kp,
                format!(
                    "`{inst}` reads `io: _root._io` inside the bytes of a processed or terminated field, which are a stream of their own: not supported yet"
                ),
                "read that instance in a type outside the processed field",
            )
            .with_related(&self.s.file, inst_pos, "the instance");
            self.diags.push(d);
        }
    }

    fn refs(&mut self) {
        self.whole_io_in_substreams();
        // A param of a user type names a type the schema has (the root's params too, which
        // no field's arguments would check).
        for t in &self.s.types {
            for p in &t.params {
                let mut k = &p.kind;
                while let ParamKind::List(inner) = k {
                    k = inner;
                }
                if let ParamKind::User(n) = k {
                    if self.s.type_of(n).is_none() {
                        let n = self.s.type_name(n);
                        self.err(
                            p.pos,
                            &format!("{}params", if t.key_path.is_empty() { String::new() } else { format!("{}.", t.key_path) }),
                            format!("unknown type `{n}` of param `{}`", p.id),
                            "name a type from `types`, or a number, `str`, `bytes`, `bool` or `struct`",
                        );
                    }
                }
            }
        }
        // `resolve` gives every definition a distinct name; two definitions keep one name
        // only when they are the same path (an imported schema whose `meta.id` is also the
        // name of a top-level type here).
        let mut seen: HashMap<&str, &TypeDef> = HashMap::new();
        for t in &self.s.types {
            let Some(first) = seen.get(t.name.as_str()).copied() else {
                seen.insert(&t.name, t);
                continue;
            };
            let d = Diag::new(
                &first.file,
                first.pos,
                &first.key_path,
                format!(
                    "type `{}` is defined twice: here and as the imported schema of that `meta.id`",
                    t.name
                ),
                "rename the type or the imported schema's `meta.id`",
            )
            .with_related(&t.file, t.pos, "the other definition");
            self.diags.push(d);
        }
        self.rust_names();
        for t in &self.s.types {
            for f in &t.fields {
                // `params`: only a plain user-type field passes arguments today.
                let has_params = |n: &TypeRef| {
                    self.s
                        .type_of(n)
                        .is_some_and(|d| d.params.iter().any(|p| p.context.is_none()))
                };
                let problem = match &f.kind {
                    FieldKind::User { ty: name, .. } if has_params(name) && (f.process.is_some() || f.term.is_some()) => Some("a type with `params` cannot be read through `process` or a terminator yet".to_owned()),
                    FieldKind::User { .. } if f.args.is_empty() => None,
                    FieldKind::User { ty: name, .. } if self.s.is_opaque(name) && (f.process.is_some() || f.term.is_some()) => Some("an opaque type given arguments cannot be read through `process` or a terminator yet".to_owned()),
                    FieldKind::User { ty: name, .. } if self.s.is_opaque(name) => None,
                    FieldKind::User { ty: name, .. } if !has_params(name) => Some(format!("type `{}` has no `params`, so it takes no arguments", self.s.type_name(name))),
                    FieldKind::Switch { .. } if f.switch_args.iter().any(|(n, _)| !has_params(n)) => Some("a case type without `params` takes no arguments".to_owned()),
                    FieldKind::User { .. } => None,
                    _ if !f.args.is_empty() => Some("only user types take arguments".to_owned()),
                    _ => None,
                };
                if let Some(m) = problem {
                    self.err(f.pos_of("type"), &format!("{}.type", f.key_path), m, "pass arguments to a user type with `params` in a plain field: `type: name(a, b)`");
                }
                let mut names = Vec::new();
                match &f.kind {
                    FieldKind::User { ty: name, .. } => names.push(name.clone()),
                    FieldKind::Switch { cases, default, .. } => {
                        names.extend(cases.iter().map(|(_, n)| n.clone()));
                        names.extend(default.clone());
                    }
                    FieldKind::Bits {
                        enum_name: Some(e),
                        width,
                        ..
                    } => match self.s.enum_of(e) {
                        None => self.err(
                            f.pos_of("enum"),
                            &format!("{}.enum", f.key_path),
                            format!("unknown enum `{}`", self.s.enum_name(e)),
                            hint_names("enums", self.s.enums.iter().map(|e| e.name.as_str())),
                        ),
                        Some(def) => {
                            let hi = if *width >= 64 {
                                i128::from(u64::MAX)
                            } else {
                                (1i128 << width) - 1
                            };
                            // Kaitai Struct allows enum values a bit field cannot hold (they
                            // are never read; the writer refuses them); strict rules do not.
                            for v in def.values.iter().filter(|_| f.strict) {
                                if v.value < 0 || v.value > hi {
                                    self.err(f.pos_of("enum"), &format!("{}.enum", f.key_path), format!("enum value {} = {} does not fit the field's {width} bits", v.name, v.value), "use a wider bit field, change the enum, or drop `-sp-strict`");
                                }
                            }
                        }
                    },
                    FieldKind::Int {
                        enum_name: Some(e),
                        bytes,
                        signed,
                        ..
                    } => match self.s.enum_of(e) {
                        None => self.err(
                            f.pos_of("enum"),
                            &format!("{}.enum", f.key_path),
                            format!("unknown enum `{}`", self.s.enum_name(e)),
                            hint_names("enums", self.s.enums.iter().map(|e| e.name.as_str())),
                        ),
                        Some(def) => {
                            let (lo, hi) = int_range(*bytes, *signed);
                            // As for bit fields: Kaitai Struct lets one enum serve fields of
                            // several widths (a value a field cannot hold is never read there,
                            // and its writer refuses it); strict rules do not.
                            for v in def.values.iter().filter(|_| f.strict) {
                                if v.value < lo || v.value > hi {
                                    self.err(f.pos_of("enum"), &format!("{}.enum", f.key_path), format!("enum value {} = {} does not fit the field's type", v.name, v.value), "use a wider integer type for the field, or change the enum");
                                }
                            }
                        }
                    },
                    _ => {}
                }
                for r in names {
                    // A name no type defines (an id is a type of the schema).
                    let TypeRef::Named(n) = r else {
                        continue;
                    };
                    if matches!(f.kind, FieldKind::Switch { .. }) && case_builtin(&n) {
                        continue;
                    }
                    if looks_like_number_type(&n) {
                        self.err(
                            f.pos_of("type"),
                            &format!("{}.type", f.key_path),
                            format!("`{n}` is not a KS number type"),
                            "number types are u1 u2 u4 u8, s1 s2 s4 s8, f4 f8, with an optional le/be suffix (or define a type of that name under `types`)",
                        );
                    } else if self.s.opaque.contains(&n) {
                        // An opaque (external) type: `crate::process` gives its path.
                    } else {
                        // Types as a reference from the top level spells them.
                        let paths: Vec<String> = self
                            .s
                            .types
                            .iter()
                            .skip(1)
                            .map(|t| t.scope.join("::"))
                            .collect();
                        let hint = hint_names("types", paths.iter().map(String::as_str));
                        self.err(
                            f.pos_of("type"),
                            &format!("{}.type", f.key_path),
                            format!("unknown type `{n}`"),
                            hint,
                        );
                    }
                }
            }
        }
    }

    /// Rust names within one type: fields whose Rust members would clash, and a case type
    /// that would be a switch's `NoCase` variant. (`resolve` gives every type, enum, switch
    /// enum and column set a distinct Rust name, reserved names included.)
    fn rust_names(&mut self) {
        for t in &self.s.types {
            let mut members: HashMap<String, &Field> = HashMap::new();
            for f in &t.fields {
                let rust = field_ident(&f.id).to_string();
                if let Some(first) = members.insert(rust.clone(), f) {
                    let msg = if first.id == f.id {
                        format!(
                            "duplicate id `{}`: `{}` already has that name",
                            f.id, first.key_path
                        )
                    } else {
                        format!(
                            "fields `{}` and `{}` both become the Rust member `{rust}`",
                            first.id, f.id
                        )
                    };
                    self.err(
                        f.pos_of("id"),
                        &format!("{}.id", f.key_path),
                        msg,
                        "rename one of the fields",
                    );
                }
                if let FieldKind::Switch { cases, .. } = &f.kind {
                    if has_no_case(f) {
                        if let Some(tn) = cases
                            .iter()
                            .map(|(_, tn)| self.s.type_name(tn))
                            .find(|tn| camel(tn) == "NoCase")
                        {
                            self.err(
                                f.pos_of("type"),
                                &format!("{}.type", f.key_path),
                                format!("case type `{tn}` would become the variant `NoCase`, which holds \"no case matched\""),
                                "rename the type, add a `_` case, or set `-sp-strict: true` on the field",
                            );
                        }
                    }
                }
            }
        }
    }
}

fn hint_names<'a>(what: &str, names: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<&str> = names.collect();
    if v.is_empty() {
        format!("define it under `{what}`")
    } else {
        format!("define it under `{what}`, or use one of: {}", v.join(", "))
    }
}

/// The range of an integer of `bytes` bytes.
fn int_range(bytes: u8, signed: bool) -> (i128, i128) {
    let bits = bytes as u32 * 8;
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}
