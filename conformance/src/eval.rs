//! Evaluates [`Expr`]essions over a decoded value seen through
//! [`statepack_runtime::reflect::Reflect`], and compares an assert's `actual` with its
//! `expected` the way Kaitai Struct's test translators do.
//!
//! Names resolve against the root type (`foo` is the root's member `foo`; a bare `_root` is
//! the root itself; `a._parent`, `a._root` and `a._io` are whatever type `a` answers for
//! them). Member access, indexing, `.as<type>` casts, the methods `.size`, `.length`,
//! `.to_i`, `.to_i(radix)`, `.to_s`, `.first`, `.last`, `.min`, `.max`, `.reverse`,
//! `.substring(from, to)`, arithmetic (integer `/` rounds down and `%` takes the divisor's
//! sign, as in Kaitai), comparisons, `and`/`or`/`not` and `c ? a : b` are understood.
//!
//! Comparison rules ([`check`]): when either side is a float, numbers agree within an
//! absolute [`FLOAT_TOLERANCE`] (Kaitai's Python and Java spec translators compare floats to
//! six decimal places); integers, strings, booleans and byte arrays must be identical; a byte
//! array and a list of integers compare element by element; enums compare by name (an enum
//! literal `schema::animal::cat` matches a value of enum `animal` named `cat`; a value the
//! enum does not list equals its integer, as in Kaitai); lists compare
//! element-wise with the same rules.

use std::borrow::Cow;
use std::fmt;
use std::rc::Rc;

use statepack_runtime::reflect::{EnumValue, Reflect, Value};

use statepack_codegen::expr::{BinOp, Expr, UnOp};

/// The absolute difference within which two numbers compare equal when either is a float.
pub const FLOAT_TOLERANCE: f64 = 1e-6;

/// A value during evaluation. Borrowed values live as long as the decoded root (`'a`).
#[derive(Clone)]
pub enum Ev<'a> {
    /// Nothing (`null`, a member whose `if` was false).
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// A string.
    Str(Cow<'a, str>),
    /// A byte array.
    Bytes(Cow<'a, [u8]>),
    /// An enum value read from the data.
    Enum(EnumValue),
    /// An enum literal from an expression: `[schema, ..., enum, value]` path segments.
    EnumLit(Vec<String>),
    /// A list.
    List(Vec<Ev<'a>>),
    /// A user type.
    Struct(&'a dyn Reflect),
}

impl fmt::Debug for Ev<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Ev<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ev::Null => f.write_str("null"),
            Ev::Bool(b) => write!(f, "{b}"),
            Ev::Int(v) => write!(f, "{v}"),
            Ev::Float(v) => write!(f, "{v:?}"),
            Ev::Str(s) => write!(f, "{s:?}"),
            Ev::Bytes(b) => {
                f.write_str("[")?;
                for (i, x) in b.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x:#04x}")?;
                }
                f.write_str("]")
            }
            Ev::Enum(e) => match e.name {
                Some(n) => write!(f, "{}::{n}", e.enum_name),
                None => write!(f, "{}({})", e.enum_name, e.value),
            },
            Ev::EnumLit(p) => f.write_str(&p.join("::")),
            Ev::List(items) => {
                f.write_str("[")?;
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
            Ev::Struct(s) => write!(f, "<{}>", s.schema_type()),
        }
    }
}

impl Ev<'_> {
    /// A short name of the value's kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Ev::Null => "null",
            Ev::Bool(_) => "a boolean",
            Ev::Int(_) => "an integer",
            Ev::Float(_) => "a float",
            Ev::Str(_) => "a string",
            Ev::Bytes(_) => "a byte array",
            Ev::Enum(_) | Ev::EnumLit(_) => "an enum value",
            Ev::List(_) => "a list",
            Ev::Struct(_) => "a user type",
        }
    }
}

/// Evaluation over one decoded root.
///
/// A user type computed on demand (`Value::Owned`, an instance the generated type does not
/// store) is kept alive for the rest of the process (`Box::leak`), so that what is read from
/// it can borrow from it like from any stored member, through any chain of such values.
/// A kst reaches a handful of them and the suite's inputs are a few KiB each, so the memory
/// kept is small; this is test tooling, not a library path.
pub struct Evaluator<'a> {
    root: &'a dyn Reflect,
}

type R<T> = Result<T, String>;

impl<'a> Evaluator<'a> {
    /// An evaluator whose names resolve against `root`.
    pub fn new(root: &'a dyn Reflect) -> Self {
        Self { root }
    }

    /// The value of `e`. Errors: a message naming what could not be evaluated.
    pub fn eval(&self, e: &Expr) -> R<Ev<'a>> {
        eval_in(Some(self), e)
    }

    fn lift(&self, v: Value<'a>) -> Ev<'a> {
        match v {
            Value::Null => Ev::Null,
            Value::Bool(b) => Ev::Bool(b),
            Value::Int(i) => Ev::Int(i),
            Value::Float(x) => Ev::Float(x),
            Value::Str(s) => Ev::Str(s),
            Value::Bytes(b) => Ev::Bytes(b),
            Value::Enum(e) => Ev::Enum(e),
            Value::List(items) => Ev::List(items.into_iter().map(|v| self.lift(v)).collect()),
            Value::Struct(s) => Ev::Struct(s),
            Value::Owned(rc) => {
                let kept: &'a Rc<dyn Reflect + 'a> = Box::leak(Box::new(rc));
                Ev::Struct(kept.as_ref())
            }
        }
    }

    fn member_of(&self, s: &'a dyn Reflect, name: &str) -> R<Option<Ev<'a>>> {
        Ok(s.member(name).map(|v| self.lift(v)))
    }
}

/// Evaluates an expression that needs no decoded value (an `expected` side).
/// Errors: a message naming what could not be evaluated (a name, for one).
pub fn eval_const(e: &Expr) -> R<Ev<'static>> {
    eval_in(None, e)
}

fn eval_in<'a>(cx: Option<&Evaluator<'a>>, e: &Expr) -> R<Ev<'a>> {
    Ok(match e {
        Expr::Int(v) => Ev::Int(*v),
        Expr::Float(v) => Ev::Float(*v),
        Expr::Str(s) => Ev::Str(Cow::Owned(s.clone())),
        Expr::Bool(b) => Ev::Bool(*b),
        Expr::Null => Ev::Null,
        Expr::List(items) => {
            if !items.is_empty() && items.iter().all(|x| matches!(x, Expr::Int(0..=255))) {
                Ev::Bytes(Cow::Owned(
                    items
                        .iter()
                        .map(|x| if let Expr::Int(v) = x { *v as u8 } else { 0 })
                        .collect(),
                ))
            } else {
                Ev::List(items.iter().map(|x| eval_in(cx, x)).collect::<R<_>>()?)
            }
        }
        Expr::EnumRef(path, value) => Ev::EnumLit(
            path.split("::")
                .map(str::to_owned)
                .chain([value.clone()])
                .collect(),
        ),
        Expr::SizeOf(t) => return Err(format!("`sizeof<{t}>` has no value here")),
        Expr::Name(n) => {
            let Some(cx) = cx else {
                return Err(format!(
                    "`{n}` names a member, but this side has no value to read it from"
                ));
            };
            match cx.member_of(cx.root, n)? {
                Some(v) => v,
                // At the top, `_root` is the value itself. Deeper down (`a._root`) only what
                // the type answers counts: an imported type read at the top has none.
                None if n == "_root" => Ev::Struct(cx.root),
                None => return Err(no_member(cx.root, n)),
            }
        }
        Expr::Attr(base, name) => {
            let b = eval_in(cx, base)?;
            if let (Ev::Struct(s), Some(cx)) = (&b, cx) {
                if let Some(v) = cx.member_of(*s, name)? {
                    return Ok(v);
                }
                return Err(no_member(*s, name));
            }
            method(b, name, &[])?
        }
        Expr::Call(base, name, args) => {
            let b = eval_in(cx, base)?;
            let args: Vec<Ev<'a>> = args.iter().map(|x| eval_in(cx, x)).collect::<R<_>>()?;
            method(b, name, &args)?
        }
        Expr::Cast(base, ty) => cast(eval_in(cx, base)?, ty)?,
        Expr::Index(base, idx) => {
            let b = eval_in(cx, base)?;
            let i = match eval_in(cx, idx)? {
                Ev::Int(i) => i,
                other => return Err(format!("an index must be an integer, got {}", other.kind())),
            };
            index(b, i)?
        }
        Expr::Unary(op, x) => {
            let v = eval_in(cx, x)?;
            match (op, v) {
                (UnOp::Neg, Ev::Int(i)) => {
                    Ev::Int(i.checked_neg().ok_or("integer overflow in `-`")?)
                }
                (UnOp::Neg, Ev::Float(f)) => Ev::Float(-f),
                (UnOp::Not, Ev::Bool(b)) => Ev::Bool(!b),
                (UnOp::BitNot, Ev::Int(i)) => Ev::Int(!i),
                (op, v) => return Err(format!("cannot apply {op:?} to {}", v.kind())),
            }
        }
        Expr::Binary(BinOp::And, l, r) => {
            Ev::Bool(as_bool(eval_in(cx, l)?)? && as_bool(eval_in(cx, r)?)?)
        }
        Expr::Binary(BinOp::Or, l, r) => {
            Ev::Bool(as_bool(eval_in(cx, l)?)? || as_bool(eval_in(cx, r)?)?)
        }
        Expr::Binary(op, l, r) => binary(*op, eval_in(cx, l)?, eval_in(cx, r)?)?,
        Expr::Ternary(c, a, b) => {
            if as_bool(eval_in(cx, c)?)? {
                eval_in(cx, a)?
            } else {
                eval_in(cx, b)?
            }
        }
    })
}

fn no_member(s: &dyn Reflect, name: &str) -> String {
    format!(
        "type {} has no member `{name}` (it has: {})",
        s.schema_type(),
        s.member_names().join(", ")
    )
}

fn as_bool(v: Ev<'_>) -> R<bool> {
    match v {
        Ev::Bool(b) => Ok(b),
        other => Err(format!("expected a boolean, got {}", other.kind())),
    }
}

fn method<'a>(b: Ev<'a>, name: &str, args: &[Ev<'a>]) -> R<Ev<'a>> {
    let no_args = |v: Ev<'a>| -> R<Ev<'a>> {
        if args.is_empty() {
            Ok(v)
        } else {
            Err(format!("`.{name}` takes no arguments"))
        }
    };
    match (name, b) {
        ("size", Ev::Bytes(x)) => no_args(Ev::Int(x.len() as i128)),
        ("size", Ev::List(x)) => no_args(Ev::Int(x.len() as i128)),
        ("length", Ev::Str(s)) => no_args(Ev::Int(s.chars().count() as i128)),
        ("reverse", Ev::Str(s)) => no_args(Ev::Str(Cow::Owned(s.chars().rev().collect()))),
        ("substring", Ev::Str(s)) => match args {
            [Ev::Int(from), Ev::Int(to)] => {
                let chars: Vec<char> = s.chars().collect();
                let (from, to) = (*from as usize, (*to as usize).min(chars.len()));
                if from > to {
                    return Err(format!("substring({from}, {to}) is out of range"));
                }
                Ok(Ev::Str(Cow::Owned(chars[from..to].iter().collect())))
            }
            _ => Err("`.substring` takes two integers".to_owned()),
        },
        ("to_i", Ev::Float(f)) => no_args(Ev::Int(f.trunc() as i128)),
        ("to_i", Ev::Int(i)) => no_args(Ev::Int(i)),
        ("to_i", Ev::Bool(b)) => no_args(Ev::Int(b as i128)),
        ("to_i", Ev::Enum(e)) => no_args(Ev::Int(e.value)),
        ("to_i", Ev::Str(s)) => {
            let radix = match args {
                [] => 10,
                [Ev::Int(r)] if (2..=36).contains(r) => *r as u32,
                _ => return Err("`.to_i` takes one radix from 2 to 36".to_owned()),
            };
            i128::from_str_radix(&s, radix)
                .map(Ev::Int)
                .map_err(|e| format!("{s:?}.to_i({radix}): {e}"))
        }
        ("to_s", Ev::Int(i)) => no_args(Ev::Str(Cow::Owned(i.to_string()))),
        ("to_s", Ev::Str(s)) => no_args(Ev::Str(s)),
        ("to_s", Ev::Bytes(b)) => match args {
            [Ev::Str(enc)]
                if enc.eq_ignore_ascii_case("UTF-8") || enc.eq_ignore_ascii_case("ASCII") =>
            {
                String::from_utf8(b.into_owned())
                    .map(|s| Ev::Str(Cow::Owned(s)))
                    .map_err(|e| format!("bytes are not {enc}: {e}"))
            }
            _ => Err(
                "`.to_s` on bytes is evaluated here only with \"UTF-8\" or \"ASCII\"".to_owned(),
            ),
        },
        ("first" | "last" | "min" | "max", Ev::Bytes(b)) => {
            let items: Vec<Ev<'a>> = b.iter().map(|x| Ev::Int(*x as i128)).collect();
            method(Ev::List(items), name, args)
        }
        ("first", Ev::List(x)) => no_args(x.into_iter().next().ok_or("`.first` of an empty list")?),
        ("last", Ev::List(x)) => no_args(
            x.into_iter()
                .next_back()
                .ok_or("`.last` of an empty list")?,
        ),
        ("min" | "max", Ev::List(x)) => {
            let mut best: Option<Ev<'a>> = None;
            for v in x {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let less = as_bool(binary(BinOp::Lt, v.clone(), b.clone())?)?;
                        if less == (name == "min") {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            no_args(best.ok_or_else(|| format!("`.{name}` of an empty list"))?)
        }
        (_, b) => Err(format!("{} has no method or member `{name}`", b.kind())),
    }
}

fn cast<'a>(v: Ev<'a>, ty: &str) -> R<Ev<'a>> {
    let last = ty.rsplit("::").next().unwrap_or(ty);
    match (ty, v) {
        ("bytes", Ev::Bytes(b)) => Ok(Ev::Bytes(b)),
        ("bytes", Ev::List(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for x in items {
                match x {
                    Ev::Int(i @ 0..=255) => out.push(i as u8),
                    other => return Err(format!("cannot cast {other} to bytes")),
                }
            }
            Ok(Ev::Bytes(Cow::Owned(out)))
        }
        ("f4" | "f8", Ev::Int(i)) => Ok(Ev::Float(i as f64)),
        ("f4", Ev::Float(f)) => Ok(Ev::Float(f64::from(f as f32))),
        ("str", Ev::Str(s)) => Ok(Ev::Str(s)),
        (_, Ev::Struct(s)) => {
            if s.schema_type() == last {
                Ok(Ev::Struct(s))
            } else {
                Err(format!(
                    "cast to {ty}, but the value is a {}",
                    s.schema_type()
                ))
            }
        }
        (t, v @ (Ev::Int(_) | Ev::Float(_)))
            if t.starts_with(['u', 's', 'f', 'b'])
                && t[1..].chars().all(|c| c.is_ascii_digit()) =>
        {
            Ok(v)
        }
        (_, Ev::Null) => Ok(Ev::Null),
        (t, v) => Err(format!("cannot cast {} to {t}", v.kind())),
    }
}

fn index<'a>(b: Ev<'a>, i: i128) -> R<Ev<'a>> {
    let len = match &b {
        Ev::List(x) => x.len(),
        Ev::Bytes(x) => x.len(),
        other => return Err(format!("cannot index {}", other.kind())),
    };
    if i < 0 || i as usize >= len {
        return Err(format!("index {i} is out of range (length {len})"));
    }
    Ok(match b {
        Ev::List(x) => x.into_iter().nth(i as usize).unwrap_or(Ev::Null),
        Ev::Bytes(x) => Ev::Int(x[i as usize] as i128),
        _ => Ev::Null,
    })
}

fn floor_div(a: i128, b: i128) -> R<i128> {
    if b == 0 {
        return Err("division by zero".to_owned());
    }
    let q = a.checked_div(b).ok_or("integer overflow in `/`")?;
    Ok(if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    })
}

fn binary<'a>(op: BinOp, l: Ev<'a>, r: Ev<'a>) -> R<Ev<'a>> {
    use BinOp::*;
    let ovf = || format!("integer overflow in {op:?}");
    Ok(match (op, l, r) {
        (Eq, l, r) => Ev::Bool(equal(&l, &r, 0.0)?),
        (Ne, l, r) => Ev::Bool(!equal(&l, &r, 0.0)?),
        (Lt | Le | Gt | Ge, l, r) => {
            let ord = order(&l, &r)?;
            Ev::Bool(match op {
                Lt => ord.is_lt(),
                Le => ord.is_le(),
                Gt => ord.is_gt(),
                _ => ord.is_ge(),
            })
        }
        (Add, Ev::Str(a), Ev::Str(b)) => Ev::Str(Cow::Owned(format!("{a}{b}"))),
        (Add, Ev::Int(a), Ev::Int(b)) => Ev::Int(a.checked_add(b).ok_or_else(ovf)?),
        (Sub, Ev::Int(a), Ev::Int(b)) => Ev::Int(a.checked_sub(b).ok_or_else(ovf)?),
        (Mul, Ev::Int(a), Ev::Int(b)) => Ev::Int(a.checked_mul(b).ok_or_else(ovf)?),
        (Div, Ev::Int(a), Ev::Int(b)) => Ev::Int(floor_div(a, b)?),
        (Mod, Ev::Int(a), Ev::Int(b)) => Ev::Int(a - b * floor_div(a, b)?),
        (Shl, Ev::Int(a), Ev::Int(b)) if (0..128).contains(&b) => {
            Ev::Int(a.checked_shl(b as u32).ok_or_else(ovf)?)
        }
        (Shr, Ev::Int(a), Ev::Int(b)) if (0..128).contains(&b) => Ev::Int(a >> b),
        (BitAnd, Ev::Int(a), Ev::Int(b)) => Ev::Int(a & b),
        (BitOr, Ev::Int(a), Ev::Int(b)) => Ev::Int(a | b),
        (BitXor, Ev::Int(a), Ev::Int(b)) => Ev::Int(a ^ b),
        (Add | Sub | Mul | Div | Mod, l, r) => match (num(&l), num(&r)) {
            (Some(a), Some(b)) => Ev::Float(match op {
                Add => a + b,
                Sub => a - b,
                Mul => a * b,
                Div => a / b,
                _ => a % b,
            }),
            _ => {
                return Err(format!(
                    "cannot apply {op:?} to {} and {}",
                    l.kind(),
                    r.kind()
                ))
            }
        },
        (op, l, r) => {
            return Err(format!(
                "cannot apply {op:?} to {} and {}",
                l.kind(),
                r.kind()
            ))
        }
    })
}

fn num(v: &Ev<'_>) -> Option<f64> {
    match v {
        Ev::Int(i) => Some(*i as f64),
        Ev::Float(f) => Some(*f),
        _ => None,
    }
}

fn order(l: &Ev<'_>, r: &Ev<'_>) -> R<std::cmp::Ordering> {
    match (l, r) {
        (Ev::Int(a), Ev::Int(b)) => Ok(a.cmp(b)),
        (Ev::Str(a), Ev::Str(b)) => Ok(a.cmp(b)),
        (Ev::Bytes(a), Ev::Bytes(b)) => Ok(a.cmp(b)),
        _ => match (num(l), num(r)) {
            (Some(a), Some(b)) => a.partial_cmp(&b).ok_or_else(|| "NaN compared".to_owned()),
            _ => Err(format!("cannot order {} and {}", l.kind(), r.kind())),
        },
    }
}

/// Whether two values are equal; floats within `tol` (absolute). Errors: values that Kaitai
/// does not compare (a user type, an enum with an integer).
fn equal(l: &Ev<'_>, r: &Ev<'_>, tol: f64) -> R<bool> {
    Ok(match (l, r) {
        (Ev::Null, Ev::Null) => true,
        (Ev::Null, _) | (_, Ev::Null) => false,
        (Ev::Int(a), Ev::Int(b)) => a == b,
        (Ev::Float(_), Ev::Int(_) | Ev::Float(_)) | (Ev::Int(_), Ev::Float(_)) => {
            let (a, b) = (num(l).unwrap_or(f64::NAN), num(r).unwrap_or(f64::NAN));
            a == b || (a - b).abs() <= tol
        }
        (Ev::Bool(a), Ev::Bool(b)) => a == b,
        (Ev::Str(a), Ev::Str(b)) => a == b,
        (Ev::Bytes(a), Ev::Bytes(b)) => a == b,
        (Ev::Bytes(a), Ev::List(b)) | (Ev::List(b), Ev::Bytes(a)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| matches!(y, Ev::Int(v) if *v == *x as i128))
        }
        (Ev::List(a), Ev::List(b)) => {
            if a.len() != b.len() {
                return Ok(false);
            }
            for (x, y) in a.iter().zip(b) {
                if !equal(x, y, tol)? {
                    return Ok(false);
                }
            }
            true
        }
        (Ev::Enum(a), Ev::Enum(b)) => a.enum_name == b.enum_name && a.value == b.value,
        // A value the enum does not list stays a plain integer in Kaitai's readers.
        (Ev::Enum(a @ EnumValue { name: None, .. }), Ev::Int(i))
        | (Ev::Int(i), Ev::Enum(a @ EnumValue { name: None, .. })) => a.value == *i,
        (Ev::Enum(a), Ev::EnumLit(p)) | (Ev::EnumLit(p), Ev::Enum(a)) => enum_matches(a, p),
        (Ev::EnumLit(a), Ev::EnumLit(b)) => a == b,
        (l, r) => return Err(format!("cannot compare {} with {}", l.kind(), r.kind())),
    })
}

/// An enum literal `[.., enum, value]` names this value: same value name, and the literal's
/// path ends with the enum's name (which may itself be qualified, `main_obj::animal`).
fn enum_matches(v: &EnumValue, path: &[String]) -> bool {
    let Some((value, scope)) = path.split_last() else {
        return false;
    };
    let en: Vec<&str> = v.enum_name.split("::").collect();
    v.name == Some(value.as_str())
        && scope.len() >= en.len()
        && scope[scope.len() - en.len()..]
            .iter()
            .zip(&en)
            .all(|(a, b)| a == b)
}

/// Checks an assert: `Ok(())` when `actual` equals `expected` under the rules in the module
/// docs, else a message showing both values.
pub fn check(actual: &Ev<'_>, expected: &Ev<'_>) -> Result<(), String> {
    match equal(actual, expected, FLOAT_TOLERANCE) {
        Ok(true) => Ok(()),
        Ok(false) => Err(format!("got {actual}, expected {expected}")),
        Err(e) => Err(format!("{e} (got {actual}, expected {expected})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use statepack_codegen::expr::parse;
    use statepack_runtime::reflect::ToValue;

    /// A hand-written reflected type standing in for generated code:
    /// `{ id: u1, name: str, blob: bytes, pet: enum animal, ratio: f4, kids: kid[], extra: if false }`.
    #[derive(Debug)]
    struct Root {
        id: u8,
        name: String,
        blob: Vec<u8>,
        pet: u8,
        ratio: f32,
        kids: Vec<Kid>,
    }
    #[derive(Debug)]
    struct Kid {
        n: i16,
    }
    impl Reflect for Kid {
        fn schema_type(&self) -> &'static str {
            "kid"
        }
        fn member(&self, name: &str) -> Option<Value<'_>> {
            match name {
                "n" => Some(self.n.to_value()),
                // A computed member: a user type made on demand.
                "twin" => Some(Value::Owned(Rc::new(Kid { n: self.n * 2 }))),
                _ => None,
            }
        }
        fn member_names(&self) -> &'static [&'static str] {
            &["n", "twin"]
        }
    }
    impl Reflect for Root {
        fn schema_type(&self) -> &'static str {
            "root_t"
        }
        fn member(&self, name: &str) -> Option<Value<'_>> {
            Some(match name {
                "id" => self.id.to_value(),
                "name" => self.name.to_value(),
                "blob" => self.blob.to_value(),
                "pet" => Value::Enum(EnumValue {
                    enum_name: "animal",
                    name: match self.pet {
                        4 => Some("cat"),
                        7 => Some("chicken"),
                        _ => None,
                    },
                    value: self.pet as i128,
                }),
                "ratio" => self.ratio.to_value(),
                "kids" => Value::list_of(&self.kids),
                "extra" => Value::Null,
                _ => return None,
            })
        }
        fn member_names(&self) -> &'static [&'static str] {
            &["id", "name", "blob", "pet", "ratio", "kids", "extra"]
        }
    }

    fn sample() -> Root {
        Root {
            id: 0x42,
            name: "foo|bar".into(),
            blob: vec![0x50, 0x41, 0x43, 0x4b],
            pet: 7,
            ratio: 1.2345,
            kids: vec![Kid { n: -3 }, Kid { n: 5 }, Kid { n: 9 }],
        }
    }

    /// Evaluates `actual` over the sample and checks it against `expected`.
    fn assert_kst(actual: &str, expected: &str) -> Result<(), String> {
        let root = sample();
        let ev = Evaluator::new(&root);
        let a = ev.eval(&parse(actual).map_err(|e| e.to_string())?)?;
        let x = eval_const(&parse(expected).map_err(|e| e.to_string())?)?;
        check(&a, &x)
    }

    #[test]
    fn members_indexing_and_methods() {
        assert_kst("id", "0x42").unwrap();
        assert_kst("id", "66").unwrap();
        assert_kst("name", "\"foo|bar\"").unwrap();
        assert_kst("name.length", "7").unwrap();
        assert_kst("name.reverse", "'rab|oof'").unwrap();
        assert_kst("name.substring(1, 3)", "'oo'").unwrap();
        assert_kst("blob", "[0x50, 0x41, 0x43, 0x4b]").unwrap();
        assert_kst("blob.size", "4").unwrap();
        assert_kst("blob[1]", "0x41").unwrap();
        assert_kst("blob.first", "0x50").unwrap();
        assert_kst("blob.last", "0x4b").unwrap();
        assert_kst("blob.min", "0x41").unwrap();
        assert_kst("blob.max", "0x50").unwrap();
        assert_kst("kids.size", "3").unwrap();
        assert_kst("kids[1].n", "5").unwrap();
        assert_kst("kids.last.n", "9").unwrap();
        assert_kst("kids[0].twin.twin.n", "-12").unwrap();
        assert_kst("kids[2].as<root_t::kid>.n", "9").unwrap();
        assert_kst("_root.kids[0].n", "-3").unwrap();
        assert!(assert_kst("kids[0]._root", "null")
            .unwrap_err()
            .contains("no member `_root`"));
        assert_kst("id.to_s", "'66'").unwrap();
        assert_kst("pet.to_i", "7").unwrap();
        assert_kst("extra", "null").unwrap();
    }

    #[test]
    fn enums_compare_by_name() {
        assert_kst("pet", "root_t::animal::chicken").unwrap();
        assert_kst("pet", "animal::chicken").unwrap();
        assert!(assert_kst("pet", "root_t::animal::cat").is_err());
        assert!(assert_kst("pet", "root_t::bird::chicken").is_err());
        assert!(
            assert_kst("pet", "7").is_err(),
            "a listed enum value never equals a bare integer"
        );
        let unlisted = Ev::Enum(EnumValue {
            enum_name: "animal",
            name: None,
            value: 111,
        });
        check(&unlisted, &Ev::Int(111)).unwrap();
        assert!(check(&unlisted, &Ev::Int(112)).is_err());
        assert!(check(&unlisted, &Ev::EnumLit(vec!["animal".into(), "dog".into()])).is_err());
        let nested = EnumValue {
            enum_name: "main_obj::animal",
            name: Some("cat"),
            value: 4,
        };
        let lit = |s: &str| s.split("::").map(str::to_owned).collect::<Vec<_>>();
        assert!(enum_matches(&nested, &lit("enum_1::main_obj::animal::cat")));
        assert!(!enum_matches(&nested, &lit("enum_1::animal::cat")));
        assert!(!enum_matches(&nested, &lit("cat")));
    }

    #[test]
    fn floats_within_tolerance_ints_exact() {
        assert_kst("ratio", "1.2345").unwrap();
        assert_kst("ratio", "1.2345003").unwrap();
        assert!(assert_kst("ratio", "1.2346").is_err());
        assert_kst("ratio.to_i", "1").unwrap();
        assert!(assert_kst("id", "67").is_err());
        assert!(assert_kst("blob", "[0x50, 0x41, 0x43]").is_err());
        assert!(assert_kst("name", "'foo|baR'").is_err());
        assert!(assert_kst("extra", "0").is_err());
    }

    #[test]
    fn arithmetic_follows_kaitai() {
        assert_kst("-52947 / 13", "-4073").unwrap();
        assert_kst("52947 / 13", "4072").unwrap();
        assert_kst("-7 % 3", "2").unwrap();
        assert_kst("7 % -3", "-2").unwrap();
        assert_kst("1 + 4 + 2 * 2", "9").unwrap();
        assert_kst("(1 << 4) | 0b11", "19").unwrap();
        assert_kst("id == 0x42 and not (id > 0x42)", "true").unwrap();
        assert_kst("name + '!'", "'foo|bar!'").unwrap();
        assert_kst("id < 3 ? 'small' : 'big'", "'big'").unwrap();
        assert_kst("blob < [0x51]", "true").unwrap();
        assert_kst("1 / 2.0", "0.5").unwrap();
        assert!(assert_kst("1 / 0", "0").is_err());
    }

    #[test]
    fn byte_arrays_lists_and_casts() {
        assert_kst("[0 + 1, 2, 3]", "[1, 2, 3]").unwrap();
        assert_kst("[0x10, 0x20].as<bytes>", "[0x10, 0x20]").unwrap();
        assert_kst("blob.size - 4", "0").unwrap();
        assert_kst("[]", "[].as<bytes>").unwrap();
        assert_kst("kids[0].n.as<u1>", "-3").unwrap();
        assert_kst("0.5.as<f4>", "0.5").unwrap();
        assert!(
            assert_kst("kids[0].as<root_t::other>.n", "-3").is_err(),
            "a cast checks the type"
        );
    }

    #[test]
    fn unknown_names_say_what_exists() {
        let err = assert_kst("kids[0].nope", "1").unwrap_err();
        assert!(
            err.contains("type kid has no member `nope`") && err.contains("n, twin"),
            "{err}"
        );
        let err = assert_kst("kids[3].n", "1").unwrap_err();
        assert!(err.contains("index 3 is out of range (length 3)"), "{err}");
        assert!(eval_const(&parse("foo").unwrap()).is_err());
    }
}
