//! Types one expression in its scope: the node and type of every part, or the first problem
//! found (a message and a hint; the caller adds the place).

use super::{param_ty, ty_name, Node, Side, TExpr, Ty};
use crate::derive::{counts_and_lengths, Derived};
use crate::expr::{BinOp, Expr, UnOp};
use crate::ir::{
    EnumId, EnumRef, Field, FieldKind, Instance, Repeat, Schema, TypeDef, TypeId, TypeRef,
};
use crate::num_type::{case_number, looks_like_number_type};
use crate::sizes::{field_bits, type_bits};
use std::cell::RefCell;
use std::collections::HashSet;

/// A problem of an expression: the message and a hint.
pub(crate) type Problem = (String, String);

type R = Result<TExpr, Problem>;

/// The names an expression sees, innermost last, and where it is evaluated.
#[derive(Clone)]
pub(crate) struct Scope {
    pub vars: Vec<(String, Ty)>,
    pub side: Side,
}

impl Scope {
    pub fn new(side: Side) -> Self {
        Self {
            vars: Vec::new(),
            side,
        }
    }

    pub fn get(&self, n: &str) -> Option<&Ty> {
        self.vars.iter().rev().find(|(k, _)| k == n).map(|(_, t)| t)
    }

    /// This scope with `name` bound to `ty` besides.
    pub fn with(&self, name: &str, ty: Ty) -> Self {
        let mut s = self.clone();
        s.vars.push((name.to_owned(), ty));
        s
    }
}

fn t(ty: Ty, node: Node) -> TExpr {
    TExpr { ty, node }
}

fn bx(e: TExpr) -> Box<TExpr> {
    Box::new(e)
}

fn bad<T>(m: String, h: &str) -> Result<T, Problem> {
    Err((m, h.to_owned()))
}

/// Types expressions of one schema type.
pub(crate) struct Typer<'s> {
    pub s: &'s Schema,
    /// Enums that keep unknown integers (`enum:` on a value instance needs one).
    pub open_enums: &'s HashSet<EnumId>,
    /// The type whose expressions are typed.
    pub cur_type: TypeId,
    /// Its value instances (a name not in scope may be one).
    pub cur_instances: &'s [Instance],
    /// The instances being typed in place, outermost first (a cycle is reported).
    pub inlining: RefCell<Vec<String>>,
    /// Typing a test spec's assert over a decoded value rather than a schema expression
    /// ([`super::type_assert`]): types and enums may be named by their written path from
    /// the schema id (`enum_1::main_obj::animal`), `.as<t>` picks a case of a switch,
    /// a switch value's member is looked up in its case types, params and conditional
    /// instances of a value are members (absent ones evaluate to null).
    pub assert_mode: bool,
}

/// The fixed encoded size in bytes of a number type or a user type (`sizeof<...>`), if it
/// has one: every field unconditional, of fixed size and count, whole bytes in total.
pub(crate) fn fixed_size_of(s: &Schema, name: &str) -> Option<usize> {
    let number = match name {
        "u1" | "s1" => Some(1),
        "u2" | "s2" => Some(2),
        "u4" | "s4" | "f4" => Some(4),
        "u8" | "s8" | "f8" => Some(8),
        _ => None,
    };
    if number.is_some() {
        return number;
    }
    let b = type_bits(s, s.type_named(name)?.id, 0)?;
    (b % 8 == 0).then_some(b / 8)
}

/// The fixed encoded size in bytes of field `fid` of type `tn` (`x._sizeof`): a number, a
/// literal `size`, or a user type of fixed size, times a literal repeat count.
pub(crate) fn fixed_field_size(s: &Schema, tn: TypeId, fid: &str) -> Option<usize> {
    let f = s.ty(tn).fields.iter().find(|f| f.id == fid)?;
    let b = field_bits(s, f, 0)?;
    (b % 8 == 0).then_some(b / 8)
}

/// The value of `e` when it is a constant condition (`true`, `not false`, ...).
fn lit_shift(b: &Expr) -> Option<i128> {
    match b {
        Expr::Int(v) => Some(*v),
        Expr::Unary(UnOp::Neg, x) => match &**x {
            Expr::Int(v) => Some(v.wrapping_neg()),
            _ => None,
        },
        _ => None,
    }
}

impl<'s> Typer<'s> {
    /// A typer for the expressions of type `t`.
    pub fn new(s: &'s Schema, open_enums: &'s HashSet<EnumId>, t: &'s TypeDef) -> Self {
        Self {
            s,
            open_enums,
            cur_type: t.id,
            cur_instances: &t.instances,
            inlining: RefCell::new(Vec::new()),
            assert_mode: false,
        }
    }

    /// The type of field `f`'s value as expressions see it (`Opt` with `if`).
    pub fn field_ty(&self, f: &Field) -> Ty {
        field_ty(self.s, f)
    }

    /// The number type of a switch whose cases are all number types.
    pub fn number_switch_ty(&self, ty: &Ty) -> Option<Ty> {
        number_switch_ty(self.s, ty)
    }

    /// Types `e` in `scope`.
    pub fn ty(&self, e: &Expr, scope: &Scope) -> R {
        match e {
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::Str(_)
            | Expr::Name(_)
            | Expr::EnumRef(..) => self.leaf(e, scope),
            Expr::Attr(inner, attr) => self.attr(inner, attr, scope),
            Expr::Index(list, index) => self.index(list, index, scope),
            Expr::List(items) => self.list(items, scope),
            Expr::Call(inner, m, args) => self.call(inner, m, args, scope),
            Expr::Cast(inner, target) => self.cast(inner, target, scope),
            Expr::SizeOf(target) => match fixed_size_of(self.s, target) {
                Some(n) => Ok(t(Ty::Int, Node::Size(n))),
                None => bad(
                    format!("`sizeof<{target}>` needs a type of one fixed size"),
                    "name a number type or a user type whose fields all have fixed sizes",
                ),
            },
            Expr::Unary(op, inner) => self.unary(*op, inner, scope),
            Expr::Ternary(c, a, b) => self.ternary(c, a, b, scope),
            Expr::Binary(op, a, b) => self.binary(*op, a, b, scope),
        }
    }

    /// A literal, a name (a field, param, `_`, `_index`, a value instance, `_sizeof`) or an
    /// enum value.
    fn leaf(&self, e: &Expr, scope: &Scope) -> R {
        Ok(match e {
            Expr::Int(v) => t(Ty::Int, Node::Int(*v)),
            Expr::Float(v) => t(Ty::Float, Node::Float(*v)),
            Expr::Bool(b) => t(Ty::Bool, Node::Bool(*b)),
            Expr::Null => {
                return bad(
                    "`null` has no type in a schema expression".into(),
                    "test for a missing value with the field's own condition instead",
                )
            }
            Expr::Str(s) => t(Ty::Str, Node::Str(s.clone())),
            Expr::Name(n)
                if scope.get(n).is_none() && self.cur_instances.iter().any(|i| &i.id == n) =>
            {
                return self.inline_instance(n, scope);
            }
            // `_io` as a value: the stream of the type being read.
            Expr::Name(n) if n == "_io" && scope.get(n).is_none() => t(Ty::Io, Node::Stream(None)),
            Expr::Name(n) if n == "_sizeof" && scope.get(n).is_none() => {
                // Kaitai Struct's `_sizeof` is static: the fixed size of the type.
                let tn = &self.s.ty(self.cur_type).name;
                match fixed_size_of(self.s, tn) {
                    Some(v) => t(Ty::Int, Node::Size(v)),
                    None => return bad(format!("unable to derive `_sizeof` of type `{tn}`: it has no fixed size"), "`_sizeof` needs a type whose fields are all unconditional with fixed sizes and counts"),
                }
            }
            Expr::Name(n) => {
                let Some(ty) = scope.get(n) else {
                    if self.assert_mode {
                        return bad(
                            format!(
                                "`{}` has no field or instance `{n}`",
                                self.s.ty(self.cur_type).name
                            ),
                            "",
                        );
                    }
                    return bad(if crate::names::is_schema_name(n) { format!("`{n}` is not a field read before this point") } else { format!("`{n}` is not a valid name (a name is lower-case letters, digits and `_`, starting with a letter or `_`)") }, "expressions may use fields that come earlier in the same type (and `_` where allowed), params, and the enclosing types through `_parent.x` / `_root.x`");
                };
                let ty = match ty {
                    Ty::Opt(inner) => (**inner).clone(),
                    t => self.number_switch_ty(t).unwrap_or_else(|| t.clone()),
                };
                t(ty, Node::Var(n.clone()))
            }
            Expr::EnumRef(en, v) => {
                let Some(def) = self.s.enum_named(en).or_else(|| self.enum_by_path(en)) else {
                    return bad(format!("unknown enum `{en}`"), "name an enum from `enums`");
                };
                let en = &def.name;
                if !def.values.iter().any(|x| &x.name == v) {
                    return bad(
                        format!("`{v}` is not a value of `{en}`"),
                        "use one of the names listed under the enum",
                    );
                }
                t(
                    Ty::Enum(def.id),
                    Node::EnumValue {
                        enum_id: def.id,
                        value: v.clone(),
                    },
                )
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `_io.pos`, `_io.size`, `_io.eof` where the expression is evaluated.
    fn io_attr(side: Side, attr: &str) -> R {
        let ty = match (side, attr) {
            (_, "pos") | (Side::Read | Side::Value, "size") => Ty::Int,
            (Side::Read | Side::Value, "eof") => Ty::Bool,
            (Side::Write, "size" | "eof") => {
                return Err((
                    format!("`_io.{attr}` is not known while writing"),
                    "use `_io.{attr}` in `if`, `size`, `repeat-until` or a positional instance's `pos`, where the writer lets the value decide".replace("{attr}", attr),
                ))
            }
            _ => {
                return Err((
                    format!("`_io` has no member `{attr}`"),
                    "`_io` has `pos`, `size` and `eof`".into(),
                ))
            }
        };
        Ok(t(ty, Node::Io(attr.to_owned())))
    }

    /// `a.b`: a member of a user-type value, `_io`, `value._io`, `_sizeof`, or a property of a
    /// number, string, bytes, list or enum.
    fn attr(&self, inner: &Expr, attr: &str, scope: &Scope) -> R {
        if attr == "_sizeof" {
            // `field._sizeof`: the static size of that field (its `size`, or its type's).
            let owner = match inner {
                Expr::Name(n) if scope.get(n).is_some() => Some((self.cur_type, n.clone())),
                Expr::Attr(obj, m) => match self.ty(obj, scope)?.ty {
                    Ty::User(TypeRef::Id(tn)) => Some((tn, m.clone())),
                    _ => None,
                },
                _ => None,
            };
            let size = owner
                .as_ref()
                .and_then(|(tn, fid)| fixed_field_size(self.s, *tn, fid));
            return match size {
                Some(v) => Ok(t(Ty::Int, Node::Size(v))),
                None => bad(format!("unable to derive the sizeof of `{inner}`: it has no fixed size"), "`x._sizeof` needs a field of fixed size (a number, a literal `size`, or a type of fixed size)"),
            };
        }
        if matches!(inner, Expr::Name(n) if n == "_io") && scope.get("_io").is_none() {
            return Self::io_attr(scope.side, attr);
        }
        if let (Expr::Attr(obj, a), "pos" | "size" | "eof") = (inner, attr) {
            if a == "_io" {
                // `value._io.pos`: the stream of a user-type value.
                let v = self.ty(obj, scope)?;
                if !matches!(v.ty, Ty::User(_) | Ty::AnyStruct) {
                    return bad(
                        format!(
                            "`._io` applies to a user-type value, not {}",
                            ty_name(self.s, &v.ty)
                        ),
                        "use `_io` for this type's own stream",
                    );
                }
                let ty = if attr == "eof" { Ty::Bool } else { Ty::Int };
                return Ok(t(ty, Node::MemberIo(bx(v), attr.to_owned())));
            }
        }
        let v = self.ty(inner, scope)?;
        if attr == "_io" && matches!(v.ty, Ty::User(_) | Ty::AnyStruct) {
            // `value._io` as a value: the stream of a user-type value.
            return Ok(t(Ty::Io, Node::Stream(Some(bx(v)))));
        }
        if let Ty::User(tn) = &v.ty {
            let tn = tn.clone();
            return self.member_of(v, &tn, attr);
        }
        if let (true, Ty::Switch(owner, fid)) = (self.assert_mode, &v.ty) {
            // A test spec reads a member of a switch value without a cast: the first case
            // type that has it.
            let case = self
                .switch_case_types(*owner, *fid)
                .into_iter()
                .find(|tn| self.s.type_of(tn).is_some_and(|td| has_member(td, attr)));
            if let Some(tn) = case {
                return self.member_of(v, &tn, attr);
            }
        }
        let ty = match (attr, &v.ty) {
            ("pos" | "size", Ty::Io) => Ty::Int,
            ("eof", Ty::Io) => Ty::Bool,
            ("to_i", Ty::Enum(_) | Ty::Float | Ty::Bool | Ty::Int | Ty::Str) => Ty::Int,
            ("to_s", Ty::Int | Ty::Str) | ("reverse", Ty::Str) => Ty::Str,
            ("first" | "last" | "min" | "max", Ty::List(_) | Ty::Bytes) => {
                let elem = match &v.ty {
                    Ty::List(e) => (**e).clone(),
                    _ => Ty::Int,
                };
                if matches!(attr, "min" | "max") && !matches!(elem, Ty::Int | Ty::Float | Ty::Str)
                {
                    return bad(
                        format!("`.{attr}` does not apply to {}", ty_name(self.s, &v.ty)),
                        "`.min` and `.max` take lists of numbers or strings, or bytes",
                    );
                }
                elem
            }
            ("size", Ty::List(_) | Ty::Bytes) | ("length", Ty::Bytes | Ty::Str) => Ty::Int,
            // Kaitai Struct's compiler refuses `.length` on a list: keep schemas it accepts.
            ("length", Ty::List(_)) => return bad(format!("`.length` does not apply to {} (Kaitai Struct counts a list with `.size`)", ty_name(self.s, &v.ty)), "use `.size` for the number of elements"),
            _ => return bad(format!("`.{attr}` is not a method or member of {}", ty_name(self.s, &v.ty)), "supported: `.to_i` on enums, `.size` on lists and bytes, `.length` on bytes and strings"),
        };
        Ok(t(
            ty,
            Node::Method {
                of: bx(v),
                name: attr.to_owned(),
                args: Vec::new(),
            },
        ))
    }

    /// `a[i]`.
    fn index(&self, list: &Expr, index: &Expr, scope: &Scope) -> R {
        let l = self.ty(list, scope)?;
        let i = self.ty(index, scope)?;
        let elem = match &l.ty {
            Ty::List(e) => (**e).clone(),
            Ty::Bytes => Ty::Int,
            _ => {
                return bad(
                    format!("`[]` does not apply to {}", ty_name(self.s, &l.ty)),
                    "index a list or a byte array",
                )
            }
        };
        if i.ty != Ty::Int {
            return bad(
                format!("the index is {}, not an integer", ty_name(self.s, &i.ty)),
                "index with an integer expression",
            );
        }
        Ok(t(elem, Node::Index(bx(l), bx(i))))
    }

    /// A list literal `[a, b, ...]`.
    fn list(&self, items: &[Expr], scope: &Scope) -> R {
        if !items.is_empty()
            && items
                .iter()
                .all(|x| matches!(x, Expr::Int(v) if (0..=255).contains(v)))
        {
            let bytes = items
                .iter()
                .map(|x| match x {
                    Expr::Int(v) => *v as u8,
                    _ => 0,
                })
                .collect();
            return Ok(t(Ty::Bytes, Node::Bytes(bytes)));
        }
        let mut parts = Vec::new();
        let mut elem: Option<Ty> = None;
        // User-type values: a list of "one of these types", whatever the mix.
        let mut users: Vec<TypeRef> = Vec::new();
        for x in items {
            let v = self.ty(x, scope)?;
            let Ty::User(u) = &v.ty else {
                parts.clear();
                break;
            };
            if !users.contains(u) {
                users.push(u.clone());
            }
            parts.push(v);
        }
        if !parts.is_empty() {
            users.sort_by(|a, b| self.s.type_name(a).cmp(self.s.type_name(b)));
            return Ok(t(Ty::List(Box::new(Ty::AnyUser(users))), Node::List(parts)));
        }
        for x in items {
            let v = self.ty(x, scope)?;
            // An integer after a float is a float (the element keeps its own type).
            let xty = match v.ty {
                Ty::Int if elem == Some(Ty::Float) => Ty::Float,
                ref t => t.clone(),
            };
            if xty == Ty::Float && elem == Some(Ty::Int) {
                return bad("a list literal mixes integers and floats; write the integers as floats (`1.0`)".into(), "give every element the same type");
            }
            match &elem {
                Some(e) if *e != xty => {
                    return bad(
                        format!(
                            "a list literal mixes {} and {}",
                            ty_name(self.s, e),
                            ty_name(self.s, &xty)
                        ),
                        "give every element the same type",
                    )
                }
                _ => elem = Some(xty.clone()),
            }
            if !matches!(
                xty,
                Ty::Str | Ty::Int | Ty::Float | Ty::Bool | Ty::Enum(_) | Ty::Io
            ) {
                return bad(
                    format!(
                        "list literals of {} are not supported",
                        ty_name(self.s, &xty)
                    ),
                    "list numbers, strings, conditions or enum values",
                );
            }
            parts.push(v);
        }
        let Some(elem) = elem else {
            return bad(
                "an empty list literal has no element type".into(),
                "give at least one element",
            );
        };
        Ok(t(Ty::List(Box::new(elem)), Node::List(parts)))
    }

    /// A method call `a.m(args)`.
    fn call(&self, inner: &Expr, m: &str, args: &[Expr], scope: &Scope) -> R {
        if m == "__or_self" && args.len() == 1 {
            let Expr::Name(pn) = inner else {
                return bad("internal: `__or_self` on a non-name".into(), "");
            };
            let Some(Ty::Opt(pty)) = scope.get(pn).cloned() else {
                return bad(
                    format!("internal: `{pn}` is not an optional context param"),
                    "",
                );
            };
            let fb = self.ty(&args[0], scope)?;
            if fb.ty != *pty || !matches!(fb.ty, Ty::Int | Ty::Float | Ty::Bool | Ty::Enum(_)) {
                return bad(format!("`_root` paths of a recursive root type must give a number, condition or enum, not {}", ty_name(self.s, &fb.ty)), "use `_root.<number field>`");
            }
            return Ok(t(fb.ty.clone(), Node::OrSelf(pn.clone(), bx(fb))));
        }
        let v = self.ty(inner, scope)?;
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.ty(a, scope)?);
        }
        let tys: Vec<&Ty> = vals.iter().map(|x| &x.ty).collect();
        let ty = match (m, &v.ty, tys.as_slice()) {
            ("substring", Ty::Str, [Ty::Int, Ty::Int]) => Ty::Str,
            ("to_i", Ty::Str, [Ty::Int]) => Ty::Int,
            ("to_s", Ty::Bytes, [Ty::Str]) => {
                if !matches!(args.first(), Some(Expr::Str(_))) {
                    return bad(
                        "`.to_s` takes the encoding as a string literal".into(),
                        "write e.g. `.to_s(\"UTF-8\")`",
                    );
                }
                Ty::Str
            }
            _ => {
                let shown: Vec<String> = tys.iter().map(|t| ty_name(self.s, t)).collect();
                return bad(format!("`.{m}({})` is not a method of {}", shown.join(", "), ty_name(self.s, &v.ty)), "supported: `.substring(from, to)` and `.to_i(radix)` on strings, `.to_s(encoding)` on bytes");
            }
        };
        Ok(t(
            ty,
            Node::Method {
                of: bx(v),
                name: m.to_owned(),
                args: vals,
            },
        ))
    }

    /// The case types of switch field `fid` of type `owner`, in the order of their variants.
    fn switch_case_types(&self, owner: TypeId, fid: usize) -> Vec<TypeRef> {
        let Some(f) = self.s.ty(owner).fields.get(fid) else {
            return Vec::new();
        };
        switch_types(f)
    }

    /// Whether `a` and `b` are the bodies of two switch fields of one type that have the same
    /// cases, so one generated enum (`crate::shape::switch_enum_owner`): `c ? a : b` over them
    /// is a value of that enum.
    fn one_switch_enum(&self, a: &Ty, b: &Ty) -> bool {
        let (Ty::Switch(ta, fa), Ty::Switch(tb, fb)) = (a, b) else {
            return false;
        };
        if ta != tb {
            return false;
        }
        let t = self.s.ty(*ta);
        let owner = |fid: usize| {
            t.fields
                .get(fid)
                .map(|g| crate::shape::switch_enum_owner(t, g).id.clone())
        };
        owner(*fa).is_some() && owner(*fa) == owner(*fb)
    }

    /// `a.as<target>`.
    fn cast(&self, inner: &Expr, target: &str, scope: &Scope) -> R {
        if let (true, Expr::List(items), "bytes") = (self.assert_mode, inner, target) {
            if items.is_empty() {
                return Ok(t(Ty::Bytes, Node::Bytes(Vec::new())));
            }
        }
        let v = match self.ty(inner, scope) {
            Ok(r) => r,
            Err(e) => {
                // Both wrong: the unknown type is named first, as Kaitai Struct does.
                let base = target.trim_end_matches("[]");
                let known = matches!(base, "bytes" | "str")
                    || looks_like_number_type(base)
                    || self.s.type_named(base).is_some()
                    || self.type_by_path(base).is_some();
                if known {
                    return Err(e);
                }
                return bad(format!("unknown type `{base}` in `.as<{target}>`"), "`.as<>` takes a type of this schema or its imports, a number type, `bytes` or `str`");
            }
        };
        if self.assert_mode {
            if let Some(r) = self.assert_cast(&v, target) {
                return Ok(r);
            }
        }
        // A list cast (`.as<u2[]>`) is accepted where each element has that type.
        let (mut elem_ty, mut elem_target) = (&v.ty, target);
        while let (Ty::List(e), Some(t)) = (elem_ty, elem_target.strip_suffix("[]")) {
            (elem_ty, elem_target) = (&**e, t);
        }
        let same = match (elem_ty, elem_target) {
            (_, t) if t.ends_with("[]") => false,
            (Ty::Bytes, "bytes") | (Ty::Str, "str") => true,
            (Ty::Int, t) => looks_like_number_type(t) && !t.starts_with('f'),
            (Ty::Float, "f4" | "f8") => true,
            (Ty::User(tn), t) => match (self.s.type_of(tn), self.s.type_named(t)) {
                (Some(a), Some(b)) => std::ptr::eq(a, b),
                _ => false,
            },
            _ => false,
        };
        if let (Ty::List(e), "bytes") = (&v.ty, target) {
            if **e == Ty::Int {
                // `[a, b].as<bytes>`: every element must be a byte value.
                return Ok(t(Ty::Bytes, Node::Cast(bx(v), target.to_owned())));
            }
        }
        if let Ty::Switch(owner, fid) = &v.ty {
            let cases = self.switch_case_types(*owner, *fid);
            if let Some(tn) = cases.iter().find(|tn| {
                let n = self.s.type_name(tn);
                n == target && !crate::num_type::case_builtin(n)
            }) {
                return Ok(t(
                    Ty::User(tn.clone()),
                    Node::Cast(bx(v), target.to_owned()),
                ));
            }
            // `.as<u4>`: the number of a number case (an error when the value holds another
            // case, as `.as<point>` is).
            let names: Vec<String> = cases
                .iter()
                .map(|r| self.s.type_name(r).to_owned())
                .collect();
            let picked = crate::num_type::cast_cases(&names, target);
            if let Some(first) = picked.first() {
                let float = crate::num_type::case_number(first).is_some_and(|c| c.2);
                let ty = if float { Ty::Float } else { Ty::Int };
                return Ok(t(ty, Node::Cast(bx(v), target.to_owned())));
            }
        }
        if !same {
            return bad(format!("`.as<{target}>` cannot make {} into `{target}`", ty_name(self.s, &v.ty)), "`.as<>` is supported where the value already has that type (a number type for integers, the same user type)");
        }
        Ok(t(v.ty.clone(), Node::Cast(bx(v), target.to_owned())))
    }

    /// A unary operator.
    fn unary(&self, op: UnOp, inner: &Expr, scope: &Scope) -> R {
        let v = self.ty(inner, scope)?;
        let ok = matches!(
            (op, &v.ty),
            (UnOp::Not, Ty::Bool) | (UnOp::Neg, Ty::Int | Ty::Float) | (UnOp::BitNot, Ty::Int)
        );
        if !ok {
            return bad(
                format!("this operator does not apply to {}", ty_name(self.s, &v.ty)),
                "`not` takes a condition; `-` and `~` take numbers",
            );
        }
        Ok(t(v.ty.clone(), Node::Unary(op, bx(v))))
    }

    /// `c ? a : b`.
    fn ternary(&self, ce: &Expr, ae: &Expr, be: &Expr, scope: &Scope) -> R {
        let c = self.ty(ce, scope)?;
        let a = self.ty(ae, scope)?;
        let b = self.ty(be, scope)?;
        if c.ty != Ty::Bool {
            return bad(
                "the condition of `? :` is not a condition".into(),
                "write a comparison before `?`",
            );
        }
        // Values of two user types: Kaitai Struct's common supertype, whose `_io` is all
        // that can be used.
        let users = |x: &Ty| matches!(x, Ty::User(_) | Ty::AnyStruct);
        if a.ty != b.ty && users(&a.ty) && users(&b.ty) {
            return Ok(t(Ty::AnyStruct, Node::Ternary(bx(c), bx(a), bx(b))));
        }
        if a.ty != b.ty && !self.one_switch_enum(&a.ty, &b.ty) {
            return bad(
                format!(
                    "the branches of `? :` differ ({} and {})",
                    ty_name(self.s, &a.ty),
                    ty_name(self.s, &b.ty)
                ),
                "make both branches the same type",
            );
        }
        Ok(t(a.ty.clone(), Node::Ternary(bx(c), bx(a), bx(b))))
    }

    /// A binary operator: arithmetic, bit operations, comparisons, `and`/`or`.
    fn binary(&self, op: BinOp, a: &Expr, b: &Expr, scope: &Scope) -> R {
        let x = self.ty(a, scope)?;
        let y = self.ty(b, scope)?;
        // An integer beside a float is a float (as Kaitai Struct's arithmetic does).
        let (aty, bty) = match (&x.ty, &y.ty) {
            (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => (Ty::Float, Ty::Float),
            (p, q) => (p.clone(), q.clone()),
        };
        let ty = match op {
            BinOp::And | BinOp::Or => {
                if aty != Ty::Bool || bty != Ty::Bool {
                    return bad(
                        format!(
                            "`and`/`or` need conditions, found {} and {}",
                            ty_name(self.s, &aty),
                            ty_name(self.s, &bty)
                        ),
                        "compare values first, e.g. `(flags & 1) != 0 and n > 0`",
                    );
                }
                Ty::Bool
            }
            _ if op.is_comparison() => {
                let ordered = !matches!(op, BinOp::Eq | BinOp::Ne);
                let ok = match (&aty, &bty) {
                    (Ty::Int, Ty::Int)
                    | (Ty::Float, Ty::Float)
                    | (Ty::Str, Ty::Str)
                    | (Ty::Bytes, Ty::Bytes) => true,
                    (Ty::Enum(p), Ty::Enum(q)) => p == q && !ordered,
                    (Ty::Bool, Ty::Bool) => !ordered,
                    _ => false,
                };
                if !ok {
                    return bad(format!("cannot compare {} with {} this way", ty_name(self.s, &aty), ty_name(self.s, &bty)), "compare an enum with a value of the same enum (`kind == frame_kind::absolute`), or use `.to_i`");
                }
                Ty::Bool
            }
            _ => self.arith(op, &aty, &bty, b)?,
        };
        Ok(t(ty, Node::Binary(op, bx(x), bx(y))))
    }

    /// The type of arithmetic or a bit operation on operands of types `aty` and `bty` (after
    /// promotion); `b` is the right operand (a constant divisor or shift is checked here).
    fn arith(&self, op: BinOp, aty: &Ty, bty: &Ty, b: &Expr) -> Result<Ty, Problem> {
        if *aty == Ty::Float
            && *bty == Ty::Float
            && matches!(
                op,
                BinOp::Mod | BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div
            )
        {
            return Ok(Ty::Float);
        }
        if op == BinOp::Add && *aty == Ty::Str && *bty == Ty::Str {
            return Ok(Ty::Str);
        }
        if *aty != Ty::Int || *bty != Ty::Int {
            return bad(
                format!(
                    "arithmetic needs integers, found {} and {}",
                    ty_name(self.s, aty),
                    ty_name(self.s, bty)
                ),
                "use `.to_i` on enum values",
            );
        }
        match (op, lit_shift(b)) {
            (BinOp::Div | BinOp::Mod, Some(0)) => bad(
                "division by the constant 0".into(),
                "divide by a non-zero number",
            ),
            (BinOp::Shl | BinOp::Shr, Some(v)) if !(0..64).contains(&v) => bad(
                "a constant shift must be 0..63".into(),
                "shift by 0 to 63 bits, e.g. `flags >> 2`",
            ),
            _ => Ok(Ty::Int),
        }
    }

    /// `value.member` where `value` is of user type `tn`: a stored field, a derived count or
    /// length, or a value instance.
    fn member_of(&self, v: TExpr, tn: &TypeRef, attr: &str) -> R {
        let Some(td) = self.s.type_of(tn) else {
            return Err((
                format!("unknown type `{}`", self.s.type_name(tn)),
                String::new(),
            ));
        };
        let tn = td.name.as_str();
        let member = |ty: Ty| {
            t(
                ty,
                Node::Member {
                    of: bx(v.clone()),
                    ty: td.id,
                    field: attr.to_owned(),
                },
            )
        };
        if let Some(f) = td.fields.iter().find(|f| f.id == attr) {
            match counts_and_lengths(td).get(attr) {
                Some(Derived::Count(_) | Derived::Bytes(_) | Derived::Stored(..)) => {
                    return Ok(member(Ty::Int))
                }
                Some(Derived::Sum(..)) => {
                    return Err((
                        format!("`{attr}` of `{tn}` is a derived sum"),
                        "use the list's values".into(),
                    ))
                }
                None => {}
            }
            if f.sum_of.is_some() {
                return Err((
                    format!("`{attr}` of `{tn}` is a derived sum"),
                    "use the list's values".into(),
                ));
            }
            let fty = self.field_ty(f);
            return Ok(match &fty {
                Ty::Int | Ty::Float | Ty::Bool | Ty::Enum(_) => member(fty.clone()),
                Ty::Opt(inner) => member((**inner).clone()),
                _ if matches!(f.kind, FieldKind::Contents(_)) => {
                    return Err((
                        format!("`{attr}` of `{tn}` is fixed contents"),
                        "compare with the bytes themselves".into(),
                    ))
                }
                _ => member(self.number_switch_ty(&fty).unwrap_or(fty)),
            });
        }
        if let Some(p) = td.params.iter().find(|p| self.assert_mode && p.id == attr) {
            return Ok(member(param_ty(&p.kind)));
        }
        if let Some(i) = td.instances.iter().find(|i| i.id == attr) {
            if i.cond.is_some() && !self.assert_mode {
                return Err((
                    format!("instance `{attr}` of `{tn}` is conditional (`if`)"),
                    "test the same condition instead".into(),
                ));
            }
            // The instance's type, from its expression in the scope of its own type; the key
            // on the inlining stack stops a cycle through other types.
            let key = format!("{tn}.{attr}");
            if self.inlining.borrow().contains(&key) || self.inlining.borrow().len() > 64 {
                return Err((
                    format!("instance `{key}` depends on itself"),
                    "compute the value from fields, not from itself".into(),
                ));
            }
            self.inlining.borrow_mut().push(key);
            let ty = self.instance_ty(td, i);
            self.inlining.borrow_mut().pop();
            return Ok(t(
                ty?,
                Node::MemberInstance {
                    of: bx(v),
                    ty: td.id,
                    instance: attr.to_owned(),
                },
            ));
        }
        Err((
            format!("`{tn}` has no field or instance `{attr}`"),
            "name a field of that type".into(),
        ))
    }

    /// The scope of a value instance or `to-string` of `t`: its params and fields (derived
    /// counts and lengths as integers; fixed contents are not members).
    pub fn value_scope(&self, t: &TypeDef) -> Scope {
        let mut scope = Scope::new(Side::Value);
        for p in &t.params {
            let ty = param_ty(&p.kind);
            let ty = if p.optional {
                Ty::Opt(Box::new(ty))
            } else {
                ty
            };
            scope.vars.push((p.id.clone(), ty));
        }
        let derived = counts_and_lengths(t);
        for f in &t.fields {
            if derived.contains_key(&f.id) {
                scope.vars.push((f.id.clone(), Ty::Int));
            } else if !matches!(f.kind, FieldKind::Contents(_)) {
                scope.vars.push((f.id.clone(), self.field_ty(f)));
            }
        }
        scope
    }

    /// The type of value instance `i` of type `td` (for member access from outside).
    fn instance_ty(&self, td: &'s TypeDef, i: &Instance) -> Result<Ty, Problem> {
        let scope = self.value_scope(td);
        let me = Typer {
            s: self.s,
            open_enums: self.open_enums,
            cur_type: td.id,
            cur_instances: &td.instances,
            inlining: RefCell::new(self.inlining.borrow().clone()),
            assert_mode: self.assert_mode,
        };
        let ty = me.ty(&i.value.expr, &scope)?.ty;
        if let Some(c) = &i.cond {
            me.ty(&c.expr, &scope)?;
        }
        Ok(match &i.enum_name {
            Some(e) => e.id().map_or(ty, Ty::Enum),
            None => ty,
        })
    }

    /// A value instance used in an expression: its own expression, in the same scope.
    fn inline_instance(&self, n: &str, scope: &Scope) -> R {
        let Some(inst) = self.cur_instances.iter().find(|i| i.id == n) else {
            return Err((format!("`{n}` is not an instance"), String::new()));
        };
        let outermost = {
            let mut stack = self.inlining.borrow_mut();
            if stack.iter().any(|x| x == n) {
                let chain: Vec<&str> = stack
                    .iter()
                    .map(String::as_str)
                    .skip_while(|x| *x != n)
                    .chain([n])
                    .collect();
                return Err((
                    format!("instance `{n}` depends on itself ({})", chain.join(" -> ")),
                    "compute the value from fields, not from itself".into(),
                ));
            }
            stack.push(n.to_owned());
            stack.len() == 1
        };
        let r = self.ty(&inst.value.expr, scope);
        self.inlining.borrow_mut().pop();
        let v = r.map_err(|(m, h)| {
            if outermost && !m.contains("depends on itself") {
                (format!("in instance `{n}` (`{}`): {m}", inst.value.src), h)
            } else {
                (m, h)
            }
        })?;
        let v = match &inst.enum_name {
            None => v,
            Some(e) => self.int_as_enum(e, v)?,
        };
        let Some(c) = &inst.cond else {
            return Ok(t(
                v.ty.clone(),
                Node::Instance {
                    name: n.to_owned(),
                    value: bx(v),
                    cond: None,
                },
            ));
        };
        // A conditional instance used by another value instance: its value when its
        // condition holds, else an error of the using instance.
        let c = self.ty(&c.expr, scope)?;
        if c.ty != Ty::Bool {
            return Err((
                format!("the `if` of instance `{n}` is not a condition"),
                "write a comparison".into(),
            ));
        }
        Ok(t(
            v.ty.clone(),
            Node::Instance {
                name: n.to_owned(),
                value: bx(v),
                cond: Some(bx(c)),
            },
        ))
    }

    /// The type a test spec names by its written path: `schema_id::outer::inner`, or the
    /// path from the top level without the schema id, or a schema id alone (its root type);
    /// the longest tail of the path that names a type wins.
    fn type_by_path(&self, path: &str) -> Option<&'s TypeDef> {
        if !self.assert_mode {
            return None;
        }
        let segs: Vec<&str> = path.split("::").collect();
        let scoped = |rest: &[&str]| {
            self.s.types.iter().find(|t| {
                !rest.is_empty()
                    && t.scope.len() == rest.len()
                    && t.scope.iter().zip(rest).all(|(a, b)| a == b)
            })
        };
        let root = |id: &str| {
            self.s
                .types
                .iter()
                .find(|t| t.scope.is_empty() && t.schema_name == id)
        };
        if let [one] = segs.as_slice() {
            if let Some(t) = root(one) {
                return Some(t);
            }
        }
        // The longest tail of the path that is a type's path from the top level (a spec may
        // name a type through the types that use it: `id::chunk::chunk_body::chunk_meta`).
        (0..segs.len()).find_map(|k| scoped(&segs[k..]))
    }

    /// The enum a test spec names by its written path (`schema_id::outer::animal`, or
    /// without the schema id): the longest tail of the path that names an enum.
    fn enum_by_path(&self, path: &str) -> Option<&'s crate::ir::EnumDef> {
        if !self.assert_mode {
            return None;
        }
        let segs: Vec<&str> = path.split("::").collect();
        let (name, scope) = segs.split_last()?;
        let find = |sc: &[&str]| {
            self.s.enums.iter().find(|e| {
                e.schema_name == *name
                    && e.scope.len() == sc.len()
                    && e.scope.iter().zip(sc).all(|(a, b)| a == b)
            })
        };
        (0..=scope.len()).find_map(|k| find(&scope[k..]))
    }

    /// `.as<t>` in a test spec: a switch value, a user-type value or one of several user
    /// types seen as one of the schema's types named by its path, or a switch value seen as
    /// bytes.
    fn assert_cast(&self, v: &TExpr, target: &str) -> Option<TExpr> {
        if !matches!(
            v.ty,
            Ty::Switch(..) | Ty::User(_) | Ty::AnyUser(_) | Ty::AnyStruct
        ) {
            return None;
        }
        let ty = if target == "bytes" {
            Ty::Bytes
        } else {
            Ty::User(TypeRef::Id(self.type_by_path(target)?.id))
        };
        // The node keeps the target as written: a value's type is checked by its last
        // segment, the schema name.
        Some(t(ty, Node::Cast(bx(v.clone()), target.to_owned())))
    }

    /// An integer seen as a value of enum `e` (`enum:` on a value instance).
    pub fn int_as_enum(&self, r: &EnumRef, v: TExpr) -> R {
        let e = self.s.enum_name(r);
        let Some(id) = r.id() else {
            return Err((
                format!("unknown enum `{e}`"),
                "name an enum from `enums`".into(),
            ));
        };
        if v.ty != Ty::Int {
            return Err((
                format!(
                    "`enum: {e}` needs an integer value, found {}",
                    ty_name(self.s, &v.ty)
                ),
                "give the instance an integer `value`".into(),
            ));
        }
        if !self.open_enums.contains(&id) {
            return Err((
                format!("`enum` on a value instance needs the open enum `{e}` (the schema sets `-sp-strict`)"),
                "compare the integer with `.to_i` of enum values instead".into(),
            ));
        }
        Ok(t(Ty::Enum(id), Node::AsEnum(bx(v), id)))
    }
}

/// Whether `td` has a field, value instance or param named `n`.
fn has_member(td: &TypeDef, n: &str) -> bool {
    td.fields.iter().any(|f| f.id == n)
        || td.instances.iter().any(|i| i.id == n)
        || td.params.iter().any(|p| p.id == n)
}

/// The case types of a switch field, one per variant in order (case types first, then the
/// default's when no case names it).
pub(crate) fn switch_types(f: &Field) -> Vec<TypeRef> {
    let FieldKind::Switch { cases, default, .. } = &f.kind else {
        return Vec::new();
    };
    let mut out: Vec<TypeRef> = Vec::new();
    for (_, tn) in cases {
        if !out.contains(tn) {
            out.push(tn.clone());
        }
    }
    if let Some(d) = default {
        if !out.contains(d) {
            out.push(d.clone());
        }
    }
    out
}

/// The type of field `f`'s value as expressions see it: `Opt` of its present type with `if`.
pub(crate) fn field_ty(s: &Schema, f: &Field) -> Ty {
    let inner = field_ty_present(s, f);
    if f.cond.is_some() {
        return Ty::Opt(Box::new(inner));
    }
    inner
}

/// The type of a field's value when it is present: a list for a repeated field; the body of
/// a switch (`Ty::Switch`) named by the type that holds the field.
fn field_ty_present(s: &Schema, f: &Field) -> Ty {
    if f.varint {
        return Ty::Int;
    }
    let base = match &f.kind {
        FieldKind::Bits {
            enum_name: Some(e), ..
        }
        | FieldKind::Int {
            enum_name: Some(e), ..
        } => e.id().map_or(Ty::Int, Ty::Enum),
        FieldKind::Bits {
            width: 1,
            offset_binary: false,
            ..
        } => Ty::Bool,
        FieldKind::Bits { .. } | FieldKind::Int { .. } => Ty::Int,
        FieldKind::Float { .. } => Ty::Float,
        FieldKind::Bytes(_) | FieldKind::Contents(_) => Ty::Bytes,
        FieldKind::Str { .. } => Ty::Str,
        FieldKind::User { ty: name, .. } => Ty::User(name.clone()),
        FieldKind::Switch { .. } => {
            let owner = s.types.iter().find_map(|t| {
                let i = t.fields.iter().position(|g| g.key_path == f.key_path)?;
                Some((t.id, i))
            });
            match owner {
                Some((t, i)) => Ty::Switch(t, i),
                // Every switch field belongs to a type of the schema.
                None => Ty::AnyStruct,
            }
        }
    };
    match f.repeat {
        Repeat::None => base,
        _ => Ty::List(Box::new(base)),
    }
}

/// The number type of a switch whose cases are all number types (`Int`, or `Float` when one
/// is a float); `None` for any other type.
pub(crate) fn number_switch_ty(s: &Schema, ty: &Ty) -> Option<Ty> {
    let Ty::Switch(owner, fid) = ty else {
        return None;
    };
    let f = s.ty(*owner).fields.get(*fid)?;
    let FieldKind::Switch { cases, default, .. } = &f.kind else {
        return None;
    };
    let mut float = false;
    for n in cases.iter().map(|(_, n)| n).chain(default.iter()) {
        float |= case_number(s.type_name(n))?.2;
    }
    Some(if float { Ty::Float } else { Ty::Int })
}
