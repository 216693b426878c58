//! The walk over an untyped [`Expr`] (a Kaitai Struct `.kst` assert, which no schema
//! types): name resolution is its [`Env`]'s, every operator [`super::ops`]'s, as in the
//! walk over typed trees ([`super::eval_tree`]).

use super::ops::{self, as_bool, as_int, R};
use super::value::{Handle, Val};
use crate::expr::{BinOp, Expr};
use statepack_runtime::io as rt;
use std::borrow::Cow;

/// Where the names of an untyped expression resolve: the environment over a value seen
/// through [`statepack_runtime::reflect::Reflect`] ([`super::ReflectEnv`]) is that value's
/// members. (Schema expressions are typed by the check stage and evaluated by
/// [`super::eval_tree`].)
pub trait Env<'a> {
    /// The backend's user-type value.
    type H: Handle + 'a;

    /// The value of a bare name (`len_body`, `_root`, `_index`). Errors: a name that has no
    /// value here, with what exists.
    fn name(&self, n: &str) -> R<Cow<'a, Val<Self::H>>>;

    /// Member `n` of a user-type value (`base` is always a [`Val::Struct`]). Errors: a
    /// member the type does not have.
    fn member(&self, base: Cow<'a, Val<Self::H>>, n: &str) -> R<Cow<'a, Val<Self::H>>>;

    /// The enum literal `path::value`. Errors: no such enum or value.
    fn enum_ref(&self, path: &str, value: &str) -> R<Val<Self::H>>;

    /// `sizeof<t>`: the fixed size of a type in bytes. Errors: a type without one.
    fn sizeof_type(&self, t: &str) -> R<i128>;

    /// The schema name a user-type value must have for `.as<ty>` to hold: by default the
    /// last `::` segment of `ty` as written (`opcode::strval` is `strval`).
    fn cast_struct_name(&self, ty: &str) -> String {
        let t = ty.strip_suffix("[]").unwrap_or(ty);
        t.rsplit("::").next().unwrap_or(t).to_owned()
    }
}

/// The value of `e` in `env`. Errors: a message saying what could not be evaluated (an
/// unknown name, an operator that does not apply, a zero divisor, an index out of range).
pub fn eval<'a, E: Env<'a>>(e: &Expr, env: &E) -> R<Cow<'a, Val<E::H>>> {
    let own = |v: Val<E::H>| -> R<Cow<'a, Val<E::H>>> { Ok(Cow::Owned(v)) };
    match e {
        Expr::Int(v) => own(Val::Int(*v)),
        Expr::Float(v) => own(Val::Float(*v)),
        Expr::Str(s) => own(Val::Str(s.clone())),
        Expr::Bool(b) => own(Val::Bool(*b)),
        Expr::Null => own(Val::Null),
        Expr::List(items) => {
            let bytes: Option<Vec<u8>> = items
                .iter()
                .map(|x| match x {
                    Expr::Int(v) => u8::try_from(*v).ok(),
                    _ => None,
                })
                .collect();
            match bytes {
                Some(b) if !b.is_empty() => own(Val::Bytes(b)),
                _ => {
                    let mut out = Vec::with_capacity(items.len());
                    for x in items {
                        out.push(eval(x, env)?.into_owned());
                    }
                    own(Val::List(out))
                }
            }
        }
        Expr::EnumRef(path, value) => own(env.enum_ref(path, value)?),
        Expr::SizeOf(t) => own(Val::Int(env.sizeof_type(t)?)),
        Expr::Name(n) => env.name(n),
        Expr::Attr(base, name) => {
            let b = eval(base, env)?;
            if matches!(b.as_ref(), Val::Struct(_)) {
                env.member(b, name)
            } else {
                own(ops::method(b.into_owned(), name, &[])?)
            }
        }
        Expr::Call(base, name, args) => {
            let b = eval(base, env)?.into_owned();
            let mut a = Vec::with_capacity(args.len());
            for x in args {
                a.push(eval(x, env)?.into_owned());
            }
            own(ops::method(b, name, &a)?)
        }
        Expr::Cast(base, ty) => {
            let v = eval(base, env)?;
            // A cast that changes nothing keeps the borrow.
            match (v.as_ref(), ty.as_str()) {
                (Val::Bytes(_), "bytes") | (Val::Str(_), "str") => Ok(v),
                _ => own(ops::cast(v.into_owned(), ty, &env.cast_struct_name(ty))?),
            }
        }
        Expr::Index(base, idx) => {
            let i = as_int(eval(idx, env)?.as_ref())?;
            let b = eval(base, env)?;
            match b {
                Cow::Borrowed(Val::List(x)) => {
                    Ok(Cow::Borrowed(rt::expr_at(x, i).map_err(|e| e.0)?))
                }
                other => own(ops::index(other.into_owned(), i)?),
            }
        }
        Expr::Unary(op, x) => own(ops::unary(*op, eval(x, env)?.as_ref())?),
        Expr::Binary(BinOp::And, l, r) => {
            let v = as_bool(eval(l, env)?.as_ref())? && as_bool(eval(r, env)?.as_ref())?;
            own(Val::Bool(v))
        }
        Expr::Binary(BinOp::Or, l, r) => {
            let v = as_bool(eval(l, env)?.as_ref())? || as_bool(eval(r, env)?.as_ref())?;
            own(Val::Bool(v))
        }
        Expr::Binary(op, l, r) => {
            let a = eval(l, env)?;
            let b = eval(r, env)?;
            own(ops::binary(*op, &a, &b)?)
        }
        Expr::Ternary(c, a, b) => {
            if as_bool(eval(c, env)?.as_ref())? {
                eval(a, env)
            } else {
                eval(b, env)
            }
        }
    }
}
