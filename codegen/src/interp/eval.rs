//! The interpreter's side of expression evaluation: the check stage's typed tree of each
//! expression ([`Trees`]) and the type being read as a [`crate::sem::TreeEnv`] (fields read
//! so far, params, value instances computed when first used and then kept, `_io`, `_`,
//! `_index`). The evaluation itself, with every operator, is [`crate::sem`]'s
//! ([`crate::sem::eval_tree`]), over the trees the Rust emitter compiles.

use super::{intern, DynStruct, DynValue};
use crate::diag::Pos;
use crate::ir::{Endian, Schema, SrcExpr, TypeDef};
use crate::sem::{self, as_bool, as_int, R};
use crate::typed::{Side, TExpr, Ty, TypedSchema};
use statepack_runtime::reflect::EnumValue;
use std::borrow::Cow;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::sync::Arc;

pub(crate) use crate::sem::{binary, equal, number_type};

/// `_io` of the type being read: position and size in its stream, and whether it is at the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct IoState {
    pub pos: i128,
    pub size: i128,
    pub eof: bool,
}

impl IoState {
    /// `size` of a stream being written: its size and its end are not known yet (only
    /// `_io.pos` is), so `_io.size` and `_io.eof` are errors there.
    pub const UNKNOWN: i128 = i128::MIN;

    fn size(&self) -> R<DynValue> {
        if self.size == Self::UNKNOWN {
            return Err("`_io.size` is not known while the stream is written".to_owned());
        }
        Ok(DynValue::Int(self.size))
    }

    fn eof(&self) -> R<DynValue> {
        if self.size == Self::UNKNOWN {
            return Err("`_io.eof` is not known while the stream is written".to_owned());
        }
        Ok(DynValue::Bool(self.eof))
    }
}

/// The members of the type being read: `seq` fields read so far, params, value instances
/// (computed when first used).
pub(crate) struct Frame<'s> {
    /// The typed trees of the schema's expressions.
    pub trees: &'s Trees<'s>,
    /// The side `seq` expressions are evaluated on (reading or writing the type).
    pub side: Side,
    pub ty: &'s TypeDef,
    pub fields: Vec<(&'static str, DynValue)>,
    pub params: Vec<(&'static str, Option<DynValue>)>,
    pub inst: Vec<OnceCell<R<DynValue>>>,
    pub busy: Vec<Cell<bool>>,
    /// The bytes each field in `fields` was read from (as `DynStruct::spans`).
    pub spans: Vec<Option<(u64, u64)>>,
    /// The positional instances that failed on their own (each is null in `fields`): an
    /// expression that names one fails with its error.
    pub errors: Vec<(&'static str, statepack_runtime::io::DecodeError)>,
    /// The byte order a `meta.endian` switch decided for numbers of [`Endian::Computed`]
    /// order (`true`: little-endian): this type's own switch, or the one it inherits
    /// through its hidden `__is_le` param. `None` when no switch decides it.
    pub is_le: Option<bool>,
    /// While a positional instance with `io: value._io` is read from that value's stream:
    /// the type's own stream just before, which `_io` in the instance's expressions names.
    pub own_io: Cell<Option<IoState>>,
}

impl<'s> Frame<'s> {
    /// The frame of one value of type `ty` about to be read (or written, as `side` says),
    /// with its params (name, value; `None` for a param not given) and no fields read yet.
    pub fn new(
        trees: &'s Trees<'s>,
        side: Side,
        ty: &'s TypeDef,
        params: Vec<(&'static str, Option<DynValue>)>,
    ) -> Self {
        Frame {
            trees,
            side,
            ty,
            fields: Vec::with_capacity(ty.fields.len()),
            spans: Vec::with_capacity(ty.fields.len()),
            params,
            errors: Vec::new(),
            inst: ty.instances.iter().map(|_| OnceCell::new()).collect(),
            busy: ty.instances.iter().map(|_| Cell::new(false)).collect(),
            is_le: None,
            own_io: Cell::new(None),
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

/// A typed tree's key: its type, side, line and column, and text (as the check stage keeps
/// it, without the key path).
type TreeKey<'s> = (crate::ir::TypeId, Side, (usize, usize), &'s str);

/// A map keyed by addresses ([`AddrHasher`]).
type ByAddr<V> = HashMap<u64, V, BuildHasherDefault<AddrHasher>>;

/// The check stage's typed trees of the schema's expressions, for the interpreter: found
/// by the type, side, place and text of an expression (the key the stage stores them
/// under), once per expression, then by its address. An expression the stage keeps no tree
/// of on that side (a case key of a `meta.endian` switch, compared in one typed test there;
/// an argument passed on unchanged) is typed here with the stage's own typer, in the scope
/// of every param and field of its type, as the Rust backend types such expressions.
pub(crate) struct Trees<'s> {
    schema: &'s Schema,
    open: HashSet<crate::ir::EnumId>,
    index: HashMap<TreeKey<'s>, &'s TExpr>,
    /// The trees found so far, by the expression's address and side ([`Trees::slot`]).
    seen: RefCell<ByAddr<(Pos, Arc<TExpr>)>>,
    /// Trees replaced in `seen` (an expression at an address another one had), kept so that
    /// no tree's text is freed while the interpreter runs: `enums` is keyed by addresses
    /// inside the trees.
    retired: RefCell<Vec<Arc<TExpr>>>,
    /// The value of each enum literal of the trees, by the address of its value name in the
    /// tree.
    enums: RefCell<ByAddr<EnumValue>>,
    /// The custom processors and opaque types the reader and writer may use.
    pub ext: &'s super::Extensions,
}

/// The hasher of [`Trees::seen`]: its keys are addresses, already spread over the bits
/// (Fibonacci hashing of the one integer written).
#[derive(Default)]
pub(crate) struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(*b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, x: u64) {
        self.0 = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl std::ops::Deref for Trees<'_> {
    type Target = Schema;

    fn deref(&self) -> &Schema {
        self.schema
    }
}

impl<'s> Trees<'s> {
    /// The trees of `typed` (the check stage's result for `schema`).
    pub fn new(schema: &'s Schema, typed: &'s TypedSchema) -> Self {
        let mut index = HashMap::with_capacity(typed.exprs.len());
        for x in &typed.exprs {
            let k = (x.ty, x.side, (x.pos.line, x.pos.col), x.src.as_str());
            index.entry(k).or_insert(&x.expr);
        }
        Trees {
            schema,
            open: crate::shape::open_enums(schema),
            index,
            seen: RefCell::new(HashMap::default()),
            retired: RefCell::new(Vec::new()),
            enums: RefCell::new(HashMap::default()),
            ext: super::Extensions::none(),
        }
    }

    /// These trees with the custom processors and opaque types of `ext`.
    pub fn with_ext(self, ext: &'s super::Extensions) -> Self {
        Trees { ext, ..self }
    }

    /// The typed tree of `e`, an expression of type `t` evaluated on `side`. Errors: an
    /// expression the typer refuses (which a checked schema does not have).
    pub fn get(&self, t: &TypeDef, e: &SrcExpr, side: Side) -> R<Arc<TExpr>> {
        let key = Self::slot(e, side);
        if let Some((pos, tree)) = self.seen.borrow().get(&key) {
            if *pos == e.pos {
                return Ok(tree.clone());
            }
        }
        let k = (t.id, side, (e.pos.line, e.pos.col), e.src.as_str());
        let tree = match self.index.get(&k) {
            Some(x) => Arc::new((*x).clone()),
            None => Arc::new(self.type_here(t, e, side)?),
        };
        if let Some((_, old)) = self.seen.borrow_mut().insert(key, (e.pos, tree.clone())) {
            self.retired.borrow_mut().push(old);
        }
        Ok(tree)
    }

    /// The key of `e` on `side` in [`Trees::seen`]: its address (a `SrcExpr` is larger than
    /// four bytes, so two differ above the two low bits) and the side in those bits.
    fn slot(e: &SrcExpr, side: Side) -> u64 {
        let side = match side {
            Side::Read => 0,
            Side::Write => 1,
            Side::Value => 2,
        };
        ((std::ptr::from_ref(e) as usize as u64) << 2) | side
    }

    fn type_here(&self, t: &TypeDef, e: &SrcExpr, side: Side) -> R<TExpr> {
        let typer = crate::typed::Typer::new(self.schema, &self.open, t);
        let mut scope = typer.value_scope(t);
        scope.side = side;
        scope.vars.push(("_index".to_owned(), Ty::Int));
        if t.endian_switch.is_some() || t.params.iter().any(|p| p.id == crate::endian::IS_LE) {
            scope.vars.push((crate::endian::IS_LE.to_owned(), Ty::Bool));
        }
        typer
            .ty(&e.expr, &scope)
            .map_err(|(m, _)| format!("the expression cannot be typed: {m}"))
    }
}

/// Where names resolve: the type being read, `_` and `_index` of a repetition, `_io`, and
/// the side the expression is evaluated on (which of the check stage's trees applies).
pub(crate) struct Scope<'a> {
    pub schema: &'a Schema,
    pub frame: &'a Frame<'a>,
    pub elem: Option<&'a DynValue>,
    pub index: Option<i128>,
    pub io: Option<IoState>,
    pub side: Side,
}

impl<'a> Scope<'a> {
    /// A scope over `frame` with no `_`, `_index` or `_io`, on the frame's side.
    pub fn plain(schema: &'a Schema, frame: &'a Frame<'a>, io: Option<IoState>) -> Self {
        Scope {
            schema,
            frame,
            elem: None,
            index: None,
            // In the expressions of an instance read from another value's stream, `_io` is
            // still the type's own stream.
            io: frame.own_io.get().or(io),
            side: frame.side,
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
            _ => {}
        }
        let frame: &'a Frame<'a> = self.frame;
        if let Some((_, e)) = frame.errors.iter().find(|(k, _)| *k == n) {
            return Err(format!("instance `{n}` cannot be read: {e}"));
        }
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
        if let Some(v) = self.kept_instance(n) {
            return v;
        }
        if frame.ty.fields.iter().any(|f| f.id == n) {
            return Err(format!("field `{n}` is used before it is read"));
        }
        Err(format!(
            "`{n}` names no field, param or instance of `{}`",
            frame.ty.schema_name
        ))
    }

    /// Value instance `n` of the frame's type: computed when first asked for, then kept.
    fn kept_instance(&self, n: &str) -> Option<R<Cow<'a, DynValue>>> {
        let frame: &'a Frame<'a> = self.frame;
        let i = frame.ty.instances.iter().position(|x| x.id == n)?;
        if let Some(done) = frame.inst[i].get() {
            return Some(done.as_ref().map(Cow::Borrowed).map_err(Clone::clone));
        }
        if frame.busy[i].replace(true) {
            return Some(Err(format!("instance `{n}` depends on itself")));
        }
        let v = instance_value(self.schema, frame, i, self.io);
        frame.busy[i].set(false);
        let _ = frame.inst[i].set(v);
        Some(match frame.inst[i].get() {
            Some(r) => r.as_ref().map(Cow::Borrowed).map_err(Clone::clone),
            None => Err(format!("instance `{n}` has no value")),
        })
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
    let sc = Scope {
        side: Side::Value,
        ..Scope::plain(schema, frame, io)
    };
    if let Some(c) = &inst.cond {
        if !eval_bool(c, &sc)? {
            return Ok(DynValue::Null);
        }
    }
    let v = eval(&inst.value, &sc)?.into_owned();
    match (&inst.enum_name, v) {
        (Some(e), DynValue::Int(x)) => enum_value(schema, schema.enum_name(e), x),
        (Some(e), DynValue::Enum(x)) => enum_value(schema, schema.enum_name(e), x.value),
        (_, v) => Ok(v),
    }
}

/// The value `x` of enum `name` (its unique name), with the value's name when the enum lists
/// it.
pub(crate) fn enum_value(schema: &Schema, name: &str, x: i128) -> R<DynValue> {
    let e = schema
        .enum_named(name)
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
pub(crate) fn eval_bool(e: &SrcExpr, sc: &Scope<'_>) -> R<bool> {
    as_bool(eval(e, sc)?.as_ref())
}

/// Evaluates an expression that must be an integer (an enum value counts as its integer).
pub(crate) fn eval_int(e: &SrcExpr, sc: &Scope<'_>) -> R<i128> {
    as_int(eval(e, sc)?.as_ref())
}

/// The value of `e` in `sc`: the check stage's typed tree of it on the scope's side,
/// evaluated by the one evaluator ([`crate::sem::eval_tree`]).
pub(crate) fn eval<'a>(e: &SrcExpr, sc: &Scope<'a>) -> R<Cow<'a, DynValue>> {
    let tree = sc.frame.trees.get(sc.frame.ty, e, sc.side)?;
    sem::eval_tree(&tree, sc)
}

impl sem::Handle for Arc<DynStruct> {
    fn type_name(&self) -> &str {
        self.type_name
    }

    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl<'a> sem::TreeEnv<'a> for Scope<'a> {
    type H = Arc<DynStruct>;

    fn var(&self, n: &str) -> R<Cow<'a, DynValue>> {
        self.name(n)
    }

    fn instance(&self, n: &str) -> Option<R<Cow<'a, DynValue>>> {
        self.kept_instance(n)
    }

    fn io(&self, attr: &str) -> R<DynValue> {
        let io = self
            .io
            .ok_or_else(|| "`_io` has no value here".to_owned())?;
        match attr {
            "pos" => Ok(DynValue::Int(io.pos)),
            "size" => io.size(),
            "eof" => io.eof(),
            other => Err(format!("`_io.{other}` is not interpreted")),
        }
    }

    fn member_io(&self, of: &DynValue, attr: &str) -> R<DynValue> {
        let DynValue::Struct(s) = of else {
            return Err(format!("{} has no `_io`", of.kind()));
        };
        let io =
            s.io.ok_or_else(|| "`_io` of this value is not known".to_owned())?;
        match attr {
            "pos" => Ok(DynValue::Int(io.pos)),
            "size" => io.size(),
            "eof" => io.eof(),
            other => Err(format!("`_io.{other}` is not interpreted")),
        }
    }

    fn member(&self, base: Cow<'a, DynValue>, name: &str) -> R<Cow<'a, DynValue>> {
        attr(base, name)
    }

    fn enum_value(&self, en: crate::ir::EnumId, value: &str) -> R<DynValue> {
        // `value` is the name in the tree: its address stands for the literal.
        let trees = self.frame.trees;
        let key = value.as_ptr() as u64;
        if let (false, Some(v)) = (value.is_empty(), trees.enums.borrow().get(&key)) {
            return Ok(DynValue::Enum(*v));
        }
        let def = self.schema.enm(en);
        let v = def
            .values
            .iter()
            .find(|v| v.name == *value)
            .ok_or_else(|| format!("enum `{}` has no value `{value}`", def.schema_name))?;
        let v = EnumValue {
            enum_name: intern(&def.schema_name),
            name: Some(intern(&v.name)),
            value: v.value,
        };
        trees.enums.borrow_mut().insert(key, v);
        Ok(DynValue::Enum(v))
    }

    fn as_enum(&self, en: crate::ir::EnumId, x: i128) -> R<DynValue> {
        enum_value(self.schema, &self.schema.enm(en).name, x)
    }

    fn enum_label(&self, en: crate::ir::EnumId) -> String {
        self.schema.enm(en).name.clone()
    }

    fn context_param(&self, p: &str) -> R<Option<Cow<'a, DynValue>>> {
        let frame: &'a Frame<'a> = self.frame;
        match frame.params.iter().find(|(k, _)| *k == p) {
            Some((_, Some(v))) => Ok(Some(Cow::Borrowed(v))),
            Some((_, None)) => Ok(None),
            None => Err(format!("`{p}` is not a context param of this type")),
        }
    }

    /// Casts name types by their unique names (`opcode_strval`); values carry schema names.
    fn cast_struct_name(&self, ty: &str) -> String {
        let t = ty.strip_suffix("[]").unwrap_or(ty);
        match self.schema.type_named(t) {
            Some(def) => def.schema_name.clone(),
            None => t.rsplit("::").next().unwrap_or(t).to_owned(),
        }
    }
}

/// Member `name` of a user-type value: a member, or a hidden context param.
fn attr<'a>(b: Cow<'a, DynValue>, name: &str) -> R<Cow<'a, DynValue>> {
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

/// The byte order a type's `meta.endian` switch selects (`true`: little-endian), for the
/// reader and the writer alike: the first case whose key equals the `switch-on` value, else
/// `_`. Errors: no case names the value and there is no `_` (Kaitai Struct's undecided
/// endianness), or an expression cannot be evaluated (the message names it).
pub(crate) fn decide_endian(sc: &Scope<'_>, sw: &crate::ir::EndianSwitch) -> R<bool> {
    let v = eval(&sw.on, sc).map_err(|m| format!("in `{}`: {m}", sw.on.src))?;
    for (k, order) in &sw.cases {
        let kv = eval(k, sc).map_err(|m| format!("in `{}`: {m}", k.src))?;
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
