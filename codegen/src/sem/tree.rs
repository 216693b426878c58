//! The evaluator of the typed expression tree: a walk over [`TExpr`] (what the check stage,
//! `crate::typed`, made of an expression in its scope) that leaves what a name means to its
//! [`TreeEnv`] and every operator, method and cast to [`super::ops`].
//!
//! The tree has already decided what the text left open: a name is a field or param
//! ([`Node::Var`]) or a value instance of the same type ([`Node::Instance`]), `a.b` is a
//! member, an instance or a method, `_sizeof` is a size known from the schema
//! ([`Node::Size`]), `_io.pos` is the stream's. Where the tree says a value is a float, an
//! integer computed for it (a branch of `? :`, a param) becomes a float, as in the compiled
//! Rust.

use super::ops::{self, as_bool, as_int, R};
use super::value::{Handle, Val};
use crate::expr::BinOp;
use crate::ir::EnumId;
use crate::typed::{Node, TExpr, Ty};
use statepack_runtime::io as rt;
use std::borrow::Cow;

/// Where the names of a typed tree resolve: what a backend supplies to [`eval`].
pub trait TreeEnv<'a> {
    /// The backend's user-type value.
    type H: Handle + 'a;

    /// A field, param, `_` or `_index` in scope ([`Node::Var`]). Errors: a name that has no
    /// value here (a field whose `if` was false is `Null`, not an error).
    fn var(&self, n: &str) -> R<Cow<'a, Val<Self::H>>>;

    /// Value instance `n` of the type the expression belongs to ([`Node::Instance`]),
    /// computed once and kept; `None` when the environment keeps no instances, and the
    /// walker evaluates the tree the check stage inlined instead.
    fn instance(&self, _n: &str) -> Option<R<Cow<'a, Val<Self::H>>>> {
        None
    }

    /// `_io.pos`, `_io.size` or `_io.eof` of the stream being read ([`Node::Io`]).
    fn io(&self, attr: &str) -> R<Val<Self::H>>;

    /// `value._io.pos` (`size`, `eof`) of a user-type value ([`Node::MemberIo`]).
    fn member_io(&self, of: &Val<Self::H>, attr: &str) -> R<Val<Self::H>>;

    /// Member `n` (a field, a value instance, a context param) of a user-type value. Errors:
    /// a member the value does not have.
    fn member(&self, base: Cow<'a, Val<Self::H>>, n: &str) -> R<Cow<'a, Val<Self::H>>>;

    /// The value `value` of enum `e` ([`Node::EnumValue`]; `value` is the string of the
    /// tree's node, so an environment whose trees live as long as it may know a literal by
    /// its address). Errors: no such value.
    fn enum_value(&self, e: EnumId, value: &str) -> R<Val<Self::H>>;

    /// Integer `x` seen as a value of enum `e` (`enum:` on a value instance).
    fn as_enum(&self, e: EnumId, x: i128) -> R<Val<Self::H>>;

    /// The name of enum `e` in messages.
    fn enum_label(&self, e: EnumId) -> String;

    /// The value of optional context param `p` ([`Node::OrSelf`]), or `None` when it is
    /// absent (the walker then evaluates the fallback).
    fn context_param(&self, p: &str) -> R<Option<Cow<'a, Val<Self::H>>>>;

    /// The schema name a user-type value must have for `.as<ty>` to hold.
    fn cast_struct_name(&self, ty: &str) -> String {
        let t = ty.strip_suffix("[]").unwrap_or(ty);
        t.rsplit("::").next().unwrap_or(t).to_owned()
    }
}

/// The value of typed tree `e` in `env`. Errors: a message saying what could not be
/// evaluated (a name without a value, a zero divisor, an index out of range, a conditional
/// field or instance that is absent where it is used).
pub fn eval<'a, E: TreeEnv<'a>>(e: &TExpr, env: &E) -> R<Cow<'a, Val<E::H>>> {
    let v = node(e, env)?;
    // Where the tree says float, an integer becomes one (the compiled Rust converts it).
    match (&e.ty, v.as_ref()) {
        (Ty::Float, Val::Int(i)) => Ok(Cow::Owned(Val::Float(*i as f64))),
        _ => Ok(v),
    }
}

fn own<'a, H: Clone>(v: Val<H>) -> R<Cow<'a, Val<H>>> {
    Ok(Cow::Owned(v))
}

fn node<'a, E: TreeEnv<'a>>(e: &TExpr, env: &E) -> R<Cow<'a, Val<E::H>>> {
    match &e.node {
        Node::Int(v) => own(Val::Int(*v)),
        Node::Float(v) => own(Val::Float(*v)),
        Node::Bool(b) => own(Val::Bool(*b)),
        Node::Str(s) => own(Val::Str(s.clone())),
        Node::Bytes(b) => own(Val::Bytes(b.clone())),
        Node::Size(n) => own(Val::Int(*n as i128)),
        Node::Var(n) => env.var(n),
        Node::Instance { name, value, cond } => match env.instance(name) {
            Some(v) => v,
            None => {
                if let Some(c) = cond {
                    if !as_bool(eval(c, env)?.as_ref())? {
                        return Err(format!("instance `{name}` is absent (its `if` is false)"));
                    }
                }
                eval(value, env)
            }
        },
        Node::EnumValue { enum_id, value } => own(env.enum_value(*enum_id, value)?),
        Node::Io(attr) => own(env.io(attr)?),
        Node::MemberIo(of, attr) => {
            let v = eval(of, env)?;
            own(env.member_io(v.as_ref(), attr)?)
        }
        Node::Stream(None) => own(Val::Io {
            pos: as_int(&env.io("pos")?)?,
            size: as_int(&env.io("size")?)?,
        }),
        Node::Stream(Some(of)) => {
            let v = eval(of, env)?;
            own(Val::Io {
                pos: as_int(&env.member_io(v.as_ref(), "pos")?)?,
                size: as_int(&env.member_io(v.as_ref(), "size")?)?,
            })
        }
        Node::Member { of, field: n, .. }
        | Node::MemberInstance {
            of, instance: n, ..
        } => {
            let b = eval(of, env)?;
            if matches!(b.as_ref(), Val::Struct(_)) {
                env.member(b, n)
            } else {
                Err(format!("{} has no member `{n}`", b.kind()))
            }
        }
        Node::Method { of, name, args } => {
            let b = eval(of, env)?.into_owned();
            let mut a = Vec::with_capacity(args.len());
            for x in args {
                a.push(eval(x, env)?.into_owned());
            }
            own(ops::method(b, name, &a)?)
        }
        Node::Index(list, idx) => {
            let i = as_int(eval(idx, env)?.as_ref())?;
            match eval(list, env)? {
                Cow::Borrowed(Val::List(x)) => {
                    Ok(Cow::Borrowed(rt::expr_at(x, i).map_err(|e| e.0)?))
                }
                other => own(ops::index(other.into_owned(), i)?),
            }
        }
        Node::List(items) => {
            let mut out = Vec::with_capacity(items.len());
            for x in items {
                out.push(eval(x, env)?.into_owned());
            }
            own(Val::List(out))
        }
        Node::Cast(inner, ty) => {
            let v = eval(inner, env)?;
            // A cast that changes nothing keeps the borrow.
            match (v.as_ref(), ty.as_str()) {
                (Val::Bytes(_), "bytes") | (Val::Str(_), "str") => Ok(v),
                _ => own(ops::cast(v.into_owned(), ty, &env.cast_struct_name(ty))?),
            }
        }
        Node::Unary(op, x) => own(ops::unary(*op, eval(x, env)?.as_ref())?),
        Node::Binary(BinOp::And, l, r) => {
            let v = as_bool(eval(l, env)?.as_ref())? && as_bool(eval(r, env)?.as_ref())?;
            own(Val::Bool(v))
        }
        Node::Binary(BinOp::Or, l, r) => {
            let v = as_bool(eval(l, env)?.as_ref())? || as_bool(eval(r, env)?.as_ref())?;
            own(Val::Bool(v))
        }
        Node::Binary(op, l, r) => {
            let a = eval(l, env)?;
            let b = eval(r, env)?;
            own(ops::binary(*op, &a, &b)?)
        }
        Node::Ternary(c, a, b) => {
            if as_bool(eval(c, env)?.as_ref())? {
                eval(a, env)
            } else {
                eval(b, env)
            }
        }
        Node::OrSelf(p, fallback) => match env.context_param(p)? {
            Some(v) => Ok(v),
            None => eval(fallback, env),
        },
        Node::AsEnum(inner, en) => {
            let v = eval(inner, env)?;
            match v.as_ref() {
                Val::Int(x) => own(env.as_enum(*en, *x)?),
                Val::Enum(x) => own(env.as_enum(*en, x.value)?),
                // An absent instance stays absent.
                Val::Null => Ok(v),
                other => Err(format!(
                    "cannot see {} as a `{}` value",
                    other.kind(),
                    env.enum_label(*en)
                )),
            }
        }
    }
}
