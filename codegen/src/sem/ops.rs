//! The operators, methods and casts of the expression language, each written once.
//!
//! The table in `docs/schema-language.md` ("One semantics") states these rules; the
//! generated Rust computes the same values with the helpers of `statepack_runtime::io`
//! (`div_floor`, `expr_mod_floor`, `expr_shift`, `expr_fmod_floor`, `expr_substring`, ...),
//! which this module calls too wherever one exists.

use super::value::{Handle, Val};
use crate::expr::{BinOp, UnOp};
use statepack_runtime::io as rt;
use std::cmp::Ordering;

/// A result of evaluation: the value, or a message saying what could not be evaluated.
pub type R<T> = Result<T, String>;

/// The value as a boolean. Errors: any other kind.
pub fn as_bool<H>(v: &Val<H>) -> R<bool> {
    match v {
        Val::Bool(b) => Ok(*b),
        other => Err(format!("expected a boolean, got {}", other.kind())),
    }
}

/// The value as an integer (an enum value as its stored integer). Errors: any other kind.
pub fn as_int<H>(v: &Val<H>) -> R<i128> {
    match v {
        Val::Int(i) => Ok(*i),
        Val::Enum(e) => Ok(e.value),
        other => Err(format!("expected an integer, got {}", other.kind())),
    }
}

fn num<H>(v: &Val<H>) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Float(f) => Some(*f),
        _ => None,
    }
}

/// `l == r`: integers, strings, byte arrays and booleans exactly; an integer and a float by
/// value (the integer converted to `f64`; NaN equals nothing); enums by their stored integer,
/// also against a plain integer; `null` equals only `null`; lists element by element; user
/// types by [`Handle::same`]. Errors: kinds that are never compared (a string with an
/// integer, a user type with a list).
pub fn equal<H: Handle>(l: &Val<H>, r: &Val<H>) -> R<bool> {
    Ok(match (l, r) {
        (Val::Int(a), Val::Int(b)) => a == b,
        (Val::Enum(a), Val::Enum(b)) => a.value == b.value,
        (Val::Enum(a), Val::Int(b)) | (Val::Int(b), Val::Enum(a)) => a.value == *b,
        (Val::Float(_), Val::Int(_) | Val::Float(_)) | (Val::Int(_), Val::Float(_)) => {
            num(l) == num(r)
        }
        (Val::Bool(a), Val::Bool(b)) => a == b,
        (Val::Str(a), Val::Str(b)) => a == b,
        (Val::Bytes(a), Val::Bytes(b)) => a == b,
        (Val::Bytes(a), Val::List(b)) | (Val::List(b), Val::Bytes(a)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|(x, y)| matches!(y, Val::Int(v) if *v == i128::from(*x)))
        }
        (Val::Null, Val::Null) => true,
        (Val::Null, _) | (_, Val::Null) => false,
        (Val::List(a), Val::List(b)) => {
            if a.len() != b.len() {
                return Ok(false);
            }
            for (x, y) in a.iter().zip(b) {
                if !equal(x, y)? {
                    return Ok(false);
                }
            }
            true
        }
        (Val::Struct(a), Val::Struct(b)) => a.same(b),
        (l, r) => return Err(format!("cannot compare {} with {}", l.kind(), r.kind())),
    })
}

/// The order of `l` and `r` (`<`, `<=`, `>`, `>=`): integers and enums exactly, strings and
/// byte arrays lexicographically (by UTF-8 bytes, by byte values), an integer and a float as
/// `f64`. `Ok(None)` when a NaN takes part: every ordering comparison with NaN is false, as
/// in IEEE 754 and the generated Rust. Errors: kinds that are never ordered.
pub fn order<H>(l: &Val<H>, r: &Val<H>) -> R<Option<Ordering>> {
    match (l, r) {
        (Val::Int(a), Val::Int(b)) => Ok(Some(a.cmp(b))),
        (Val::Enum(a), Val::Enum(b)) => Ok(Some(a.value.cmp(&b.value))),
        (Val::Str(a), Val::Str(b)) => Ok(Some(a.cmp(b))),
        (Val::Bytes(a), Val::Bytes(b)) => Ok(Some(a.cmp(b))),
        (Val::Bool(a), Val::Bool(b)) => Ok(Some(a.cmp(b))),
        _ => match (num(l), num(r)) {
            (Some(a), Some(b)) => Ok(a.partial_cmp(&b)),
            _ => Err(format!("cannot order {} and {}", l.kind(), r.kind())),
        },
    }
}

/// `op x`: `-` wraps on integers (the negation of the smallest 128-bit integer is itself) and
/// negates floats, `not` on booleans, `~` on integers. Errors: any other operand.
pub fn unary<H>(op: UnOp, v: &Val<H>) -> R<Val<H>> {
    Ok(match (op, v) {
        (UnOp::Neg, Val::Int(i)) => Val::Int(i.wrapping_neg()),
        (UnOp::Neg, Val::Float(f)) => Val::Float(-f),
        (UnOp::Not, Val::Bool(b)) => Val::Bool(!b),
        (UnOp::BitNot, Val::Int(i)) => Val::Int(!i),
        (op, v) => return Err(format!("cannot apply {op:?} to {}", v.kind())),
    })
}

/// `l op r` for every binary operator but the short-circuiting `and` and `or` (the walker
/// evaluates those). Integers are 128-bit: `+`, `-`, `*` wrap; `/` rounds down and `%` takes
/// the divisor's sign (Kaitai Struct's rules), a zero divisor is an error; `<<` and `>>`
/// take 0 to 63 (`>>` is arithmetic); `&`, `|`, `^` on integers and on booleans. A float on
/// either side makes `+ - * / %` float arithmetic (IEEE 754; `%` is floored:
/// `a - b * floor(a / b)`). `+` joins two strings or two byte arrays. Errors: a zero integer
/// divisor, a shift amount outside 0..=63, operands the operator does not take.
pub fn binary<H: Handle>(op: BinOp, l: &Val<H>, r: &Val<H>) -> R<Val<H>> {
    use BinOp::*;
    let cmp =
        |want: fn(Ordering) -> bool| -> R<Val<H>> { Ok(Val::Bool(order(l, r)?.is_some_and(want))) };
    Ok(match (op, l, r) {
        (Eq, l, r) => Val::Bool(equal(l, r)?),
        (Ne, l, r) => Val::Bool(!equal(l, r)?),
        (Lt, ..) => return cmp(Ordering::is_lt),
        (Le, ..) => return cmp(Ordering::is_le),
        (Gt, ..) => return cmp(Ordering::is_gt),
        (Ge, ..) => return cmp(Ordering::is_ge),
        (Add, Val::Str(a), Val::Str(b)) => Val::Str(format!("{a}{b}")),
        (Add, Val::Bytes(a), Val::Bytes(b)) => Val::Bytes([a.as_slice(), b.as_slice()].concat()),
        (Add, Val::Int(a), Val::Int(b)) => Val::Int(a.wrapping_add(*b)),
        (Sub, Val::Int(a), Val::Int(b)) => Val::Int(a.wrapping_sub(*b)),
        (Mul, Val::Int(a), Val::Int(b)) => Val::Int(a.wrapping_mul(*b)),
        (Div, Val::Int(a), Val::Int(b)) => Val::Int(rt::expr_div_floor(*a, *b).map_err(|e| e.0)?),
        (Mod, Val::Int(a), Val::Int(b)) => Val::Int(rt::expr_mod_floor(*a, *b).map_err(|e| e.0)?),
        (Shl | Shr, Val::Int(a), Val::Int(b)) => {
            Val::Int(rt::expr_shift(*a, *b, op == Shl).map_err(|e| e.0)?)
        }
        (BitAnd, Val::Int(a), Val::Int(b)) => Val::Int(a & b),
        (BitOr, Val::Int(a), Val::Int(b)) => Val::Int(a | b),
        (BitXor, Val::Int(a), Val::Int(b)) => Val::Int(a ^ b),
        (BitAnd, Val::Bool(a), Val::Bool(b)) => Val::Bool(a & b),
        (BitOr, Val::Bool(a), Val::Bool(b)) => Val::Bool(a | b),
        (BitXor, Val::Bool(a), Val::Bool(b)) => Val::Bool(a ^ b),
        (Add | Sub | Mul | Div | Mod, l, r) => match (num(l), num(r)) {
            (Some(a), Some(b)) => Val::Float(match op {
                Add => a + b,
                Sub => a - b,
                Mul => a * b,
                Div => a / b,
                _ => rt::expr_fmod_floor(a, b),
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

/// The encoding name the runtime knows for one written in a schema (`utf-8` is `UTF-8`).
pub fn canonical_encoding(e: &str) -> String {
    let up = e.to_ascii_uppercase();
    match up.as_str() {
        "UTF8" | "UTF-8" => "UTF-8".to_owned(),
        "ASCII" | "US-ASCII" => "ASCII".to_owned(),
        "UTF-16LE" | "UTF16LE" => "UTF-16LE".to_owned(),
        "UTF-16BE" | "UTF16BE" => "UTF-16BE".to_owned(),
        "ISO-8859-1" | "ISO8859-1" | "LATIN1" => "ISO-8859-1".to_owned(),
        "IBM437" | "CP437" => "IBM437".to_owned(),
        _ => e.to_owned(),
    }
}

/// `b.name(args)` (or `b.name` with no arguments) for every built-in method: `size` (byte
/// arrays, lists), `length` (strings in characters, byte arrays), `reverse` (strings),
/// `substring(from, to)` (characters `from..to`), `to_i` (floats truncate toward zero, NaN
/// is 0 and values outside the 128-bit range saturate, as Rust's `as`; booleans 0/1; enums
/// their integer; strings in a radix 2..=36, default 10), `to_s` (integers in decimal,
/// byte arrays in a named encoding), `first`, `last`, `min`, `max` (byte arrays as lists of
/// integers; `min`/`max` keep the first extreme element, NaN never wins). Errors: a method the
/// value does not have, wrong arguments, an empty list, a substring out of range, text that
/// is no integer, bytes that are not valid in their encoding.
pub fn method<H: Handle>(b: Val<H>, name: &str, args: &[Val<H>]) -> R<Val<H>> {
    let no_args = |v: Val<H>| -> R<Val<H>> {
        if args.is_empty() {
            Ok(v)
        } else {
            Err(format!("`.{name}` takes no arguments"))
        }
    };
    let len = |n: usize| Val::Int(n as i128);
    match (name, b) {
        ("size", Val::Bytes(x)) => no_args(len(x.len())),
        ("size", Val::List(x)) => no_args(len(x.len())),
        ("pos", Val::Io { pos, .. }) => no_args(Val::Int(pos)),
        ("size", Val::Io { size, .. }) => no_args(Val::Int(size)),
        ("eof", Val::Io { pos, size }) => no_args(Val::Bool(pos >= size)),
        ("length", Val::Bytes(x)) => no_args(len(x.len())),
        ("length", Val::Str(s)) => no_args(len(s.chars().count())),
        ("reverse", Val::Str(s)) => no_args(Val::Str(s.chars().rev().collect())),
        ("substring", Val::Str(s)) => match args {
            [Val::Int(from), Val::Int(to)] => rt::expr_substring(&s, *from, *to)
                .map(Val::Str)
                .map_err(|e| e.0),
            _ => Err("`.substring` takes two integers".to_owned()),
        },
        ("to_i", Val::Float(f)) => no_args(Val::Int(f as i128)),
        ("to_i", Val::Int(i)) => no_args(Val::Int(i)),
        ("to_i", Val::Bool(b)) => no_args(Val::Int(i128::from(b))),
        ("to_i", Val::Enum(e)) => no_args(Val::Int(e.value)),
        ("to_i", Val::Str(s)) => {
            let radix = match args {
                [] => 10,
                [Val::Int(r)] => *r,
                _ => return Err("`.to_i` takes one radix".to_owned()),
            };
            rt::expr_str_to_i(&s, radix).map(Val::Int).map_err(|e| e.0)
        }
        ("to_s", Val::Int(i)) => no_args(Val::Str(i.to_string())),
        ("to_s", Val::Str(s)) => no_args(Val::Str(s)),
        ("to_s", Val::Bytes(b)) => match args {
            [Val::Str(enc)] => {
                let enc = super::intern(&canonical_encoding(enc));
                rt::expr_bytes_to_s(&b, enc).map(Val::Str).map_err(|e| e.0)
            }
            _ => Err("`.to_s` on bytes takes an encoding".to_owned()),
        },
        ("first" | "last" | "min" | "max", Val::Bytes(b)) => method(
            Val::List(b.iter().map(|x| Val::Int(i128::from(*x))).collect()),
            name,
            args,
        ),
        ("first", Val::List(x)) => {
            rt::expr_at(&x, 0).map_err(|e| e.0)?;
            no_args(x.into_iter().next().unwrap_or(Val::Null))
        }
        ("last", Val::List(x)) => {
            rt::expr_last(&x).map_err(|e| e.0)?;
            no_args(x.into_iter().next_back().unwrap_or(Val::Null))
        }
        ("min" | "max", Val::List(x)) => {
            let want = if name == "min" {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let mut best: Option<Val<H>> = None;
            for v in x {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        if order(&v, &b)? == Some(want) {
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

/// `v.as<ty>`: `bytes` of a byte array, or of a list of integers 0..=255; `str` of a
/// string; a number type of a number, boolean or enum (the value unchanged; an integer cast
/// to `f4`/`f8` becomes a float); `t[]` of a list whose every element casts to `t`; a user
/// type of a user type whose schema name is `struct_name` (what the environment says `ty`
/// names); anything of `null`. Errors: every other cast.
pub fn cast<H: Handle>(v: Val<H>, ty: &str, struct_name: &str) -> R<Val<H>> {
    let v = match (ty.strip_suffix("[]"), v) {
        (Some(elem), Val::List(items)) => {
            let elem_name = struct_name.strip_suffix("[]").unwrap_or(struct_name);
            return items
                .into_iter()
                .map(|x| cast(x, elem, elem_name))
                .collect::<R<Vec<_>>>()
                .map(Val::List);
        }
        (_, v) => v,
    };
    let last = struct_name;
    match (ty, v) {
        ("bytes", v @ Val::Bytes(_)) | ("str", v @ Val::Str(_)) => Ok(v),
        ("bytes", Val::List(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for x in items {
                match x {
                    Val::Int(i) if (0..=255).contains(&i) => out.push(i as u8),
                    other => return Err(format!("cannot cast {other} to bytes")),
                }
            }
            Ok(Val::Bytes(out))
        }
        ("f4" | "f8", Val::Int(i)) => Ok(Val::Float(i as f64)),
        (_, Val::Null) => Ok(Val::Null),
        (_, Val::Struct(s)) => {
            if s.type_name() == last {
                Ok(Val::Struct(s))
            } else {
                Err(format!(
                    "cast to {ty}, but the value is a {}",
                    s.type_name()
                ))
            }
        }
        (t, v @ (Val::Int(_) | Val::Float(_) | Val::Bool(_) | Val::Enum(_)))
            if number_type(t).is_some() || t.starts_with('b') =>
        {
            Ok(v)
        }
        (t, v) => Err(format!("cannot cast {} to {t}", v.kind())),
    }
}

/// The element `i` of a list, or the byte `i` of a byte array as an integer. Errors: any
/// other value, an index outside the list (the runtime's `expr_at` message, as the
/// generated code gives it).
pub fn index<H>(b: Val<H>, i: i128) -> R<Val<H>> {
    match b {
        Val::List(x) => {
            rt::expr_at(&x, i).map_err(|e| e.0)?;
            Ok(x.into_iter().nth(i as usize).unwrap_or(Val::Null))
        }
        Val::Bytes(x) => Ok(Val::Int(i128::from(*rt::expr_at(&x, i).map_err(|e| e.0)?))),
        other => Err(format!("cannot index {}", other.kind())),
    }
}

/// Width in bytes, signedness, floatness and byte order of a number type name (`u2`,
/// `s4le`, `f8be`); `None` for anything else.
pub fn number_type(t: &str) -> Option<(u8, bool, bool, Option<crate::ir::Endian>)> {
    use crate::ir::Endian;
    let (base, e) = if let Some(b) = t.strip_suffix("le") {
        (b, Some(Endian::Le))
    } else if let Some(b) = t.strip_suffix("be") {
        (b, Some(Endian::Be))
    } else {
        (t, None)
    };
    let (k, w) = base.split_at_checked(1)?;
    let bytes: u8 = match w {
        "1" => 1,
        "2" => 2,
        "4" => 4,
        "8" => 8,
        _ => return None,
    };
    match k {
        "u" => Some((bytes, false, false, e)),
        "s" => Some((bytes, true, false, e)),
        "f" if bytes >= 4 => Some((bytes, true, true, e)),
        _ => None,
    }
}
