//! Walks a schema's types in order and types every expression where a reader and a writer
//! of the type evaluate it (see the module doc of `typed` for the scopes and the order).

use super::typer::{switch_types, Scope, Typer};
use super::{param_ty, ty_name, Side, Ty, Typed, TypedSchema};
use crate::derive::Derived;
use crate::diag::{Diag, Pos};
use crate::expr::{BinOp, Expr};
use crate::instances::{keeps_read_pos, uses_io, uses_io_end};
use crate::ir::*;
use crate::num_type::case_builtin;
use std::collections::HashMap;

/// Types every expression of `s` (after the check stage's names, references and layout).
/// Returns the typed expressions and the problems found, type by type.
pub(super) fn walk(s: &Schema, opts: &crate::Options) -> (TypedSchema, Vec<Diag>) {
    let open = crate::shape::open_enums(s);
    let mut diags = Vec::new();
    let mut out = TypedSchema::default();
    for t in &s.types {
        let mut w = TypeWalk {
            s,
            opts,
            t,
            typer: Typer::new(s, &open, t),
            derived: crate::derive::derived(s, t, &mut Vec::new()),
            diags: &mut diags,
            out: &mut out.exprs,
        };
        w.run();
    }
    (out, diags)
}

/// The fields reading type `tn` without a size (where it has no stream of its own), outside
/// processed fields.
pub(crate) fn unsized_readers<'s>(s: &'s Schema, tn: &TypeRef) -> Vec<&'s Field> {
    let mut out = Vec::new();
    for t in &s.types {
        for f in &t.fields {
            let (reads, sized) = match &f.kind {
                FieldKind::User { ty: name, size } => (name == tn, size.is_some()),
                FieldKind::Switch {
                    cases,
                    default,
                    size,
                    ..
                } => (
                    cases
                        .iter()
                        .map(|(_, n)| n)
                        .chain(default.iter())
                        .any(|n| n == tn),
                    size.is_some(),
                ),
                _ => (false, false),
            };
            if reads && !sized && f.process.is_none() {
                out.push(f);
            }
        }
    }
    out
}

/// The variants of a switch field: each case type with its keys (the default's with none
/// when no case names it).
fn switch_variants(f: &Field) -> Vec<(TypeRef, Vec<SrcExpr>)> {
    let FieldKind::Switch { cases, .. } = &f.kind else {
        return Vec::new();
    };
    switch_types(f)
        .into_iter()
        .map(|tn| {
            let keys = cases
                .iter()
                .filter(|(_, n)| *n == tn)
                .map(|(k, _)| k.clone())
                .collect();
            (tn, keys)
        })
        .collect()
}

/// A list of numbers with a literal count of 1..=32 (a fixed array in Rust, whose count the
/// writer does not check).
fn fixed_array(f: &Field) -> bool {
    matches!(
        (&f.kind, &f.repeat),
        (
            FieldKind::Int {
                enum_name: None,
                ..
            } | FieldKind::Float { .. },
            Repeat::Expr(SrcExpr {
                expr: Expr::Int(1..=32),
                ..
            })
        )
    )
}

/// The walk of one type.
struct TypeWalk<'a, 's> {
    s: &'s Schema,
    opts: &'a crate::Options,
    t: &'s TypeDef,
    typer: Typer<'s>,
    derived: HashMap<String, Derived>,
    diags: &'a mut Vec<Diag>,
    out: &'a mut Vec<Typed>,
}

impl TypeWalk<'_, '_> {
    fn err(&mut self, pos: Pos, path: &str, msg: impl Into<String>, hint: impl Into<String>) {
        self.diags
            .push(Diag::new(&self.s.file, pos, path, msg, hint));
    }

    /// Types `e` in `scope`, keeping the tree; reports a problem at `kp`.
    fn expr(&mut self, e: &SrcExpr, scope: &Scope, kp: &str) -> Option<Ty> {
        match self.typer.ty(&e.expr, scope) {
            Ok(x) => {
                let ty = x.ty.clone();
                self.out.push(Typed {
                    ty: self.t.id,
                    key_path: kp.to_owned(),
                    side: scope.side,
                    pos: e.pos,
                    src: e.src.clone(),
                    expr: x,
                });
                Some(ty)
            }
            Err((msg, hint)) => {
                self.err(e.pos, kp, format!("in `{}`: {msg}", e.src), hint);
                None
            }
        }
    }

    /// Types `e`, which must be of type `want` (an integer is taken where a float is).
    fn expect(&mut self, e: &SrcExpr, scope: &Scope, kp: &str, want: Ty) -> Option<()> {
        let ty = self.expr(e, scope, kp)?;
        if ty == want || (want == Ty::Float && ty == Ty::Int) {
            return Some(());
        }
        let hint = match want {
            Ty::Bool => {
                "write a condition, e.g. `kind == frame_kind::absolute` or `(flags & 1) != 0`"
            }
            Ty::Int => "write an integer expression; use `.to_i` on enum values",
            _ => "change the expression to the needed type",
        };
        self.err(
            e.pos,
            kp,
            format!(
                "`{}` is {} but {} is needed here",
                e.src,
                ty_name(self.s, &ty),
                ty_name(self.s, &want)
            ),
            hint,
        );
        None
    }

    /// The type: params, fields in order (the first problem stops it), the end of its bit
    /// fields, value instances, `to-string`.
    fn run(&mut self) -> Option<()> {
        let t = self.t;
        let (mut r, mut w) = self.params()?;
        let (mut unaligned, mut phase) = (false, Some(0));
        for f in &t.fields {
            if f.at.is_none() {
                unaligned = crate::bits::is_bit_field(f);
                phase = crate::bits::phase_after(phase, f);
            }
            self.field(f, &mut r, &mut w)?;
        }
        if unaligned && phase != Some(0) && self.s.strict {
            let kp = if t.key_path.is_empty() {
                "seq".to_owned()
            } else {
                format!("{}.seq", t.key_path)
            };
            let last = t.fields.last().map_or(t.pos, |f| f.pos);
            self.err(
                last,
                &kp,
                format!(
                    "type `{}` may end inside a byte (its bit fields do not add up to whole bytes)",
                    t.name
                ),
                crate::bits::unaligned_end_hint(),
            );
        }
        self.instances()?;
        self.display_rule()
    }

    /// The read and write scopes after the params, the `meta.endian` switch and (on write)
    /// the derived counts and lengths.
    fn params(&mut self) -> Option<(Scope, Scope)> {
        let t = self.t;
        let (mut r, mut w) = (Scope::new(Side::Read), Scope::new(Side::Write));
        for p in &t.params {
            // A param is a member like a field or an instance: one name, one member.
            let clash = t
                .fields
                .iter()
                .map(|f| (f.id.as_str(), f.pos, "field"))
                .chain(
                    t.instances
                        .iter()
                        .map(|i| (i.id.as_str(), i.pos, "instance")),
                )
                .find(|(n, _, _)| *n == p.id);
            if let Some((n, pos, what)) = clash {
                self.err(
                    pos,
                    &t.key_path,
                    format!("{what} `{n}` has the name of a param (a duplicate)"),
                    "rename the param or the member",
                );
            }
            let ty = param_ty(&p.kind);
            let ty = if p.optional {
                Ty::Opt(Box::new(ty))
            } else {
                ty
            };
            r.vars.push((p.id.clone(), ty.clone()));
            w.vars.push((p.id.clone(), ty));
        }
        if let Some(sw) = &t.endian_switch {
            for scope in [&r, &w] {
                self.endian_cases(sw, scope)?;
            }
            for sc in [&mut r, &mut w] {
                sc.vars.push((crate::endian::IS_LE.to_owned(), Ty::Bool));
            }
        }
        for f in &t.fields {
            let Some(d) = self.derived.get(&f.id) else {
                continue;
            };
            if !matches!(f.kind, FieldKind::Int { .. }) {
                continue;
            }
            if let Derived::Bytes(target) = d {
                t.fields.iter().find(|g| &g.id == target)?;
            }
            w.vars.push((f.id.clone(), Ty::Int));
        }
        Some((r, w))
    }

    /// A `meta.endian` switch: its value and each case key compared with it.
    fn endian_cases(&mut self, sw: &EndianSwitch, scope: &Scope) -> Option<()> {
        self.expr(&sw.on, scope, &format!("{}.switch-on", sw.key_path))?;
        for (key, _) in &sw.cases {
            let test = SrcExpr {
                expr: Expr::Binary(
                    BinOp::Eq,
                    Box::new(sw.on.expr.clone()),
                    Box::new(key.expr.clone()),
                ),
                src: format!("{} == {}", sw.on.src, key.src),
                pos: key.pos,
            };
            let ty = self.expr(&test, scope, &format!("{}.cases", sw.key_path))?;
            if ty != Ty::Bool {
                self.err(
                    key.pos,
                    &format!("{}.cases.{}", sw.key_path, key.src),
                    format!(
                        "case key `{}` cannot be compared with the switch value",
                        key.src
                    ),
                    "give keys of the switch value's type",
                );
                return None;
            }
        }
        Some(())
    }

    /// One field: its expressions on read, then on write; its name joins the scopes.
    fn field(&mut self, f: &Field, r: &mut Scope, w: &mut Scope) -> Option<()> {
        let kp = f.key_path.as_str();
        if let Some(c) = &f.cond {
            self.expect(c, r, &format!("{kp}.if"), Ty::Bool)?;
            if !uses_io_end(&c.expr) {
                self.expect(c, w, &format!("{kp}.if"), Ty::Bool)?;
            }
        }
        let repeated = !matches!(f.repeat, Repeat::None) && !f.varint;
        let indexed = |s: &Scope| {
            if repeated {
                s.with("_index", Ty::Int)
            } else {
                s.clone()
            }
        };
        self.elem_read(f, &indexed(r))?;
        if let Some(v) = &f.valid {
            self.valid(v, f, r, Side::Read)?;
        }
        if !f.varint {
            match &f.repeat {
                Repeat::Expr(e) => self.expect(e, r, &format!("{kp}.repeat-expr"), Ty::Int)?,
                Repeat::Until(u) => self.until(f, u, r)?,
                _ => {}
            }
        }
        if let Some(at) = &f.at {
            self.positional(f, at, r)?;
        }
        r.vars.push((f.id.clone(), self.typer.field_ty(f)));
        if let FieldKind::Contents(_) = &f.kind {
            if f.cond.is_none()
                && matches!(f.repeat, Repeat::None)
                && crate::instances::type_names(self.t).contains(&f.id)
            {
                w.vars.push((f.id.clone(), Ty::Bytes));
            }
        }
        self.field_write(f, w, repeated)
    }

    /// The writer's expressions of field `f`.
    fn field_write(&mut self, f: &Field, w: &mut Scope, repeated: bool) -> Option<()> {
        let kp = f.key_path.as_str();
        if !self.derived.contains_key(&f.id) && !matches!(f.kind, FieldKind::Contents(_)) {
            w.vars.push((f.id.clone(), self.typer.field_ty(f)));
        }
        let ww = if repeated {
            w.with("_index", Ty::Int)
        } else {
            w.clone()
        };
        self.elem_write(f, &ww)?;
        if let Some(v) = &f.valid {
            self.valid(v, f, w, Side::Write)?;
        }
        if !f.varint {
            if let Repeat::Expr(e) = &f.repeat {
                let derived_count = matches!(&e.expr, Expr::Name(n) if matches!(self.derived.get(n), Some(Derived::Count(l)) if *l == f.id));
                if !fixed_array(f) && !derived_count {
                    self.expect(e, w, &format!("{kp}.repeat-expr"), Ty::Int)?;
                }
            }
            if let Repeat::Until(u) = &f.repeat {
                if !uses_io_end(&u.expr) {
                    self.until(f, u, w)?;
                }
            }
        }
        if let Some(at) = &f.at {
            if let Some(io) = &at.io_of {
                self.value_of(f, io, w)?;
                self.expect(&at.pos, w, &format!("{kp}.pos"), Ty::Int)?;
            } else if !keeps_read_pos(at) {
                self.expect(&at.pos, w, &format!("{kp}.pos"), Ty::Int)?;
            }
        }
        Some(())
    }

    /// A positional instance's stream and position, on read.
    fn positional(&mut self, f: &Field, at: &Positional, r: &Scope) -> Option<()> {
        let kp = f.key_path.as_str();
        // `io: _root.x._io` with `x` read later: only a read on first use has the stream.
        if let Some(x) = &at.io_later {
            let refs = crate::lazy::schema_refs(self.s);
            if !crate::lazy::lazy_instances(self.s, self.t, &refs).contains(&f.id) {
                self.err(
                    at.pos.pos,
                    &format!("{kp}.io"),
                    format!("`io: _root.{x}._io`: `{x}` is read after the type holding `{}`, so the instance can only be read on first use, but it is read while the type is read (an expression names it, or `-sp-lazy: false`)", f.id),
                    format!("name the instance only from value instances, or read `{x}` before the type"),
                );
                return None;
            }
        }
        // `_io` in the instance's expressions is the type's own stream (see `emit::io_of`).
        if let Some(io) = &at.io_of {
            self.value_of(f, io, r)?;
        }
        self.expect(&at.pos, r, &format!("{kp}.pos"), Ty::Int)
    }

    /// `io: X._io`: `X` must be a user-type value whose type is only read in substreams.
    fn value_of(&mut self, f: &Field, io: &SrcExpr, scope: &Scope) -> Option<()> {
        let kp = format!("{}.io", f.key_path);
        let ty = self.expr(io, scope, &kp)?;
        let Ty::User(tn) = ty else {
            self.err(
                io.pos,
                &kp,
                format!(
                    "`io: {}._io`: `{}` is {}, which has no member `_io` (only a user-type value has a stream)",
                    io.src,
                    io.src,
                    ty_name(self.s, &ty)
                ),
                "name a field (or a list element) holding a user type read with a `size`",
            );
            return None;
        };
        if let Some(g) = unsized_readers(self.s, &tn).first() {
            let at = format!("{}:{}:{}", self.s.file, g.pos.line, g.pos.col);
            let msg = format!("`io: {}._io`: `{}` is also read without a `size` (`{}`, {at}), where it has no stream of its own", io.src, self.s.type_name(&tn), g.key_path);
            self.err(
                io.pos,
                &kp,
                msg,
                "give every field reading the type a `size` (or `size-eos`), so that its values are substreams",
            );
            return None;
        }
        Some(())
    }

    /// A `size` (an integer expression).
    fn size(&mut self, size: &Size, scope: &Scope, kp: &str) -> Option<()> {
        match size {
            Size::Expr(e) => self.expect(e, scope, &format!("{kp}.size"), Ty::Int),
            _ => Some(()),
        }
    }

    /// A `size` checked by the writer (not one that uses `_io.size` or `_io.eof`).
    fn size_check(&mut self, size: &Size, scope: &Scope, kp: &str) -> Option<()> {
        if matches!(size, Size::Expr(e) if uses_io_end(&e.expr)) {
            return Some(());
        }
        self.size(size, scope, kp)
    }

    /// One element's expressions on read.
    fn elem_read(&mut self, f: &Field, scope: &Scope) -> Option<()> {
        let kp = f.key_path.as_str();
        let (term, process) = (f.term.is_some(), f.process.is_some());
        match &f.kind {
            FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. } => Some(()),
            FieldKind::Bytes(_) | FieldKind::User { .. } if term && process => {
                if let Some(s @ Size::Expr(_)) = term_size(f) {
                    self.size(s, scope, kp)?;
                }
                self.processor(f, scope)
            }
            FieldKind::User { ty: name, size } if term => {
                if let Some(s @ Size::Expr(_)) = size {
                    self.size(s, scope, kp)?;
                }
                self.args(f, name, scope, kp)
            }
            FieldKind::Bytes(_) | FieldKind::Str { .. } if term => {
                if let Some(s @ Size::Expr(_)) = term_size(f) {
                    self.size(s, scope, kp)?;
                }
                Some(())
            }
            FieldKind::Bytes(_) | FieldKind::User { .. } if process => {
                let size = processed_size(f)?;
                self.size(size, scope, kp)?;
                self.processor(f, scope)?;
                match &f.kind {
                    FieldKind::User { ty: name, .. } => self.args(f, name, scope, kp),
                    _ => Some(()),
                }
            }
            FieldKind::Bytes(size) => self.size(size, scope, kp),
            FieldKind::Str { size, .. } => match size {
                Some(s) => self.size(s, scope, kp),
                None => Some(()),
            },
            FieldKind::Contents(_) => Some(()),
            FieldKind::User { ty: name, size } => {
                self.args(f, name, scope, kp)?;
                match size {
                    Some(s) => self.size(s, scope, kp),
                    None => Some(()),
                }
            }
            FieldKind::Switch { .. } => self.switch_read(f, scope),
        }
    }

    /// A switch field on read: its value, case keys, case arguments and size.
    fn switch_read(&mut self, f: &Field, scope: &Scope) -> Option<()> {
        let kp = f.key_path.as_str();
        let FieldKind::Switch {
            on, default, size, ..
        } = &f.kind
        else {
            return Some(());
        };
        let sty = self.expr(on, scope, &format!("{kp}.type.switch-on"))?;
        if !matches!(sty, Ty::Int | Ty::Enum(_) | Ty::Str | Ty::Bool | Ty::Bytes) {
            self.err(
                on.pos,
                &format!("{kp}.type.switch-on"),
                format!(
                    "`{}` is {}, not an integer, enum, string, bytes or condition",
                    on.src,
                    ty_name(self.s, &sty)
                ),
                "switch on an integer, enum, string or condition",
            );
            return None;
        }
        self.case_keys(f, &sty);
        for (tn, keys) in switch_variants(f) {
            if !case_builtin(self.s.type_name(&tn)) {
                self.args(f, &tn, scope, kp)?;
            }
            for k in &keys {
                let kty = self.expr(k, scope, &format!("{kp}.type.cases"))?;
                let fits = match (&sty, &kty) {
                    (Ty::Enum(_), Ty::Enum(_)) => true,
                    (a, b) => a == b,
                };
                if !fits {
                    self.err(
                        k.pos,
                        &format!("{kp}.type.cases"),
                        format!(
                            "case key `{}` is {}, which cannot be compared with the switch value ({})",
                            k.src,
                            ty_name(self.s, &kty),
                            ty_name(self.s, &sty)
                        ),
                        "give case keys of the switch value's type",
                    );
                    return None;
                }
            }
        }
        if let Some(d) = default {
            if !case_builtin(self.s.type_name(d)) {
                self.args(f, d, scope, kp)?;
            }
        }
        match size {
            Some(sz) => self.size(sz, scope, kp),
            None => Some(()),
        }
    }

    /// Case keys of a switch on an enum must be values of that enum, and no value may
    /// select two cases (`1` and `0x1` are the same key).
    fn case_keys(&mut self, f: &Field, switch_ty: &Ty) {
        let FieldKind::Switch { cases, .. } = &f.kind else {
            return;
        };
        let kp = format!("{}.type.cases", f.key_path);
        let mut seen: Vec<(i128, &str)> = Vec::new();
        for (k, _) in cases {
            let value = match &k.expr {
                Expr::Int(v) => Some(*v),
                Expr::EnumRef(e, v) => {
                    if let Ty::Enum(se) = switch_ty {
                        if self.s.enum_named(e).map(|d| d.id) != Some(*se) {
                            let se = &self.s.enm(*se).name;
                            self.err(
                                k.pos,
                                &kp,
                                format!(
                                    "case key `{}` is a `{e}` value but the switch is on a `{se}`",
                                    k.src
                                ),
                                format!("use values of `{se}` as case keys"),
                            );
                        }
                    }
                    self.s
                        .enum_named(e)
                        .and_then(|d| d.values.iter().find(|x| &x.name == v))
                        .map(|x| x.value)
                }
                _ => None,
            };
            if let Some(v) = value {
                match seen.iter().find(|(x, _)| *x == v) {
                    Some((_, first)) => {
                        let msg = format!(
                            "case key `{}` selects the same value ({v}) as `{first}`",
                            k.src
                        );
                        self.err(k.pos, &kp, msg, "give each case a different value");
                    }
                    None => seen.push((v, &k.src)),
                }
            }
        }
    }

    /// One element's expressions on write.
    fn elem_write(&mut self, f: &Field, scope: &Scope) -> Option<()> {
        let kp = f.key_path.as_str();
        let (term, process) = (f.term.is_some(), f.process.is_some());
        match &f.kind {
            FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. } => Some(()),
            FieldKind::Bytes(_) | FieldKind::User { .. } if term && process => {
                if let Some(s @ Size::Expr(_)) = term_size(f) {
                    self.size(s, scope, kp)?;
                }
                self.processor(f, scope)?;
                match &f.kind {
                    FieldKind::User { ty: name, .. } => self.args(f, name, scope, kp),
                    _ => Some(()),
                }
            }
            FieldKind::Bytes(_) | FieldKind::User { .. } if process => {
                let size = processed_size(f)?;
                self.processor(f, scope)?;
                self.size_check(size, scope, kp)?;
                if let FieldKind::User { ty: name, .. } = &f.kind {
                    self.args(f, name, scope, kp)?;
                }
                if proc_args_use_io(f) {
                    self.size(size, scope, kp)?;
                }
                Some(())
            }
            FieldKind::User { ty: name, size } if term => {
                if let Some(s @ Size::Expr(_)) = size {
                    self.size(s, scope, kp)?;
                }
                self.args(f, name, scope, kp)
            }
            FieldKind::Bytes(_) | FieldKind::Str { .. } if term => {
                if let Some(s @ Size::Expr(_)) = term_size(f) {
                    self.size(s, scope, kp)?;
                }
                Some(())
            }
            FieldKind::Bytes(size) => self.size_check(size, scope, kp),
            FieldKind::Str { size, .. } => match size {
                Some(s) => self.size_check(s, scope, kp),
                None => Some(()),
            },
            FieldKind::Contents(_) => Some(()),
            FieldKind::User { ty: name, size } => {
                if let Some(s) = size {
                    self.size_check(s, scope, kp)?;
                }
                self.args(f, name, scope, kp)
            }
            FieldKind::Switch { on, size, .. } => {
                self.expr(on, scope, &format!("{kp}.type.switch-on"))?;
                for (tn, keys) in switch_variants(f) {
                    for k in &keys {
                        self.expr(k, scope, &format!("{kp}.type.cases"))?;
                    }
                    if !case_builtin(self.s.type_name(&tn)) {
                        self.args(f, &tn, scope, kp)?;
                    }
                }
                match size {
                    Some(sz) => self.size_check(sz, scope, kp),
                    None => Some(()),
                }
            }
        }
    }

    /// The arguments field `f` gives the params of type `tn` (written ones, then the context
    /// params' paths), each of its param's type; a param of this type passed on unchanged is
    /// taken as it is.
    fn args(&mut self, f: &Field, tn: &TypeRef, scope: &Scope, kp: &str) -> Option<()> {
        if self.s.is_opaque(tn) && matches!(f.kind, FieldKind::User { .. }) {
            // An opaque type has no `params`: each argument is given as its own value.
            for a in &f.args {
                let ty = self.expr(a, scope, &format!("{kp}.type"))?;
                if !matches!(ty, Ty::Int | Ty::Bool | Ty::Float | Ty::Str | Ty::Bytes) {
                    self.err(
                        a.pos,
                        &format!("{kp}.type"),
                        format!(
                            "argument `{}` of opaque type `{}` is {}",
                            a.src,
                            self.s.type_name(tn),
                            ty_name(self.s, &ty)
                        ),
                        "give an opaque type integers, conditions, floats, strings or byte arrays",
                    );
                    return None;
                }
            }
            return Some(());
        }
        let params: &[Param] = self.s.type_of(tn).map_or(&[], |t| &t.params);
        let explicit: Vec<Option<SrcExpr>> = match &f.kind {
            FieldKind::User { .. } => f.args.iter().cloned().map(Some).collect(),
            _ => f
                .switch_args
                .iter()
                .find(|(n, _)| n == tn)
                .map(|(_, a)| a.iter().cloned().map(Some).collect())
                .unwrap_or_default(),
        };
        let written = params.iter().filter(|p| p.context.is_none()).count();
        if written != explicit.len() {
            self.err(
                f.pos_of("type"),
                &format!("{kp}.type"),
                format!(
                    "type `{}` takes {} argument(s) but {} are given",
                    self.s.type_name(tn),
                    written,
                    explicit.len()
                ),
                "give one argument per entry of the type's `params`, in order: `type: name(a, b)`",
            );
            return None;
        }
        let mut all = explicit;
        if let Some((_, ctx)) = f.ctx_args.iter().find(|(n, _)| Some(*n) == tn.id()) {
            all.extend(ctx.iter().cloned());
        }
        for (p, a) in params.iter().zip(&all) {
            let Some(a) = a else { continue };
            let direct = match &a.expr {
                Expr::Name(n) => self
                    .t
                    .params
                    .iter()
                    .any(|q| &q.id == n && q.kind == p.kind && q.optional == p.optional),
                _ => false,
            };
            if direct {
                continue;
            }
            let ty = self.expr(a, scope, &format!("{kp}.type"))?;
            let want = param_ty(&p.kind);
            if !(ty == want || (want == Ty::Float && ty == Ty::Int)) {
                let what = match &p.context {
                    Some(c) => {
                        format!("`{c}` of `{}` (given as `{}`)", self.s.type_name(tn), a.src)
                    }
                    None => format!("argument `{}`", a.src),
                };
                self.err(
                    f.pos_of("type"),
                    &format!("{kp}.type"),
                    format!(
                        "{what} is {} but param `{}` of `{}` is {}",
                        ty_name(self.s, &ty),
                        p.id,
                        self.s.type_name(tn),
                        ty_name(self.s, &want)
                    ),
                    "pass a value of the param's type",
                );
                return None;
            }
        }
        Some(())
    }

    /// The arguments of `f`'s processor.
    fn processor(&mut self, f: &Field, scope: &Scope) -> Option<()> {
        let kp = format!("{}.process", f.key_path);
        match f.process.as_ref()? {
            Process::Zlib | Process::Xor(ProcArg::Bytes(_)) => Some(()),
            Process::Xor(ProcArg::Expr(e)) => {
                let ty = self.expr(e, scope, &kp)?;
                if matches!(ty, Ty::Int | Ty::Bytes) {
                    return Some(());
                }
                self.err(
                    e.pos,
                    &kp,
                    format!("the xor key `{}` is {}", e.src, ty_name(self.s, &ty)),
                    "give an integer (one byte) or a byte field",
                );
                None
            }
            Process::Rol(e) | Process::Ror(e) => self.expect(e, scope, &kp, Ty::Int),
            Process::Custom { name, args } => {
                if let Err(m) = crate::process::processor_path(self.opts, name) {
                    self.err(
                        f.pos_of("process"),
                        &kp,
                        m,
                        "give a Rust path such as `crate::codecs::MyFx`",
                    );
                    return None;
                }
                for a in args {
                    let ty = self.expr(a, scope, &kp)?;
                    if !matches!(ty, Ty::Int | Ty::Bool | Ty::Float | Ty::Str | Ty::Bytes) {
                        self.err(
                            a.pos,
                            &kp,
                            format!("processor argument `{}` is {}", a.src, ty_name(self.s, &ty)),
                            "give integers, conditions, floats, strings or byte arrays",
                        );
                        return None;
                    }
                }
                Some(())
            }
        }
    }

    /// A `valid` rule, with `_` bound to the value (a switch of number types: its number).
    /// A rule the field's kind cannot take is reported once, on read.
    fn valid(&mut self, v: &Valid, f: &Field, scope: &Scope, side: Side) -> Option<()> {
        let bare = Field {
            cond: None,
            repeat: Repeat::None,
            ..f.clone()
        };
        let number_switch = self.typer.number_switch_ty(&self.typer.field_ty(&bare));
        let user_expr = matches!(f.kind, FieldKind::User { .. }) && matches!(v, Valid::Expr(_));
        let plain = matches!(
            f.kind,
            FieldKind::Int { .. }
                | FieldKind::Bits { .. }
                | FieldKind::Float { .. }
                | FieldKind::Str { .. }
                | FieldKind::Bytes(_)
        );
        let vkp = format!("{}.valid", f.key_path);
        if f.varint || !plain && number_switch.is_none() && !user_expr {
            if side == Side::Read {
                let (msg, hint) = if matches!(f.kind, FieldKind::User { .. }) {
                    (
                        "`valid` on a user-type field takes the form `expr` (`valid: {expr: _.version == 2}`)",
                        "write the rule as an expression over `_`, or move it to the type's own field",
                    )
                } else {
                    (
                        "`valid` is supported on integer, bit, float, enum, string, byte and user-type fields (and their lists)",
                        "move the rule to the element type's field, or drop it",
                    )
                };
                self.err(f.pos_of("valid"), &vkp, msg, hint);
            }
            return None;
        }
        let ty = number_switch.unwrap_or_else(|| self.typer.field_ty(&bare));
        let s2 = scope.with("_", ty.clone());
        let want = match &ty {
            Ty::Enum(_) | Ty::Str | Ty::Bytes => ty.clone(),
            Ty::Float => Ty::Float,
            _ => Ty::Int,
        };
        match v {
            Valid::Eq(e) => self.expect(e, &s2, &vkp, want),
            Valid::InEnum if matches!(ty, Ty::Enum(_)) => Some(()),
            Valid::InEnum => {
                if side == Side::Read {
                    self.err(
                        f.pos_of("valid"),
                        &vkp,
                        "`valid: {in-enum: true}` needs a field with `enum`",
                        "add `enum: <name>` to the field, or drop the rule",
                    );
                }
                None
            }
            Valid::Range(..) if matches!(want, Ty::Enum(_)) => {
                self.err(
                    f.pos_of("valid"),
                    &vkp,
                    "`min`/`max` need a number, string or byte field",
                    "use `eq` or `any-of` for enums",
                );
                None
            }
            Valid::Range(a, b) => {
                for e in [a, b].into_iter().flatten() {
                    self.expect(e, &s2, &vkp, want.clone())?;
                }
                Some(())
            }
            Valid::AnyOf(list) => {
                for e in list {
                    self.expect(e, &s2, &vkp, want.clone())?;
                }
                Some(())
            }
            Valid::Expr(e) => self.expect(e, &s2, &vkp, Ty::Bool),
        }
    }

    /// `repeat-until`, with `_` bound to one element.
    fn until(&mut self, f: &Field, u: &SrcExpr, scope: &Scope) -> Option<()> {
        let ety = self.typer.field_ty(&Field {
            cond: None,
            repeat: Repeat::None,
            ..f.clone()
        });
        let kp = format!("{}.repeat-until", f.key_path);
        self.expect(u, &scope.with("_", ety), &kp, Ty::Bool)
    }

    /// The scope of value instances and `to-string`: every param and field (what the writer
    /// derives as an integer; fixed contents are not members).
    fn method_scope(&self) -> Scope {
        let mut scope = Scope::new(Side::Value);
        for p in &self.t.params {
            let ty = param_ty(&p.kind);
            let ty = if p.optional {
                Ty::Opt(Box::new(ty))
            } else {
                ty
            };
            scope.vars.push((p.id.clone(), ty));
        }
        for f in &self.t.fields {
            if self.derived.contains_key(&f.id) {
                scope.vars.push((f.id.clone(), Ty::Int));
            } else if !matches!(f.kind, FieldKind::Contents(_)) {
                scope.vars.push((f.id.clone(), self.typer.field_ty(f)));
            }
        }
        scope
    }

    /// Value instances: each typed on its own (a problem of one does not stop the next);
    /// the first wrong `if` stops the type.
    fn instances(&mut self) -> Option<()> {
        const RESERVED: [&str; 7] = [
            "read_from",
            "write_to",
            "write_with_context",
            "encoded_len",
            "decode",
            "decode_traced",
            "encode",
        ];
        let t = self.t;
        let scope = self.method_scope();
        for inst in &t.instances {
            let kp = inst.key_path.as_str();
            if RESERVED.contains(&inst.id.as_str()) || t.fields.iter().any(|f| f.id == inst.id) {
                self.err(
                    inst.pos,
                    kp,
                    format!(
                        "instance `{}` has the name of a field or of a generated method",
                        inst.id
                    ),
                    "rename the instance",
                );
                continue;
            }
            let typed =
                self.typer
                    .ty(&inst.value.expr, &scope)
                    .and_then(|v| match &inst.enum_name {
                        None => Ok(v),
                        Some(e) => self.typer.int_as_enum(e, v),
                    });
            let v = match typed {
                Ok(v) => v,
                Err((msg, hint)) => {
                    let msg = format!("in `{}`: {msg}", inst.value.src);
                    self.err(inst.value.pos, &format!("{kp}.value"), msg, hint);
                    continue;
                }
            };
            let supported = match &v.ty {
                Ty::Int
                | Ty::Float
                | Ty::Bool
                | Ty::Str
                | Ty::Bytes
                | Ty::Enum(_)
                | Ty::User(_)
                | Ty::Switch(..)
                | Ty::Io
                | Ty::AnyStruct => true,
                Ty::List(e) => {
                    matches!(
                        **e,
                        Ty::Int | Ty::Float | Ty::Str | Ty::Bool | Ty::User(_) | Ty::AnyUser(_)
                    )
                }
                _ => false,
            };
            if !supported {
                let msg = format!(
                    "value instances of {} are not supported yet",
                    ty_name(self.s, &v.ty)
                );
                self.err(
                    inst.value.pos,
                    &format!("{kp}.value"),
                    msg,
                    "give the instance a number, condition, string, bytes or enum value",
                );
                continue;
            }
            self.out.push(Typed {
                ty: t.id,
                key_path: format!("{kp}.value"),
                side: Side::Value,
                pos: inst.value.pos,
                src: inst.value.src.clone(),
                expr: v,
            });
            if let Some(c) = &inst.cond {
                self.expect(c, &scope, &format!("{kp}.if"), Ty::Bool)?;
            }
        }
        Some(())
    }

    /// `to-string`: a string over the value.
    fn display_rule(&mut self) -> Option<()> {
        let t = self.t;
        let Some(e) = &t.to_string else {
            return Some(());
        };
        let kp = if t.key_path.is_empty() {
            "to-string".to_owned()
        } else {
            format!("{}.to-string", t.key_path)
        };
        let scope = self.method_scope();
        match self.typer.ty(&e.expr, &scope) {
            Ok(v) if v.ty == Ty::Str => {
                self.out.push(Typed {
                    ty: t.id,
                    key_path: kp,
                    side: Side::Value,
                    pos: e.pos,
                    src: e.src.clone(),
                    expr: v,
                });
                Some(())
            }
            Ok(v) => {
                let msg = format!(
                    "`to-string` must be a string, but `{}` is {}",
                    e.src,
                    ty_name(self.s, &v.ty)
                );
                self.err(
                    e.pos,
                    &kp,
                    msg,
                    "convert it, e.g. `value.to_s` or `\"id \" + id.to_s`",
                );
                None
            }
            Err((msg, hint)) => {
                self.err(e.pos, &kp, format!("in `{}`: {msg}", e.src), hint);
                None
            }
        }
    }
}

/// The `size` of a terminated field, if it has one.
fn term_size(f: &Field) -> Option<&Size> {
    match &f.kind {
        FieldKind::Bytes(s) => Some(s),
        FieldKind::User { size, .. } | FieldKind::Str { size, .. } => size.as_ref(),
        _ => None,
    }
}

/// The `size` of a processed field (one without it has none to type).
fn processed_size(f: &Field) -> Option<&Size> {
    match &f.kind {
        FieldKind::Bytes(s) => Some(s),
        FieldKind::User { size: Some(s), .. } => Some(s),
        _ => None,
    }
}

/// True when an argument of `f`'s processor uses `_io` (the writer then types the size
/// again, to move `_io.pos` past the stored bytes).
fn proc_args_use_io(f: &Field) -> bool {
    let exprs: Vec<&SrcExpr> = match &f.process {
        Some(Process::Xor(ProcArg::Expr(e))) | Some(Process::Rol(e)) | Some(Process::Ror(e)) => {
            vec![e]
        }
        Some(Process::Custom { args, .. }) => args.iter().collect(),
        _ => Vec::new(),
    };
    exprs.iter().any(|e| uses_io(&e.expr))
}
