//! What the Luau and the Lua 5.1 backends emit alike: the state both keep while a module is
//! written ([`Core`]: the schema, the diagnostics, fresh names, the minimum lengths of
//! types), the expressions of a field (sizes, arguments, conditions, `valid` rules, counts),
//! the enum tables of a module, the instances of a value, and the reads both write the
//! same way (numbers, bit fields, `contents`, switches; [`Backend`]). Where the two
//! dialects differ in a detail (an `if` expression, a message built by concatenation rather
//! than by a template, `N(...)` around a Lua 5.1 size), the code asks [`Core::dialect`].

use super::expr::{dot, elem_kind, lua_str, param_local, Dialect, Kind, Scope};
use super::{case_chain, ind, int_call, lua_key};
use crate::diag::Diag;
use crate::ir::{
    Endian, Field, FieldKind, Repeat, Schema, Size, SrcExpr, TermSpec, TypeDef, Valid,
};
use std::collections::HashMap;
use std::fmt::Write as _;

type R<T> = Result<T, String>;

/// The state of one module being written, shared by both backends.
pub(super) struct Core<'a> {
    /// The checked schema.
    pub s: &'a Schema,
    /// The dialect written.
    pub dialect: Dialect,
    /// What the backend refused, so far.
    pub diags: Vec<Diag>,
    /// The shortest encoding of each user type, in bytes.
    pub min_lens: HashMap<crate::ir::TypeId, usize>,
    /// The counter of fresh local names.
    pub tmp: usize,
    /// Fields of the type being read whose values are also in locals (Luau's runs of
    /// numbers; always empty in Lua 5.1): later expressions of the type use the local.
    pub field_locals: Vec<(String, String)>,
    /// The type whose body `field_locals` belong to.
    pub locals_of: Option<String>,
}

impl<'a> Core<'a> {
    /// The state for writing schema `s` in `dialect`.
    pub fn new(s: &'a Schema, dialect: Dialect) -> Self {
        Core {
            s,
            dialect,
            diags: Vec::new(),
            min_lens: crate::sizes::min_lens(s).0,
            tmp: 0,
            field_locals: Vec::new(),
            locals_of: None,
        }
    }

    /// The module written (`out`), or every diagnostic given while writing it.
    pub fn result(&mut self, out: String) -> Result<String, Vec<Diag>> {
        if self.diags.is_empty() {
            Ok(out)
        } else {
            Err(std::mem::take(&mut self.diags))
        }
    }

    /// Records that the construct at `pos` cannot be written in this dialect.
    pub fn diag(&mut self, pos: crate::diag::Pos, key_path: &str, msg: String) {
        let target = match self.dialect {
            Dialect::Luau => "luau",
            Dialect::Lua51 => "lua51",
        };
        self.diags.push(Diag::new(
            &self.s.file,
            pos,
            key_path,
            format!("--target {target}: {msg}"),
            format!("this construct is not supported by `--target {target}` yet; read the file with the Rust reader, or change the schema"),
        ));
    }

    /// A local name not used before: `p` and a number.
    pub fn fresh(&mut self, p: &str) -> String {
        self.tmp += 1;
        format!("{p}{}", self.tmp)
    }

    /// The module's enum tables (`M.enums.<enum>` by name, `M.enumNames.<enum>` by value),
    /// with their header; a value a double cannot hold exactly is refused.
    pub fn enum_tables(&mut self, o: &mut String) {
        let s = self.s;
        o.push_str(
            "--- Enum values by name, and names by value.\nM.enums = {}\nM.enumNames = {}\n",
        );
        for en in &s.enums {
            let mut by_name = Vec::new();
            let mut by_val = Vec::new();
            for v in &en.values {
                if v.value.abs() > super::expr::EXACT {
                    self.diag(
                        v.pos,
                        &format!("enums.{}", en.schema_name),
                        format!("enum value {} is beyond 2^53", v.value),
                    );
                    continue;
                }
                by_name.push(format!("{} = {}", lua_key(&v.name), v.value));
                by_val.push(format!("[{}] = {}", v.value, lua_str(v.name.as_bytes())));
            }
            let _ = writeln!(
                o,
                "{} = {{ {} }}\n{} = {{ {} }}",
                dot("M.enums", &en.name),
                by_name.join(", "),
                dot("M.enumNames", &en.name),
                by_val.join(", ")
            );
        }
    }

    /// Where expressions of type `t` are compiled, with `io` the stream.
    pub fn scope(&self, t: &'a TypeDef, io: &'a str) -> Scope<'a> {
        Scope {
            dialect: self.dialect,
            s: self.s,
            t,
            this: "v",
            elem: None,
            elem_var: "e",
            index: None,
            io,
            start: Some("__start"),
            inlining: Vec::new(),
            field_locals: Vec::new(),
        }
    }

    /// Compiles `e` in the scope of type `t` (reader side) with `_`, `_index` as given.
    pub fn ex(
        &mut self,
        t: &'a TypeDef,
        e: &SrcExpr,
        io: &'a str,
        elem: Option<(Kind, &'a str)>,
        index: Option<&'a str>,
    ) -> R<(String, Kind)> {
        let mut sc = self.scope(t, io);
        if let Some((k, var)) = elem {
            sc.elem = Some(k);
            sc.elem_var = var;
        }
        sc.index = index;
        if self.locals_of.as_deref() == Some(t.name.as_str()) {
            sc.field_locals = self.field_locals.clone();
        }
        sc.compile(&e.expr).map_err(|m| format!("`{}`: {m}", e.src))
    }

    /// The shortest encoding of one element of `f`, in bytes.
    pub fn min_len(&self, f: &Field) -> usize {
        match &f.kind {
            FieldKind::User { ty: name, .. } => name
                .id()
                .and_then(|i| self.min_lens.get(&i).copied())
                .unwrap_or(0),
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => usize::from(*bytes),
            FieldKind::Str { size: None, .. } => 1,
            _ => 0,
        }
    }

    /// The enum whose unknown values are errors on this field (strict rules), if any.
    pub fn enum_checked(&self, f: &Field) -> Option<String> {
        if !f.strict {
            return None;
        }
        match &f.kind {
            FieldKind::Int {
                enum_name: Some(e), ..
            }
            | FieldKind::Bits {
                enum_name: Some(e), ..
            } => Some(self.s.enum_name(e).to_owned()),
            _ => None,
        }
    }

    /// The expression of a size (`nil` for a field ended by its terminator); in Lua 5.1 a
    /// computed size goes through `N(...)`, the runtime's number check.
    pub fn size_expr(
        &mut self,
        t: &'a TypeDef,
        size: Option<&'a Size>,
        r: &'a str,
        index: Option<&'a str>,
    ) -> R<String> {
        Ok(match size {
            Some(Size::Expr(e)) => {
                let x = self.ex(t, e, r, None, index)?.0;
                match self.dialect {
                    Dialect::Luau => x,
                    Dialect::Lua51 => format!("N({x})"),
                }
            }
            Some(Size::Eos) => format!("({r}.limit - {r}.pos)"),
            Some(Size::Terminator) | None => "nil".into(),
        })
    }

    /// The runtime call reading a terminated value and its arguments after the size.
    pub fn term_read(&self, term: &TermSpec) -> R<(&'static str, String)> {
        if term.width == 2 {
            if term.terminator.unwrap_or(0) != 0 {
                return Err("a two-byte terminator other than zero".into());
            }
            return Ok((
                "readTerm2",
                format!(
                    "{}, {}, {}, {}",
                    term.include,
                    term.consume,
                    term.eos_error,
                    term.pad_right.map_or("nil".to_string(), |b| b.to_string())
                ),
            ));
        }
        Ok(("readTerm", self.term_args(term)?))
    }

    /// The arguments of `S.readTerm` after the size (a one-byte terminator).
    pub fn term_args(&self, term: &TermSpec) -> R<String> {
        if term.width != 1 {
            return Err("a two-byte (UTF-16) terminator".into());
        }
        Ok(format!(
            "{}, {}, {}, {}, {}",
            term.terminator.map_or("nil".to_string(), |b| b.to_string()),
            term.include,
            term.consume,
            term.eos_error,
            term.pad_right.map_or("nil".to_string(), |b| b.to_string())
        ))
    }

    /// Arguments for reading user type `tn` from field `f` (explicit, then context ones),
    /// each after a comma. Errors: `tn` is not a type of the schema (an opaque type).
    pub fn args(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        tn: &str,
        r: &'a str,
        index: Option<&'a str>,
        explicit: &'a [SrcExpr],
    ) -> R<String> {
        if self.s.type_named(tn).is_none() {
            return Err(format!(
                "type `{tn}` is not defined in the schema (an opaque type)"
            ));
        }
        let mut out = String::new();
        for a in explicit {
            let (x, _) = self.ex(t, a, r, None, index)?;
            let _ = write!(out, ", {x}");
        }
        if let Some((_, ctx)) = f.ctx_args.iter().find(|(n, _)| self.s.ty(*n).name == tn) {
            for a in ctx {
                match a {
                    Some(a) => {
                        let (x, _) = self.ex(t, a, r, None, index)?;
                        let _ = write!(out, ", {x}");
                    }
                    None => out.push_str(", nil"),
                }
            }
        }
        Ok(out)
    }

    /// The conditions of `f`'s `valid` rule on the value in local `ev` (empty without a
    /// rule); `in-enum` looks the value up in `names(enum)`, the enum's names table.
    pub fn valid_conds(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &'a str,
        ev: &'a str,
        index: Option<&'a str>,
        names: impl Fn(&str) -> String,
    ) -> R<Vec<String>> {
        let Some(rule) = &f.valid else {
            return Ok(Vec::new());
        };
        let k = elem_kind(self.s, f);
        let mut conds = Vec::new();
        match rule {
            Valid::Eq(e) => {
                let (x, _) = self.ex(t, e, r, Some((k.clone(), ev)), index)?;
                conds.push(format!("{ev} == {x}"));
            }
            Valid::Range(lo, hi) => {
                if let Some(lo) = lo {
                    let (x, _) = self.ex(t, lo, r, Some((k.clone(), ev)), index)?;
                    conds.push(format!("{ev} >= {x}"));
                }
                if let Some(hi) = hi {
                    let (x, _) = self.ex(t, hi, r, Some((k.clone(), ev)), index)?;
                    conds.push(format!("{ev} <= {x}"));
                }
            }
            Valid::AnyOf(list) => {
                let mut alts = Vec::new();
                for e in list {
                    let (x, _) = self.ex(t, e, r, Some((k.clone(), ev)), index)?;
                    alts.push(format!("{ev} == {x}"));
                }
                conds.push(format!("({})", alts.join(" or ")));
            }
            Valid::Expr(e) => {
                let (x, _) = self.ex(t, e, r, Some((k.clone(), ev)), index)?;
                conds.push(x);
            }
            Valid::InEnum => match &k {
                Kind::Enum(en) => conds.push(format!("{}[{ev}] ~= nil", names(en))),
                _ => return Err("`valid: in-enum` on a field without an enum".into()),
            },
        }
        Ok(conds)
    }

    /// The opening `if` of a conditional field (one tab in), and the depth of the code
    /// inside it (1 without a condition).
    pub fn cond_open(&mut self, t: &'a TypeDef, f: &'a Field) -> R<(String, usize)> {
        match &f.cond {
            Some(c) => {
                let (c, _) = self.ex(t, c, "r", None, None)?;
                Ok((format!("\tif {c} then\n"), 2))
            }
            None => Ok((String::new(), 1)),
        }
    }

    /// A LEB128 field read from `r` into `target`, if `f` is one.
    pub fn varint(f: &Field, r: &str, target: &str, fname: &str, i0: &str) -> Option<String> {
        if !f.varint {
            return None;
        }
        let call = if matches!(f.kind, FieldKind::Bits { .. }) {
            "uleb128Bits"
        } else {
            "uleb128"
        };
        Some(format!("{i0}{target} = S.{call}({r}, {fname})\n"))
    }

    /// The check, before a counted list of `f` is read, that the bytes left can hold `n`
    /// elements (nothing for a short fixed array of numbers, `fixed`).
    pub fn count_check(&self, f: &Field, fixed: bool, r: &str, fname: &str, i0: &str) -> String {
        if fixed {
            return String::new();
        }
        match &f.kind {
            FieldKind::Bits { width, .. } => {
                format!("{i0}\tS.checkCountBits({r}, n, {width}, {fname})\n")
            }
            _ => format!("{i0}\tS.checkCount({r}, n, {}, {fname})\n", self.min_len(f)),
        }
    }

    /// The params a value keeps (those not passed as context) stored into `v`, then its
    /// value instances, each computed at once (an error leaves it `nil`); `body(c, x)` is the
    /// function body giving `x` when `c` (if any) holds.
    pub fn params_and_instances(
        &mut self,
        t: &'a TypeDef,
        o: &mut String,
        body: impl Fn(Option<&str>, &str) -> String,
    ) {
        for p in t.params.iter().filter(|p| p.context.is_none()) {
            let _ = writeln!(o, "\t{} = {}", dot("v", &p.id), param_local(&p.id));
        }
        for i in &t.instances {
            let mut sc = self.scope(t, "r");
            sc.inlining.push(i.id.clone());
            let code = sc.compile(&i.value.expr).and_then(|(x, _)| match &i.cond {
                Some(c) => {
                    let (c, _) = sc.compile(&c.expr)?;
                    Ok(body(Some(&c), &x))
                }
                None => Ok(body(None, &x)),
            });
            match code {
                Ok(x) => match self.dialect {
                    Dialect::Luau => {
                        let _ = writeln!(
                            o,
                            "\t{} = S.try(function() return {x} end)",
                            dot("v", &i.id)
                        );
                    }
                    Dialect::Lua51 => {
                        let _ = writeln!(o, "\t{} = S.try(function() {x} end)", dot("v", &i.id));
                    }
                },
                Err(m) => self.diag(i.pos, &i.key_path, format!("`{}`: {m}", i.value.src)),
            }
        }
    }

    /// The user type of the value named by `io: X._io` in field `f` of `t`: one type, read
    /// only in sized fields (a value read in its parent's stream keeps no substream).
    pub fn io_value_type(&mut self, t: &'a TypeDef, f: &Field, io: &SrcExpr) -> R<String> {
        let (_, kind) = self.ex(t, io, "r", None, None)?;
        let tn = match kind {
            Kind::User(names) if names.len() == 1 => names[0].clone(),
            _ => {
                return Err(format!(
                    "`io: {}._io`: `{}` is not a value of one user type (no stream of its own)",
                    io.src, io.src
                ))
            }
        };
        if let Some(g) = crate::typed::unsized_readers(
            self.s,
            &self
                .s
                .type_named(&tn)
                .map_or(crate::ir::TypeRef::Named(tn.clone()), |d| {
                    crate::ir::TypeRef::Id(d.id)
                }),
        )
        .first()
        {
            return Err(format!(
                "`io: {}._io` (in `{}`): `{tn}` is also read without a `size` (`{}`), where it has no stream of its own",
                io.src, f.key_path, g.key_path
            ));
        }
        Ok(tn)
    }

    /// Whether a positional instance of the schema reads another value's stream (`io:
    /// X._io`): only then do values read in a substream keep it.
    pub fn has_io_of(&self) -> bool {
        self.s.types.iter().any(|t| {
            t.fields
                .iter()
                .any(|f| f.at.as_ref().is_some_and(|a| a.io_of.is_some()))
        })
    }

    /// A message argument of `S.failAt`: `S.show(value)` and then `text` (a template in
    /// Luau, a concatenation in Lua 5.1).
    pub fn shown(&self, value: &str, text: &str) -> String {
        match self.dialect {
            Dialect::Luau => format!("`{{S.show({value})}} {text}`"),
            Dialect::Lua51 => format!(
                "S.show({value}) .. {}",
                lua_str(format!(" {text}").as_bytes())
            ),
        }
    }

    /// `dst = ` one value read from `r` by both readers' plain calls: an integer, a float, a
    /// bit field (a boolean for `b1`, offset binary taken off), `contents`; `None` for the
    /// other kinds. A byte order decided while reading picks the call by `p___is_le`.
    pub fn read_plain(
        &self,
        f: &Field,
        r: &str,
        dst: &str,
        fname: &str,
        i0: &str,
    ) -> R<Option<String>> {
        let pick = |le: &str, be: &str| {
            match self.dialect {
            Dialect::Luau => format!(
                "{i0}{dst} = if p___is_le then S.{le}({r}, {fname}) else S.{be}({r}, {fname})\n"
            ),
            Dialect::Lua51 => format!(
                "{i0}if p___is_le then {dst} = S.{le}({r}, {fname}) else {dst} = S.{be}({r}, {fname}) end\n"
            ),
        }
        };
        Ok(Some(match &f.kind {
            FieldKind::Int {
                bytes,
                signed,
                endian,
                ..
            } => {
                if *endian == Endian::Computed && *bytes > 1 {
                    let le = int_call(*bytes, *signed, Endian::Le)?;
                    let be = int_call(*bytes, *signed, Endian::Be)?;
                    pick(&le, &be)
                } else {
                    let call = int_call(*bytes, *signed, *endian)?;
                    format!("{i0}{dst} = S.{call}({r}, {fname})\n")
                }
            }
            FieldKind::Float { bytes, endian } => {
                let bits = u32::from(*bytes) * 8;
                match endian {
                    Endian::Computed => pick(&format!("f{bits}le"), &format!("f{bits}be")),
                    e => {
                        let e = if *e == Endian::Le { "le" } else { "be" };
                        format!("{i0}{dst} = S.f{bits}{e}({r}, {fname})\n")
                    }
                }
            }
            FieldKind::Bits {
                width,
                offset_binary,
                le,
                enum_name,
            } => {
                let w = u32::from(*width);
                let call = if *le { "bitsLe" } else { "bitsBe" };
                let raw = if w <= 32 {
                    format!("S.{call}({r}, {w}, {fname})")
                } else if w <= 53 {
                    format!("S.{call}Wide({r}, {w}, {fname})")
                } else {
                    let lang = match self.dialect {
                        Dialect::Luau => "Luau",
                        Dialect::Lua51 => "Lua",
                    };
                    return Err(format!(
                        "bit field b{w} is wider than 53 bits, which a {lang} number cannot hold exactly"
                    ));
                };
                let v = if w == 1 && !offset_binary && enum_name.is_none() {
                    format!("{raw} == 1")
                } else if *offset_binary {
                    format!("{raw} - {}", 1u64 << (w - 1))
                } else {
                    raw
                };
                format!("{i0}{dst} = {v}\n")
            }
            FieldKind::Contents(c) => {
                let lit = lua_str(c);
                format!("{i0}S.contents({r}, {lit}, {fname})\n{i0}{dst} = {lit}\n")
            }
            _ => return Ok(None),
        }))
    }
}

/// `, p1, p2` of a type's params, as its read and write functions take them.
pub(super) fn params_list(t: &TypeDef) -> String {
    t.params
        .iter()
        .map(|p| format!(", {}", param_local(&p.id)))
        .collect()
}

/// Whether a `repeat: expr` list of `f` counted by `e` is a short fixed array of plain
/// numbers (a literal count of 1 to 32), which needs no check of the count against the
/// bytes left.
pub(super) fn fixed_array(f: &Field, e: &SrcExpr) -> bool {
    matches!(f.repeat, Repeat::Expr(_))
        && matches!(
            (&f.kind, &e.expr),
            (
                FieldKind::Int {
                    enum_name: None,
                    ..
                } | FieldKind::Float { .. },
                crate::expr::Expr::Int(1..=32)
            )
        )
}

/// `Deref` and `DerefMut` of a backend's emitter (`$t<'a>`, with the field `c`) to its
/// [`Core`], so that the emitter uses the shared state and methods as its own.
macro_rules! core_deref {
    ($t:ident) => {
        impl<'a> std::ops::Deref for $t<'a> {
            type Target = super::shared::Core<'a>;
            fn deref(&self) -> &super::shared::Core<'a> {
                &self.c
            }
        }

        impl<'a> std::ops::DerefMut for $t<'a> {
            fn deref_mut(&mut self) -> &mut super::shared::Core<'a> {
                &mut self.c
            }
        }
    };
}
pub(super) use core_deref;

/// The parts of a backend a shared read calls back into.
pub(super) trait Backend<'a>: std::ops::DerefMut<Target = Core<'a>> {
    /// `dst = <a value of user type tn read from r>`, as the backend reads one (sized,
    /// processed, terminated, with the path entered unless `fname` is `nil`).
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
    ) -> R<String>;

    /// The expression of reader `r`'s position where the code goes (`r.pos`, unless the
    /// backend keeps it in a local there).
    fn pos_expr(&self, r: &str) -> String {
        format!("{r}.pos")
    }

    /// The cases of a switch on `sel` as code at depth `d` (`numeric`: the selector is a
    /// number and there is no `_` case); a chain of `on == key` tests unless the backend has
    /// better.
    fn dispatch(
        &self,
        sel: &str,
        arms: &[(String, String)],
        fallback: &str,
        numeric: bool,
        d: usize,
    ) -> String {
        let _ = (sel, numeric);
        case_chain(arms, fallback, &ind(d))
    }

    /// What a lenient sized switch does after its case, reading from substream `rr` into
    /// `dst` (Luau keeps the bytes left unread for its writer).
    fn after_lenient_sized_case(&self, rr: &str, dst: &str, i0: &str) -> String {
        let _ = (rr, dst, i0);
        String::new()
    }

    /// A user type's or a switch's value read from `r` into `dst`, at depth `d`; `None`
    /// for the other kinds.
    #[allow(clippy::too_many_arguments)]
    fn read_nested(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &'a str,
        dst: &str,
        fname: &str,
        index: Option<&'a str>,
        d: usize,
    ) -> R<Option<String>> {
        Ok(match &f.kind {
            FieldKind::User { ty: name, size } => Some(self.read_user(
                t,
                f,
                self.s.type_name(name),
                size.as_ref(),
                r,
                dst,
                fname,
                index,
                &f.args,
                d,
            )?),
            FieldKind::Switch { .. } => Some(self.read_switch(t, f, r, dst, fname, index, d)?),
            _ => None,
        })
    }

    /// A switch field read from `r` into `dst`, at depth `d`: the selector, the case it
    /// picks (a number type or a user type, with a substream when the switch has a size),
    /// and without a matching case an error (strict rules), the substream's bytes or `nil`.
    #[allow(clippy::too_many_arguments)]
    fn read_switch(
        &mut self,
        t: &'a TypeDef,
        f: &'a Field,
        r: &'a str,
        dst: &str,
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
        let (sel, sel_kind) = self.ex(t, on, r, None, index)?;
        let mut rr: &'a str = r;
        let _ = writeln!(o, "{i0}do");
        if let Some(sz) = size {
            let n = self.size_expr(t, Some(sz), r, index)?;
            let sub: &'a str = Box::leak(self.fresh("sub").into_boxed_str());
            let _ = writeln!(o, "{i0}\tlocal {sub} = S.sub({r}, {n}, {fname})");
            rr = sub;
        }
        let _ = writeln!(o, "{i0}\tlocal on = {sel}");
        let case_code = |this: &mut Self, tn: &str| -> R<String> {
            if let Some(call) = super::number_case_call(tn, this.s.endian)? {
                return Ok(format!("{}{dst} = S.{call}({rr}, {fname})\n", ind(d + 2)));
            }
            let explicit: &'a [SrcExpr] = f
                .switch_args
                .iter()
                .find(|(n, _)| this.s.type_name(n) == tn)
                .map(|(_, a)| a.as_slice())
                .unwrap_or(&[]);
            this.read_user(t, f, tn, None, rr, dst, fname, index, explicit, d + 2)
        };
        let mut arms = Vec::new();
        for (k, tn) in cases {
            let (kx, _) = self.ex(t, k, r, None, index)?;
            arms.push((kx, case_code(self, self.s.type_name(tn))?));
        }
        let fallback = match default {
            Some(tn) => case_code(self, self.s.type_name(tn))?,
            None if f.strict => format!(
                "{}S.failAt({rr}, {}, {fname}, \"valid\", {})\n",
                ind(d + 2),
                self.pos_expr(rr),
                self.shown("on", "must select one of the switch cases")
            ),
            None if size.is_some() => format!(
                "{}{dst} = S.bytes({rr}, {rr}.limit - {rr}.pos, {fname})\n",
                ind(d + 2)
            ),
            None => format!("{}{dst} = nil\n", ind(d + 2)),
        };
        let numeric = matches!(sel_kind, Kind::Int | Kind::Enum(_)) && default.is_none();
        o.push_str(&self.dispatch(&sel, &arms, &fallback, numeric, d + 1));
        if size.is_some() && f.strict {
            let _ = writeln!(o, "{i0}\tS.finishSub({rr})");
        } else if size.is_some() {
            o.push_str(&self.after_lenient_sized_case(rr, dst, &i0));
        }
        let _ = writeln!(o, "{i0}end");
        Ok(o)
    }
}
