//! The interpreter's side of expression evaluation: the type being read as an
//! [`crate::sem::Env`] (fields read so far, params, value instances computed when first
//! used, `_io`, `_`, `_index`, `_sizeof`). The evaluation itself, with every operator, is
//! [`crate::sem`]'s, the same that evaluates over generated values.

use super::{intern, DynStruct, DynValue};
use crate::expr::Expr;
use crate::ir::{Endian, FieldKind, Repeat, Schema, Size, TypeDef};
use crate::sem::{self, as_bool, as_int, R};
use statepack_runtime::reflect::EnumValue;
use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::sync::Arc;

pub(crate) use crate::sem::{binary, equal, number_type};

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
    /// The byte order a `meta.endian` switch decided for numbers of [`Endian::Computed`]
    /// order (`true`: little-endian): this type's own switch, or the one it inherits
    /// through its hidden `__is_le` param. `None` when no switch decides it.
    pub is_le: Option<bool>,
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
            is_le: None,
        }
    }

    /// Records the byte order decided for this value: `decided` (this type's own
    /// `meta.endian` switch, see [`decide_endian`]) becomes the `__is_le` its nested types
    /// are given, and [`Frame::is_le`] is that order, or the one inherited through the
    /// type's own hidden `__is_le` param.
    pub fn settle_endian(&mut self, decided: Option<bool>) {
        if let Some(le) = decided {
            self.params
                .push((crate::endian::IS_LE, Some(DynValue::Bool(le))));
        }
        self.is_le = self
            .params
            .iter()
            .find(|(k, _)| *k == crate::endian::IS_LE)
            .and_then(|(_, v)| match v {
                Some(DynValue::Bool(b)) => Some(*b),
                _ => None,
            });
    }

    /// `endian` with [`Endian::Computed`] replaced by the order decided for this value.
    /// Errors: a computed order where no switch decided one.
    pub fn order(&self, endian: Endian) -> Result<Endian, String> {
        match (endian, self.is_le) {
            (Endian::Computed, Some(true)) => Ok(Endian::Le),
            (Endian::Computed, Some(false)) => Ok(Endian::Be),
            (Endian::Computed, None) => {
                Err("a number whose byte order no `meta.endian` switch decided".to_owned())
            }
            (e, _) => Ok(e),
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

    pub(crate) fn name(&self, n: &str) -> R<Cow<'a, DynValue>> {
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
        if !eval_bool(&c.expr, &sc)? {
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

/// Evaluates an expression that must be an integer (an enum value counts as its integer).
pub(crate) fn eval_int(e: &Expr, sc: &Scope<'_>) -> R<i128> {
    as_int(eval(e, sc)?.as_ref())
}

/// The value of `e` in `sc`, by the one evaluator ([`crate::sem::eval`]).
pub(crate) fn eval<'a>(e: &Expr, sc: &Scope<'a>) -> R<Cow<'a, DynValue>> {
    sem::eval(e, sc)
}

impl sem::Handle for Arc<DynStruct> {
    fn type_name(&self) -> &str {
        self.type_name
    }

    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl<'a> sem::Env<'a> for Scope<'a> {
    type H = Arc<DynStruct>;

    fn special(&self, e: &Expr) -> Option<R<Cow<'a, DynValue>>> {
        let own = |v: DynValue| Some(Ok(Cow::Owned(v)));
        match e {
            // `field._sizeof`: the bytes the field took (its size, for a sized field).
            Expr::Attr(base, name)
                if name == "_sizeof" && !matches!(&**base, Expr::Name(n) if n == "_io") =>
            {
                let span = match &**base {
                    Expr::Name(n) => self
                        .frame
                        .fields
                        .iter()
                        .position(|(k, _)| *k == n)
                        .and_then(|i| self.frame.spans.get(i).copied().flatten()),
                    Expr::Attr(parent, n) => match eval(parent, self) {
                        Ok(v) => match v.as_ref() {
                            DynValue::Struct(s) => s
                                .members
                                .iter()
                                .position(|(k, _)| *k == n)
                                .and_then(|i| s.spans.get(i).copied().flatten()),
                            _ => None,
                        },
                        Err(m) => return Some(Err(m)),
                    },
                    _ => None,
                };
                span.and_then(|(a, b)| own(DynValue::Int(i128::from(b.saturating_sub(a)))))
            }
            Expr::Attr(base, name) if matches!(&**base, Expr::Name(b) if b == "_io") => {
                let Some(io) = self.io else {
                    return Some(Err("`_io` has no value here".to_owned()));
                };
                match name.as_str() {
                    "pos" => own(DynValue::Int(io.pos)),
                    "size" => own(DynValue::Int(io.size)),
                    "eof" => own(DynValue::Bool(io.eof)),
                    other => Some(Err(format!("`_io.{other}` is not interpreted"))),
                }
            }
            // A `_root` path of a recursive root type: the value given by the reading field,
            // or at the top level (where none is given) the root's own.
            Expr::Call(base, name, args) if name == "__or_self" && args.len() == 1 => {
                if let Expr::Name(pn) = &**base {
                    if let Some((_, v)) = self.frame.params.iter().find(|(k, _)| *k == pn) {
                        return Some(match v {
                            Some(v) => Ok(Cow::Borrowed(v)),
                            None => eval(&args[0], self),
                        });
                    }
                }
                Some(Err(
                    "`__or_self` on something that is not a context param".to_owned()
                ))
            }
            _ => None,
        }
    }

    fn name(&self, n: &str) -> R<Cow<'a, DynValue>> {
        Scope::name(self, n)
    }

    fn member(&self, base: Cow<'a, DynValue>, name: &str) -> R<Cow<'a, DynValue>> {
        attr(base, name)
    }

    fn enum_ref(&self, en: &str, value: &str) -> R<DynValue> {
        let def = self
            .schema
            .enum_def(en)
            .ok_or_else(|| format!("no enum `{en}`"))?;
        let v = def
            .values
            .iter()
            .find(|v| v.name == *value)
            .ok_or_else(|| format!("enum `{}` has no value `{value}`", def.schema_name))?;
        Ok(DynValue::Enum(EnumValue {
            enum_name: intern(&def.schema_name),
            name: Some(intern(&v.name)),
            value: v.value,
        }))
    }

    /// Casts name types by their unique names (`opcode_strval`); values carry schema names.
    fn cast_struct_name(&self, ty: &str) -> String {
        let t = ty.strip_suffix("[]").unwrap_or(ty);
        match self.schema.type_def(t) {
            Some(def) => def.schema_name.clone(),
            None => t.rsplit("::").next().unwrap_or(t).to_owned(),
        }
    }

    fn sizeof_type(&self, t: &str) -> R<i128> {
        fixed_size(self.schema, t, 0)
            .map(|n| n as i128)
            .ok_or_else(|| format!("`sizeof<{t}>`: the type has no fixed size"))
    }
}

/// Member `name` of a user-type value: `_sizeof`, `_io`, a member, or a hidden context
/// param.
fn attr<'a>(b: Cow<'a, DynValue>, name: &str) -> R<Cow<'a, DynValue>> {
    if let DynValue::Struct(s) = b.as_ref() {
        match name {
            "_sizeof" => return Ok(Cow::Owned(DynValue::Int(i128::from(s.size)))),
            "_io" => {
                let io =
                    s.io.ok_or_else(|| "`_io` of this value is not known".to_owned())?;
                return Ok(Cow::Owned(DynValue::Struct(Arc::new(
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
            if let Some((_, Some(v))) = s.hidden.iter().find(|(k, _)| *k == name) {
                return Ok(Cow::Owned(v.clone()));
            }
            Err(format!("type {} has no member `{name}`", s.type_name))
        }
        other => Err(format!("{} has no member `{name}`", other.kind())),
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

/// The byte order a type's `meta.endian` switch selects (`true`: little-endian), for the
/// reader and the writer alike: the first case whose key equals the `switch-on` value, else
/// `_`. Errors: no case names the value and there is no `_` (Kaitai Struct's undecided
/// endianness), or an expression cannot be evaluated (the message names it).
pub(crate) fn decide_endian(sc: &Scope<'_>, sw: &crate::ir::EndianSwitch) -> R<bool> {
    let v = eval(&sw.on.expr, sc).map_err(|m| format!("in `{}`: {m}", sw.on.src))?;
    for (k, order) in &sw.cases {
        let kv = eval(&k.expr, sc).map_err(|m| format!("in `{}`: {m}", k.src))?;
        if equal(&v, &kv).map_err(|m| format!("in `{}`: {m}", k.src))? {
            return Ok(*order == Endian::Le);
        }
    }
    sw.default.map(|o| o == Endian::Le).ok_or_else(|| {
        format!(
            "undecided byte order: `meta.endian` switch-on `{}` is {v}, which no case names",
            sw.on.src
        )
    })
}
