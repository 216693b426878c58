//! Which values the streaming reader ([`super::stream()`]) keeps once they are written to the
//! sink: an analysis over every expression of the schema.
//!
//! A `seq` field (or positional instance) of a type is kept when an expression could read it
//! after it was read:
//!
//! - [`Keep::Whole`]: its name is the result of a value instance, an argument (written or
//!   context param) or an `io:` stream (`value: header`, `value: items[2]`, `io: x._io`), so
//!   the value may be shown or used as a whole: it is kept with everything read inside it.
//! - [`Keep::Value`]: its name appears in any other expression of the type (`size: len`,
//!   `if: flags.big`, `repeat-expr: count`, `switch-on`, `valid`, `repeat-until`, `pos`,
//!   an instance's `if`, `items.size` in a value instance), or a member access anywhere in
//!   the schema names it (`x.len` keeps every member called `len`, whatever its type: the
//!   analysis does not type the expressions, so it keeps by name), or `-sp-sum-of` sums it.
//!   The value is kept; inside it, each type keeps what its own analysis keeps.
//! - [`Keep::Drop`]: nothing can read it again; it is written to the sink and dropped (a
//!   list's elements one by one, as they are read).
//!
//! Names come after `_parent`/`_root` were lowered to context params (the parent's argument
//! expressions name the fields), so every reference is an expression over the type that holds
//! the field. A miss would be an error (`field ... was not kept`), never a wrong value: a
//! dropped field is absent from the frame and from the struct value.

use crate::expr::{BinOp, Expr};
use crate::ir::{FieldKind, ProcArg, Process, Repeat, Schema, Size, TypeDef, Valid};
use std::collections::{HashMap, HashSet};

/// What the streaming reader keeps of one field once it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Keep {
    /// Written and dropped.
    Drop,
    /// Kept; what is inside follows each inner type's own plan.
    Value,
    /// Kept with everything read inside it.
    Whole,
}

/// The plan of every type: one [`Keep`] per field, in field order, by the type's address in
/// the schema.
pub(crate) struct Plan {
    types: HashMap<usize, Vec<Keep>>,
}

impl Plan {
    /// The plan of `s` (see the module docs).
    pub fn new(s: &Schema) -> Plan {
        let mut attrs: HashSet<&str> = HashSet::new();
        let mut per_type = Vec::with_capacity(s.types.len());
        for t in &s.types {
            let mut names: HashMap<&str, Keep> = HashMap::new();
            for (e, whole) in type_exprs(t) {
                collect(e, whole, &mut names, &mut attrs);
            }
            for f in &t.fields {
                if let Some((list, field, _)) = &f.sum_of {
                    names.entry(list.as_str()).or_insert(Keep::Value);
                    names.entry(f.id.as_str()).or_insert(Keep::Value);
                    attrs.insert(field.as_str());
                }
            }
            per_type.push(names);
        }
        let mut types = HashMap::with_capacity(s.types.len());
        for (t, names) in s.types.iter().zip(per_type) {
            let plan = t
                .fields
                .iter()
                .map(|f| {
                    let by_attr = if attrs.contains(f.id.as_str()) {
                        Keep::Value
                    } else {
                        Keep::Drop
                    };
                    names
                        .get(f.id.as_str())
                        .copied()
                        .unwrap_or(Keep::Drop)
                        .max(by_attr)
                })
                .collect();
            types.insert(t as *const TypeDef as usize, plan);
        }
        Plan { types }
    }

    /// What to keep of field `i` of `t` (`Whole` for a type the plan does not know).
    pub fn of(&self, t: &TypeDef, i: usize) -> Keep {
        self.types
            .get(&(t as *const TypeDef as usize))
            .and_then(|p| p.get(i).copied())
            .unwrap_or(Keep::Whole)
    }
}

/// Every expression of `t`, each with whether its result is used as a whole value (value
/// instances, arguments, `io:`).
fn type_exprs(t: &TypeDef) -> Vec<(&Expr, bool)> {
    let mut out: Vec<(&Expr, bool)> = Vec::new();
    for f in &t.fields {
        if let Some(at) = &f.at {
            out.push((&at.pos.expr, false));
            if let Some(io) = &at.io_of {
                out.push((&io.expr, true));
            }
        }
        if let Some(c) = &f.cond {
            out.push((&c.expr, false));
        }
        if let Repeat::Expr(e) | Repeat::Until(e) = &f.repeat {
            out.push((&e.expr, false));
        }
        match &f.valid {
            Some(Valid::Eq(e)) | Some(Valid::Expr(e)) => out.push((&e.expr, false)),
            Some(Valid::Range(a, b)) => {
                out.extend([a, b].into_iter().flatten().map(|x| (&x.expr, false)));
            }
            Some(Valid::AnyOf(v)) => out.extend(v.iter().map(|x| (&x.expr, false))),
            Some(Valid::InEnum) | None => {}
        }
        match &f.process {
            Some(Process::Xor(ProcArg::Expr(e)))
            | Some(Process::Rol(e))
            | Some(Process::Ror(e)) => out.push((&e.expr, false)),
            Some(Process::Custom { args, .. }) => out.extend(args.iter().map(|a| (&a.expr, true))),
            _ => {}
        }
        match &f.kind {
            FieldKind::Bytes(Size::Expr(e))
            | FieldKind::Str {
                size: Some(Size::Expr(e)),
                ..
            }
            | FieldKind::User {
                size: Some(Size::Expr(e)),
                ..
            } => out.push((&e.expr, false)),
            FieldKind::Switch {
                on, size, cases, ..
            } => {
                if let Some(Size::Expr(e)) = size {
                    out.push((&e.expr, false));
                }
                out.push((&on.expr, false));
                out.extend(cases.iter().map(|(k, _)| (&k.expr, false)));
            }
            _ => {}
        }
        out.extend(f.args.iter().map(|a| (&a.expr, true)));
        for (_, args) in &f.switch_args {
            out.extend(args.iter().map(|a| (&a.expr, true)));
        }
        for (_, args) in &f.ctx_args {
            out.extend(args.iter().flatten().map(|a| (&a.expr, true)));
        }
    }
    if let Some(sw) = &t.endian_switch {
        out.push((&sw.on.expr, false));
        out.extend(sw.cases.iter().map(|(k, _)| (&k.expr, false)));
    }
    for i in &t.instances {
        out.push((&i.value.expr, true));
        if let Some(c) = &i.cond {
            out.push((&c.expr, false));
        }
    }
    if let Some(e) = &t.to_string {
        out.push((&e.expr, false));
    }
    out
}

/// Attributes and methods whose result is a number, a boolean or a string computed from the
/// value, not a part of it: the value they apply to is needed, not kept whole.
const SCALAR_ATTRS: &[&str] = &[
    "size", "length", "_sizeof", "to_i", "to_s", "is_empty", "sum", "min", "max",
];

/// Records the names `e` reads (`whole`: `e`'s result is used as a whole value) and the
/// member names it accesses.
fn collect<'s>(
    e: &'s Expr,
    whole: bool,
    names: &mut HashMap<&'s str, Keep>,
    attrs: &mut HashSet<&'s str>,
) {
    match e {
        Expr::Name(n) => {
            let k = if whole { Keep::Whole } else { Keep::Value };
            let slot = names.entry(n.as_str()).or_insert(k);
            *slot = (*slot).max(k);
        }
        Expr::Attr(base, a) => {
            attrs.insert(a.as_str());
            let inner = whole && !SCALAR_ATTRS.contains(&a.as_str());
            collect(base, inner, names, attrs);
        }
        Expr::Call(base, m, args) => {
            attrs.insert(m.as_str());
            let inner = whole && !SCALAR_ATTRS.contains(&m.as_str());
            collect(base, inner, names, attrs);
            for a in args {
                collect(a, whole, names, attrs);
            }
        }
        Expr::Index(base, i) => {
            collect(base, whole, names, attrs);
            collect(i, false, names, attrs);
        }
        Expr::Ternary(c, a, b) => {
            collect(c, false, names, attrs);
            collect(a, whole, names, attrs);
            collect(b, whole, names, attrs);
        }
        Expr::Cast(inner, _) => collect(inner, whole, names, attrs),
        Expr::List(items) => {
            for x in items {
                collect(x, whole, names, attrs);
            }
        }
        Expr::Unary(_, x) => collect(x, false, names, attrs),
        Expr::Binary(op, a, b) => {
            // `a == b` of two user types compares them whole.
            let both = matches!(op, BinOp::Eq | BinOp::Ne);
            collect(a, both, names, attrs);
            collect(b, both, names, attrs);
        }
        Expr::Int(_)
        | Expr::Float(_)
        | Expr::Str(_)
        | Expr::Bool(_)
        | Expr::Null
        | Expr::EnumRef(..)
        | Expr::SizeOf(_) => {}
    }
}
