//! Evaluates the schema's expressions ([`crate::expr::Expr`]) over the values read so far,
//! with the semantics of the generated code: integers are `i128` (arithmetic wraps),
//! `/` rounds down and `%` takes the divisor's sign (Kaitai Struct's rules), `and`/`or`
//! short-circuit, enums compare by their stored integer.

use super::{intern, DynValue};
use crate::expr::{BinOp, Expr, UnOp};
use crate::ir::{FieldKind, Repeat, Schema, Size, TypeDef};
use statepack_runtime::reflect::EnumValue;
use std::borrow::Cow;
use std::cell::{Cell, OnceCell};

type R<T> = Result<T, String>;

/// `_io` of the type being read: position and size in its stream, and whether it is at the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct IoState {
    pub pos: i128,
    pub size: i128,
    pub eof: bool,
}

/// The members of the type being read: `seq` fields read so far, params, value instances
/// (computed when first used).
pub(crate) struct Frame<'s> {
    pub ty: &'s TypeDef,
    pub fields: Vec<(&'static str, DynValue)>,
    pub params: Vec<(&'static str, Option<DynValue>)>,
    pub inst: Vec<OnceCell<R<DynValue>>>,
    pub busy: Vec<Cell<bool>>,
    /// The bytes each field in `fields` was read from (as `DynStruct::spans`).
    pub spans: Vec<Option<(u64, u64)>>,
    /// `_sizeof`: the bytes the type took, known once its `seq` is read.
    pub sizeof: Cell<Option<i128>>,
}

impl<'s> Frame<'s> {
    /// The frame of one value of type `ty` about to be read, with its params (name, value;
    /// `None` for a param not given) and no fields read yet.
    pub fn new(ty: &'s TypeDef, params: Vec<(&'static str, Option<DynValue>)>) -> Self {
        Frame {
            ty,
            fields: Vec::with_capacity(ty.fields.len()),
            spans: Vec::with_capacity(ty.fields.len()),
            params,
            inst: ty.instances.iter().map(|_| OnceCell::new()).collect(),
            busy: ty.instances.iter().map(|_| Cell::new(false)).collect(),
            sizeof: Cell::new(None),
        }
    }
}

/// Where names resolve: the type being read, `_` and `_index` of a repetition, `_io`.
pub(crate) struct Scope<'a> {
    pub schema: &'a Schema,
    pub frame: &'a Frame<'a>,
    pub elem: Option<&'a DynValue>,
    pub index: Option<i128>,
    pub io: Option<IoState>,
}

impl<'a> Scope<'a> {
    /// A scope over `frame` with no `_`, `_index` or `_io`.
    pub fn plain(schema: &'a Schema, frame: &'a Frame<'a>, io: Option<IoState>) -> Self {
        Scope {
            schema,
            frame,
            elem: None,
            index: None,
            io,
        }
    }

    fn name(&self, n: &str) -> R<Cow<'a, DynValue>> {
        match n {
            "_" => {
                return self
                    .elem
                    .map(Cow::Borrowed)
                    .ok_or_else(|| "`_` is used outside `repeat-until` and `valid`".to_owned())
            }
            "_index" => {
                return self
                    .index
                    .map(|i| Cow::Owned(DynValue::Int(i)))
                    .ok_or_else(|| "`_index` is used outside a repeated field".to_owned())
            }
            "_sizeof" => {
                return self
                    .frame
                    .sizeof
                    .get()
                    .map(|n| Cow::Owned(DynValue::Int(n)))
                    .ok_or_else(|| "`_sizeof` is used before the type is read".to_owned())
            }
            _ => {}
        }
        let frame: &'a Frame<'a> = self.frame;
        if let Some((_, v)) = frame.fields.iter().find(|(k, _)| *k == n) {
            return Ok(Cow::Borrowed(v));
        }
        if let Some((_, v)) = frame.params.iter().find(|(k, _)| *k == n) {
            return match v {
                Some(v) => Ok(Cow::Borrowed(v)),
                None => Err(format!(
                    "`{n}` has no value here (the type is read where its parent has none)"
                )),
            };
        }
        if let Some(i) = frame.ty.instances.iter().position(|x| x.id == n) {
            if let Some(done) = frame.inst[i].get() {
                return done.as_ref().map(Cow::Borrowed).map_err(Clone::clone);
            }
            if frame.busy[i].replace(true) {
                return Err(format!("instance `{n}` depends on itself"));
            }
            let v = instance_value(self.schema, frame, i, self.io);
            frame.busy[i].set(false);
            let _ = frame.inst[i].set(v);
            return match frame.inst[i].get() {
                Some(r) => r.as_ref().map(Cow::Borrowed).map_err(Clone::clone),
                None => Err(format!("instance `{n}` has no value")),
            };
        }
        if frame.ty.fields.iter().any(|f| f.id == n) {
            return Err(format!("field `{n}` is used before it is read"));
        }
        Err(format!(
            "`{n}` names no field, param or instance of `{}`",
            frame.ty.schema_name
        ))
    }
}

/// The value of instance `i` of the frame's type (`Null` when its `if` is false).
pub(crate) fn instance_value(
    schema: &Schema,
    frame: &Frame<'_>,
    i: usize,
    io: Option<IoState>,
) -> R<DynValue> {
    let inst = &frame.ty.instances[i];
    let sc = Scope::plain(schema, frame, io);
    if let Some(c) = &inst.cond {
        if !as_bool(eval(&c.expr, &sc)?.as_ref())? {
            return Ok(DynValue::Null);
        }
    }
    let v = eval(&inst.value.expr, &sc)?.into_owned();
    match (&inst.enum_name, v) {
        (Some(e), DynValue::Int(x)) => enum_value(schema, e, x),
        (Some(e), DynValue::Enum(x)) => enum_value(schema, e, x.value),
        (_, v) => Ok(v),
    }
}

/// The value `x` of enum `name` (its unique name), with the value's name when the enum lists
/// it.
pub(crate) fn enum_value(schema: &Schema, name: &str, x: i128) -> R<DynValue> {
    let e = schema
        .enum_def(name)
        .ok_or_else(|| format!("no enum `{name}`"))?;
    Ok(DynValue::Enum(EnumValue {
        enum_name: intern(&e.schema_name),
        name: e
            .values
            .iter()
            .find(|v| v.value == x)
            .map(|v| intern(&v.name)),
        value: x,
    }))
}

/// Evaluates an expression that must be a boolean.
pub(crate) fn eval_bool(e: &Expr, sc: &Scope<'_>) -> R<bool> {
    as_bool(eval(e, sc)?.as_ref())
}

/// Evaluates an expression that must be an integer.
pub(crate) fn eval_int(e: &Expr, sc: &Scope<'_>) -> R<i128> {
    match eval(e, sc)?.as_ref() {
        DynValue::Int(i) => Ok(*i),
        DynValue::Enum(v) => Ok(v.value),
        other => Err(format!("expected an integer, got {}", other.kind())),
    }
}

fn as_bool(v: &DynValue) -> R<bool> {
    match v {
        DynValue::Bool(b) => Ok(*b),
        other => Err(format!("expected a boolean, got {}", other.kind())),
    }
}

/// The value of `e` in `sc`.
pub(crate) fn eval<'a>(e: &Expr, sc: &Scope<'a>) -> R<Cow<'a, DynValue>> {
    let own = |v: DynValue| Ok(Cow::Owned(v));
    match e {
        Expr::Int(v) => own(DynValue::Int(*v)),
        Expr::Float(v) => own(DynValue::Float(*v)),
        Expr::Str(s) => own(DynValue::Str(s.clone())),
        Expr::Bool(b) => own(DynValue::Bool(*b)),
        Expr::Null => own(DynValue::Null),
        Expr::List(items) => {
            if !items.is_empty() && items.iter().all(|x| matches!(x, Expr::Int(0..=255))) {
                own(DynValue::Bytes(
                    items
                        .iter()
                        .map(|x| if let Expr::Int(v) = x { *v as u8 } else { 0 })
                        .collect(),
                ))
            } else {
                let mut out = Vec::with_capacity(items.len());
                for x in items {
                    out.push(eval(x, sc)?.into_owned());
                }
                own(DynValue::List(out))
            }
        }
        Expr::EnumRef(en, value) => {
            let def = sc
                .schema
                .enum_def(en)
                .ok_or_else(|| format!("no enum `{en}`"))?;
            let v = def
                .values
                .iter()
                .find(|v| v.name == *value)
                .ok_or_else(|| format!("enum `{}` has no value `{value}`", def.schema_name))?;
            own(DynValue::Enum(EnumValue {
                enum_name: intern(&def.schema_name),
                name: Some(intern(&v.name)),
                value: v.value,
            }))
        }
        Expr::SizeOf(t) => own(DynValue::Int(
            fixed_size(sc.schema, t, 0)
                .ok_or_else(|| format!("`sizeof<{t}>`: the type has no fixed size"))?
                as i128,
        )),
        Expr::Name(n) => sc.name(n),
        // `field._sizeof`: the bytes the field took (its size, for a sized field).
        Expr::Attr(base, name)
            if name == "_sizeof" && !matches!(&**base, Expr::Name(n) if n == "_io") =>
        {
            let span = match &**base {
                Expr::Name(n) => sc
                    .frame
                    .fields
                    .iter()
                    .position(|(k, _)| *k == n)
                    .and_then(|i| sc.frame.spans.get(i).copied().flatten()),
                Expr::Attr(parent, n) => match eval(parent, sc)?.as_ref() {
                    DynValue::Struct(s) => s
                        .members
                        .iter()
                        .position(|(k, _)| *k == n)
                        .and_then(|i| s.spans.get(i).copied().flatten()),
                    _ => None,
                },
                _ => None,
            };
            match span {
                Some((a, b)) => own(DynValue::Int(i128::from(b.saturating_sub(a)))),
                None => {
                    let b = eval(base, sc)?;
                    attr(b, name)
                }
            }
        }
        Expr::Attr(base, name) => {
            if let Expr::Name(b) = &**base {
                if b == "_io" {
                    let io = sc.io.ok_or_else(|| "`_io` has no value here".to_owned())?;
                    return match name.as_str() {
                        "pos" => own(DynValue::Int(io.pos)),
                        "size" => own(DynValue::Int(io.size)),
                        "eof" => own(DynValue::Bool(io.eof)),
                        other => Err(format!("`_io.{other}` is not interpreted")),
                    };
                }
            }
            let b = eval(base, sc)?;
            attr(b, name)
        }
        // A `_root` path of a recursive root type: the value given by the reading field,
        // or at the top level (where none is given) the root's own.
        Expr::Call(base, name, args) if name == "__or_self" && args.len() == 1 => {
            if let Expr::Name(pn) = &**base {
                if let Some((_, v)) = sc.frame.params.iter().find(|(k, _)| *k == pn) {
                    return match v {
                        Some(v) => Ok(Cow::Borrowed(v)),
                        None => eval(&args[0], sc),
                    };
                }
            }
            Err("`__or_self` on something that is not a context param".to_owned())
        }
        Expr::Call(base, name, args) => {
            let b = eval(base, sc)?.into_owned();
            let mut a = Vec::with_capacity(args.len());
            for x in args {
                a.push(eval(x, sc)?.into_owned());
            }
            own(call(b, name, &a)?)
        }
        Expr::Cast(base, ty) => {
            let v = eval(base, sc)?;
            cast(v, ty)
        }
        Expr::Index(base, idx) => {
            let i = eval_int(idx, sc)?;
            let b = eval(base, sc)?;
            index(b, i)
        }
        Expr::Unary(op, x) => {
            let v = eval(x, sc)?;
            own(match (op, v.as_ref()) {
                (UnOp::Neg, DynValue::Int(i)) => DynValue::Int(i.wrapping_neg()),
                (UnOp::Neg, DynValue::Float(f)) => DynValue::Float(-f),
                (UnOp::Not, DynValue::Bool(b)) => DynValue::Bool(!b),
                (UnOp::BitNot, DynValue::Int(i)) => DynValue::Int(!i),
                (op, v) => return Err(format!("cannot apply {op:?} to {}", v.kind())),
            })
        }
        Expr::Binary(BinOp::And, l, r) => {
            let v = eval_bool(l, sc)? && eval_bool(r, sc)?;
            own(DynValue::Bool(v))
        }
        Expr::Binary(BinOp::Or, l, r) => {
            let v = eval_bool(l, sc)? || eval_bool(r, sc)?;
            own(DynValue::Bool(v))
        }
        Expr::Binary(op, l, r) => {
            let a = eval(l, sc)?;
            let b = eval(r, sc)?;
            own(binary(*op, &a, &b)?)
        }
        Expr::Ternary(c, a, b) => {
            if eval_bool(c, sc)? {
                eval(a, sc)
            } else {
                eval(b, sc)
            }
        }
    }
}

fn attr<'a>(b: Cow<'a, DynValue>, name: &str) -> R<Cow<'a, DynValue>> {
    if let DynValue::Struct(s) = b.as_ref() {
        match name {
            "_sizeof" => return Ok(Cow::Owned(DynValue::Int(i128::from(s.size)))),
            "_io" => {
                let io =
                    s.io.ok_or_else(|| "`_io` of this value is not known".to_owned())?;
                return Ok(Cow::Owned(DynValue::Struct(std::sync::Arc::new(
                    super::DynStruct::io_view(io),
                ))));
            }
            _ => {}
        }
    }
    match b {
        Cow::Borrowed(DynValue::Struct(s)) => {
            if let Some(v) = s.get(name) {
                return Ok(Cow::Borrowed(v));
            }
            if let Some((_, v)) = s.hidden.iter().find(|(k, _)| *k == name) {
                return v
                    .as_ref()
                    .map(Cow::Borrowed)
                    .ok_or_else(|| format!("`{name}` has no value"));
            }
            Err(format!("type {} has no member `{name}`", s.type_name))
        }
        Cow::Owned(DynValue::Struct(s)) => {
            if let Some(v) = s.get(name) {
                return Ok(Cow::Owned(v.clone()));
            }
            Err(format!("type {} has no member `{name}`", s.type_name))
        }
        other => Ok(Cow::Owned(call(other.into_owned(), name, &[])?)),
    }
}

fn call(b: DynValue, name: &str, args: &[DynValue]) -> R<DynValue> {
    let no_args = |v: DynValue| -> R<DynValue> {
        if args.is_empty() {
            Ok(v)
        } else {
            Err(format!("`.{name}` takes no arguments"))
        }
    };
    match (name, b) {
        ("size", DynValue::Bytes(x)) => no_args(DynValue::Int(x.len() as i128)),
        ("size", DynValue::List(x)) => no_args(DynValue::Int(x.len() as i128)),
        ("length", DynValue::Bytes(x)) => no_args(DynValue::Int(x.len() as i128)),
        ("length", DynValue::Str(s)) => no_args(DynValue::Int(s.chars().count() as i128)),
        ("reverse", DynValue::Str(s)) => no_args(DynValue::Str(s.chars().rev().collect())),
        ("substring", DynValue::Str(s)) => match args {
            [DynValue::Int(from), DynValue::Int(to)] => {
                statepack_runtime::io::expr_substring(&s, *from, *to)
                    .map(DynValue::Str)
                    .map_err(|e| e.0)
            }
            _ => Err("`.substring` takes two integers".to_owned()),
        },
        ("to_i", DynValue::Float(f)) => no_args(DynValue::Int(f.trunc() as i128)),
        ("to_i", DynValue::Int(i)) => no_args(DynValue::Int(i)),
        ("to_i", DynValue::Bool(b)) => no_args(DynValue::Int(b as i128)),
        ("to_i", DynValue::Enum(e)) => no_args(DynValue::Int(e.value)),
        ("to_i", DynValue::Str(s)) => {
            let radix = match args {
                [] => 10,
                [DynValue::Int(r)] => *r,
                _ => return Err("`.to_i` takes one radix".to_owned()),
            };
            statepack_runtime::io::expr_str_to_i(&s, radix)
                .map(DynValue::Int)
                .map_err(|e| e.0)
        }
        ("to_s", DynValue::Int(i)) => no_args(DynValue::Str(i.to_string())),
        ("to_s", DynValue::Str(s)) => no_args(DynValue::Str(s)),
        ("to_s", DynValue::Bytes(b)) => match args {
            [DynValue::Str(enc)] => {
                let enc = intern(&canonical_encoding(enc));
                statepack_runtime::io::expr_bytes_to_s(&b, enc)
                    .map(DynValue::Str)
                    .map_err(|e| e.0)
            }
            _ => Err("`.to_s` on bytes takes an encoding".to_owned()),
        },
        ("first" | "last" | "min" | "max", DynValue::Bytes(b)) => call(
            DynValue::List(b.iter().map(|x| DynValue::Int(i128::from(*x))).collect()),
            name,
            args,
        ),
        ("first", DynValue::List(x)) => {
            no_args(x.into_iter().next().ok_or("`.first` of an empty list")?)
        }
        ("last", DynValue::List(x)) => no_args(
            x.into_iter()
                .next_back()
                .ok_or("`.last` of an empty list")?,
        ),
        ("min" | "max", DynValue::List(x)) => {
            let mut best: Option<DynValue> = None;
            for v in x {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let less = as_bool(&binary(BinOp::Lt, &v, &b)?)?;
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

/// The encoding name the runtime knows for one written in a schema (`utf-8` is `UTF-8`).
pub(crate) fn canonical_encoding(e: &str) -> String {
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

fn cast<'a>(v: Cow<'a, DynValue>, ty: &str) -> R<Cow<'a, DynValue>> {
    match (ty, v.as_ref()) {
        ("bytes", DynValue::Bytes(_)) | ("str", DynValue::Str(_)) => Ok(v),
        ("bytes", DynValue::List(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for x in items {
                match x {
                    DynValue::Int(i @ 0..=255) => out.push(*i as u8),
                    other => return Err(format!("cannot cast {} to bytes", other.kind())),
                }
            }
            Ok(Cow::Owned(DynValue::Bytes(out)))
        }
        ("f4" | "f8", DynValue::Int(i)) => Ok(Cow::Owned(DynValue::Float(*i as f64))),
        (_, DynValue::Struct(_) | DynValue::Null) => Ok(v),
        (t, DynValue::Int(_) | DynValue::Float(_) | DynValue::Bool(_) | DynValue::Enum(_))
            if t.starts_with(['u', 's', 'f', 'b']) =>
        {
            Ok(v)
        }
        (t, other) => Err(format!("cannot cast {} to {t}", other.kind())),
    }
}

fn index<'a>(b: Cow<'a, DynValue>, i: i128) -> R<Cow<'a, DynValue>> {
    let len = match b.as_ref() {
        DynValue::List(x) => x.len(),
        DynValue::Bytes(x) => x.len(),
        other => return Err(format!("cannot index {}", other.kind())),
    };
    if i < 0 || i as usize >= len {
        return Err(format!("index {i} is out of range (length {len})"));
    }
    let i = i as usize;
    Ok(match b {
        Cow::Borrowed(DynValue::List(x)) => Cow::Borrowed(&x[i]),
        Cow::Owned(DynValue::List(mut x)) => Cow::Owned(x.swap_remove(i)),
        other => match other.as_ref() {
            DynValue::Bytes(x) => Cow::Owned(DynValue::Int(i128::from(x[i]))),
            _ => Cow::Owned(DynValue::Null),
        },
    })
}

fn num(v: &DynValue) -> Option<f64> {
    match v {
        DynValue::Int(i) => Some(*i as f64),
        DynValue::Float(f) => Some(*f),
        _ => None,
    }
}

/// Equality as the generated code compares: numbers by value, enums by stored integer,
/// strings, bytes, booleans exactly.
pub(crate) fn equal(l: &DynValue, r: &DynValue) -> R<bool> {
    Ok(match (l, r) {
        (DynValue::Int(a), DynValue::Int(b)) => a == b,
        (DynValue::Enum(a), DynValue::Enum(b)) => a.value == b.value,
        (DynValue::Enum(a), DynValue::Int(b)) | (DynValue::Int(b), DynValue::Enum(a)) => {
            a.value == *b
        }
        (DynValue::Float(_), DynValue::Int(_) | DynValue::Float(_))
        | (DynValue::Int(_), DynValue::Float(_)) => num(l) == num(r),
        (DynValue::Bool(a), DynValue::Bool(b)) => a == b,
        (DynValue::Str(a), DynValue::Str(b)) => a == b,
        (DynValue::Bytes(a), DynValue::Bytes(b)) => a == b,
        (DynValue::Null, DynValue::Null) => true,
        (DynValue::List(a), DynValue::List(b)) => {
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
        (DynValue::Struct(a), DynValue::Struct(b)) => a == b,
        (l, r) => return Err(format!("cannot compare {} with {}", l.kind(), r.kind())),
    })
}

fn order(l: &DynValue, r: &DynValue) -> R<std::cmp::Ordering> {
    match (l, r) {
        (DynValue::Int(a), DynValue::Int(b)) => Ok(a.cmp(b)),
        (DynValue::Enum(a), DynValue::Enum(b)) => Ok(a.value.cmp(&b.value)),
        (DynValue::Str(a), DynValue::Str(b)) => Ok(a.cmp(b)),
        (DynValue::Bytes(a), DynValue::Bytes(b)) => Ok(a.cmp(b)),
        _ => match (num(l), num(r)) {
            (Some(a), Some(b)) => a.partial_cmp(&b).ok_or_else(|| "NaN compared".to_owned()),
            _ => Err(format!("cannot order {} and {}", l.kind(), r.kind())),
        },
    }
}

pub(crate) fn binary(op: BinOp, l: &DynValue, r: &DynValue) -> R<DynValue> {
    use BinOp::*;
    use DynValue::{Bytes, Float, Int, Str};
    Ok(match (op, l, r) {
        (Eq, l, r) => DynValue::Bool(equal(l, r)?),
        (Ne, l, r) => DynValue::Bool(!equal(l, r)?),
        (Lt | Le | Gt | Ge, l, r) => {
            let ord = order(l, r)?;
            DynValue::Bool(match op {
                Lt => ord.is_lt(),
                Le => ord.is_le(),
                Gt => ord.is_gt(),
                _ => ord.is_ge(),
            })
        }
        (Add, Str(a), Str(b)) => Str(format!("{a}{b}")),
        (Add, Bytes(a), Bytes(b)) => Bytes([a.as_slice(), b.as_slice()].concat()),
        // As the generated code: integer arithmetic wraps in 128 bits, a zero divisor and a
        // shift amount outside 0..=63 are errors.
        (Add, Int(a), Int(b)) => Int(a.wrapping_add(*b)),
        (Sub, Int(a), Int(b)) => Int(a.wrapping_sub(*b)),
        (Mul, Int(a), Int(b)) => Int(a.wrapping_mul(*b)),
        (Div, Int(a), Int(b)) => {
            Int(statepack_runtime::io::expr_div_floor(*a, *b).map_err(|e| e.0)?)
        }
        (Mod, Int(a), Int(b)) => {
            Int(statepack_runtime::io::expr_mod_floor(*a, *b).map_err(|e| e.0)?)
        }
        (Shl | Shr, Int(a), Int(b)) => {
            Int(statepack_runtime::io::expr_shift(*a, *b, op == Shl).map_err(|e| e.0)?)
        }
        (BitAnd, Int(a), Int(b)) => Int(a & b),
        (BitOr, Int(a), Int(b)) => Int(a | b),
        (BitXor, Int(a), Int(b)) => Int(a ^ b),
        (BitAnd | BitOr | BitXor, DynValue::Bool(a), DynValue::Bool(b)) => {
            DynValue::Bool(match op {
                BitAnd => a & b,
                BitOr => a | b,
                _ => a ^ b,
            })
        }
        (Add | Sub | Mul | Div | Mod, l, r) => match (num(l), num(r)) {
            (Some(a), Some(b)) => Float(match op {
                Add => a + b,
                Sub => a - b,
                Mul => a * b,
                Div => a / b,
                _ => a - b * (a / b).floor(),
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

/// Width in bytes and signedness/floatness of a number type name (`u2`, `s4le`, `f8be`).
pub(crate) fn number_type(t: &str) -> Option<(u8, bool, bool, Option<crate::ir::Endian>)> {
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

/// The fixed encoded size in bytes of a number type or user type (`sizeof<...>`): every
/// field unconditional, of a literal size and count, whole bytes in total.
pub(crate) fn fixed_size(s: &Schema, name: &str, depth: usize) -> Option<usize> {
    if let Some((bytes, ..)) = number_type(name) {
        return Some(usize::from(bytes));
    }
    if depth > 64 {
        return None;
    }
    let t = s.type_def(name)?;
    let mut bits: usize = 0;
    for f in &t.fields {
        if f.cond.is_some() || f.at.is_some() {
            return None;
        }
        let count = match &f.repeat {
            Repeat::None => 1,
            Repeat::Expr(e) => match e.expr {
                Expr::Int(n) if n >= 0 => usize::try_from(n).ok()?,
                _ => return None,
            },
            _ => return None,
        };
        let lit = |sz: &Size| match sz {
            Size::Expr(e) => match e.expr {
                Expr::Int(n) if n >= 0 => usize::try_from(n).ok(),
                _ => None,
            },
            _ => None,
        };
        let one = match &f.kind {
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => {
                usize::from(*bytes) * 8
            }
            FieldKind::Bits { width, .. } => usize::from(*width),
            FieldKind::Contents(c) => c.len() * 8,
            FieldKind::Bytes(sz) if f.process.is_none() => lit(sz)? * 8,
            FieldKind::Str { size: Some(sz), .. } => lit(sz)? * 8,
            FieldKind::User { name, size } => match size {
                Some(sz) => lit(sz)? * 8,
                None => fixed_size(s, name, depth + 1)? * 8,
            },
            _ => return None,
        };
        if !crate::bits::is_bit_field(f) && !bits.is_multiple_of(8) {
            bits = bits.div_ceil(8) * 8;
        }
        bits = bits.checked_add(one.checked_mul(count)?)?;
    }
    if !bits.is_multiple_of(8) {
        return None;
    }
    Some(bits / 8)
}
