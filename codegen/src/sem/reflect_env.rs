//! Evaluation over any value seen through [`Reflect`]: generated types, the interpreter's
//! trees, hand-written views.

use super::ops::R;
use super::tree::TreeEnv;
use super::value::{Handle, Val};
use crate::ir::{EnumId, Schema};
use statepack_runtime::reflect::{EnumValue, Reflect, Value};
use std::borrow::Cow;
use std::fmt;
use std::rc::Rc;

/// One step from a user-type value to a value inside it.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    Member(String),
    Index(usize),
}

/// A user-type value found through [`Reflect`].
///
/// A value borrowed from the root lives as long as the root (`'a`). A user type computed on
/// demand ([`Value::Owned`], an instance the type does not store) is kept by an `Rc`, and a
/// value inside it by the path from it, followed again on each use.
#[derive(Clone)]
pub enum RefHandle<'a> {
    /// A user type borrowed from the root value.
    Borrowed(&'a dyn Reflect),
    /// A user type inside one computed on demand: the computed value and the path to it.
    Owned(Rc<dyn Reflect + 'a>, Vec<StepOf>),
}

/// A step of a [`RefHandle::Owned`] path (opaque).
#[derive(Debug, Clone, PartialEq)]
pub struct StepOf(Step);

impl fmt::Debug for RefHandle<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<{}>", self.type_name())
    }
}

impl<'a> RefHandle<'a> {
    /// Runs `f` on the user type this handle stands for (`None` for a path that no longer
    /// leads to a user type).
    fn with<T>(&self, f: impl FnOnce(&dyn Reflect) -> T) -> Option<T> {
        match self {
            RefHandle::Borrowed(r) => Some(f(*r)),
            RefHandle::Owned(root, path) => walk(root.as_ref(), path, f),
        }
    }
}

fn walk<T>(at: &dyn Reflect, path: &[StepOf], f: impl FnOnce(&dyn Reflect) -> T) -> Option<T> {
    let Some((first, rest)) = path.split_first() else {
        return Some(f(at));
    };
    let Step::Member(name) = &first.0 else {
        return None;
    };
    let v = at.member(name)?;
    // Index steps follow the member they index.
    let mut idx = Vec::new();
    let mut rest = rest;
    while let Some((StepOf(Step::Index(i)), r)) = rest.split_first() {
        idx.push(*i);
        rest = r;
    }
    let mut v = &v;
    for i in idx {
        match v {
            Value::List(items) => v = items.get(i)?,
            _ => return None,
        }
    }
    walk(v.as_struct()?, rest, f)
}

impl Handle for RefHandle<'_> {
    fn type_name(&self) -> &str {
        self.with(|r| r.schema_type()).unwrap_or("?")
    }

    fn same(&self, other: &Self) -> bool {
        match (self, other) {
            (RefHandle::Borrowed(a), RefHandle::Borrowed(b)) => std::ptr::addr_eq(*a, *b),
            (RefHandle::Owned(a, p), RefHandle::Owned(b, q)) => Rc::ptr_eq(a, b) && p == q,
            _ => false,
        }
    }
}

/// Names of a typed tree ([`crate::typed::type_assert`]) resolve against one value seen
/// through [`Reflect`]: a name is the root's member (a bare `_root` is the root itself when
/// the type does not answer for it), a member is whatever the value answers for it (its
/// value instances, params, `_parent` and `_io` included, where the generated type has them),
/// enum values are looked up in the schema the tree was typed with. With no root
/// ([`ReflectEnv::constants`]) only names-free expressions evaluate.
pub struct ReflectEnv<'a> {
    root: Option<&'a dyn Reflect>,
    schema: &'a Schema,
}

impl<'a> ReflectEnv<'a> {
    /// An environment whose names are `root`'s members, `root` a value of `schema`'s root
    /// type.
    pub fn new(root: &'a dyn Reflect, schema: &'a Schema) -> Self {
        Self {
            root: Some(root),
            schema,
        }
    }

    /// An environment without a value: only literals, enum values and operators evaluate.
    pub fn constants(schema: &'a Schema) -> Self {
        Self { root: None, schema }
    }
}

type V<'a> = Val<RefHandle<'a>>;

/// A member read from a value borrowed for `'a`.
fn lift_borrowed<'a>(v: Value<'a>) -> V<'a> {
    match v {
        Value::Struct(s) => Val::Struct(RefHandle::Borrowed(s)),
        Value::Owned(rc) => Val::Struct(RefHandle::Owned(rc, Vec::new())),
        Value::List(items) => Val::List(items.into_iter().map(lift_borrowed).collect()),
        other => scalar(other),
    }
}

/// A member read from a computed value: user types inside it are reached by their path.
fn lift_owned<'a>(v: Value<'_>, root: &Rc<dyn Reflect + 'a>, path: &[StepOf]) -> V<'a> {
    match v {
        Value::Struct(_) => Val::Struct(RefHandle::Owned(root.clone(), path.to_vec())),
        Value::Owned(_) => Val::Struct(RefHandle::Owned(root.clone(), path.to_vec())),
        Value::List(items) => Val::List(
            items
                .into_iter()
                .enumerate()
                .map(|(i, x)| {
                    let mut p = path.to_vec();
                    p.push(StepOf(Step::Index(i)));
                    lift_owned(x, root, &p)
                })
                .collect(),
        ),
        other => scalar(other),
    }
}

fn scalar<'a>(v: Value<'_>) -> V<'a> {
    match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(b),
        Value::Int(i) => Val::Int(i),
        Value::Float(f) => Val::Float(f),
        Value::Str(s) => Val::Str(s.into_owned()),
        Value::Bytes(b) => Val::Bytes(b.into_owned()),
        Value::Enum(e) => Val::Enum(e),
        // Lists and user types are lifted by the callers; a failed read is an error there.
        Value::List(_) | Value::Struct(_) | Value::Owned(_) | Value::Error(_) => Val::Null,
    }
}

fn no_member(s: &dyn Reflect, name: &str) -> String {
    format!(
        "type {} has no member `{name}` (it has: {})",
        s.schema_type(),
        s.member_names().join(", ")
    )
}

fn member_of<'a>(h: &RefHandle<'a>, name: &str) -> R<V<'a>> {
    match h {
        RefHandle::Borrowed(r) => match r.member(name) {
            Some(Value::Error(e)) => Err(e.to_string()),
            Some(v) => Ok(lift_borrowed(v)),
            None => Err(no_member(*r, name)),
        },
        RefHandle::Owned(root, path) => {
            let mut p = path.clone();
            p.push(StepOf(Step::Member(name.to_owned())));
            walk(root.as_ref(), path, |r| match r.member(name) {
                Some(Value::Error(e)) => Err(e.to_string()),
                Some(v) => Ok(lift_owned(v, root, &p)),
                None => Err(no_member(r, name)),
            })
            .unwrap_or_else(|| Err(format!("`{name}`: the value is gone")))
        }
    }
}

/// Value `x` of enum `en` (a unique enum name of `schema`), named when the enum lists it.
fn enum_of(schema: &Schema, en: &str, x: i128) -> R<EnumValue> {
    let def = schema
        .enum_named(en)
        .ok_or_else(|| format!("no enum `{en}`"))?;
    Ok(EnumValue {
        enum_name: super::intern(&def.schema_name),
        name: def
            .values
            .iter()
            .find(|v| v.value == x)
            .map(|v| super::intern(&v.name)),
        value: x,
    })
}

impl<'a> ReflectEnv<'a> {
    fn root(&self, n: &str) -> R<&'a dyn Reflect> {
        self.root.ok_or_else(|| {
            format!("`{n}` names a member, but this side has no value to read it from")
        })
    }
}

impl<'a> TreeEnv<'a> for ReflectEnv<'a> {
    type H = RefHandle<'a>;

    fn var(&self, n: &str) -> R<Cow<'a, V<'a>>> {
        let root = self.root(n)?;
        match root.member(n) {
            Some(Value::Error(e)) => Err(e.to_string()),
            Some(v) => Ok(Cow::Owned(lift_borrowed(v))),
            // At the top, `_root` is the value itself. Deeper down (`a._root`) only what the
            // type answers counts: an imported type read at the top has none.
            None if n == "_root" => Ok(Cow::Owned(Val::Struct(RefHandle::Borrowed(root)))),
            None => Err(no_member(root, n)),
        }
    }

    /// A value instance of the root type, as the value answers for it (the generated
    /// type's own instance, not the tree the check stage inlined).
    fn instance(&self, n: &str) -> Option<R<Cow<'a, V<'a>>>> {
        Some(self.var(n))
    }

    fn io(&self, attr: &str) -> R<V<'a>> {
        let io = self.var("_io")?;
        self.member(io, attr).map(Cow::into_owned)
    }

    fn member_io(&self, of: &V<'a>, attr: &str) -> R<V<'a>> {
        let io = self.member(Cow::Owned(of.clone()), "_io")?;
        self.member(io, attr).map(Cow::into_owned)
    }

    fn member(&self, base: Cow<'a, V<'a>>, n: &str) -> R<Cow<'a, V<'a>>> {
        match base.as_ref() {
            Val::Struct(h) => member_of(h, n).map(Cow::Owned),
            other => Err(format!("{} has no member `{n}`", other.kind())),
        }
    }

    fn enum_value(&self, e: EnumId, value: &str) -> R<V<'a>> {
        let def = self.schema.enm(e);
        let enum_name = &def.name;
        let x = def
            .values
            .iter()
            .find(|v| v.name == value)
            .ok_or_else(|| format!("`{value}` is not a value of `{enum_name}`"))?;
        enum_of(self.schema, enum_name, x.value).map(Val::Enum)
    }

    fn as_enum(&self, e: EnumId, x: i128) -> R<V<'a>> {
        enum_of(self.schema, &self.schema.enm(e).name, x).map(Val::Enum)
    }

    fn enum_label(&self, e: EnumId) -> String {
        self.schema.enm(e).name.clone()
    }

    fn context_param(&self, p: &str) -> R<Option<Cow<'a, V<'a>>>> {
        Err(format!(
            "`{p}` is a context param, which a decoded value does not hold"
        ))
    }
}
