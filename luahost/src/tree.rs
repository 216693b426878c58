//! Values read by a generated Luau module, seen from Rust through
//! [`statepack_runtime::reflect::Reflect`], so they can be compared with the Rust reader's
//! values member by member ([`statepack_codegen::interp::compare`]) and Kaitai's test
//! asserts evaluated on them by the generator's one evaluator.
//!
//! A Luau value is a table keyed by field name with `__type` naming its user type; the
//! schema's checked IR says what each member is (an integer, an enum, text or bytes, a
//! list...), as [`statepack_codegen::lua_emit::expr`] gives it to the generator.
//!
//! A value read by a generated Lua 5.1 module (in a `lua5.1` child process) comes here
//! through the same Luau VM: the test driver prints it as a Luau table constructor, which the
//! test evaluates; a user type read through `process: zlib` is then a table (Lua 5.1
//! inflates it), where the Luau module keeps the stored bytes.

use mlua::{Table, Value as LuaValue};
use statepack_codegen::ir::{Schema, TypeDef};
use statepack_codegen::lua_emit::expr::{field_kind, instance_kind, param_kind, Kind};
use statepack_runtime::reflect::{EnumValue, Reflect, Value};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

fn intern(s: &str) -> &'static str {
    static SET: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = SET
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(k) = set.get(s) {
        return k;
    }
    let k: &'static str = Box::leak(s.to_owned().into_boxed_str());
    set.insert(k);
    k
}

fn intern_names(names: Vec<&'static str>) -> &'static [&'static str] {
    static SET: OnceLock<Mutex<HashSet<&'static [&'static str]>>> = OnceLock::new();
    let mut set = SET
        .get_or_init(|| Mutex::new(HashSet::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(k) = set.get(names.as_slice()) {
        return k;
    }
    let k: &'static [&'static str] = Box::leak(names.into_boxed_slice());
    set.insert(k);
    k
}

/// One member value.
#[derive(Debug, Clone)]
pub enum Member {
    /// Absent.
    Null,
    /// A condition.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A float.
    Float(f64),
    /// Text.
    Str(String),
    /// Bytes.
    Bytes(Vec<u8>),
    /// An enum value.
    Enum(EnumValue),
    /// A list.
    List(Vec<Member>),
    /// A user type.
    Struct(Box<Node>),
}

/// One user type's value as the Luau reader gave it.
#[derive(Debug, Clone)]
pub struct Node {
    ty: &'static str,
    names: &'static [&'static str],
    members: Vec<Member>,
}

impl Reflect for Node {
    fn schema_type(&self) -> &'static str {
        self.ty
    }
    fn member(&self, name: &str) -> Option<Value<'_>> {
        let i = self.names.iter().position(|n| *n == name)?;
        Some(to_value(&self.members[i]))
    }
    fn member_names(&self) -> &'static [&'static str] {
        self.names
    }
}

fn to_value(m: &Member) -> Value<'_> {
    match m {
        Member::Null => Value::Null,
        Member::Bool(b) => Value::Bool(*b),
        Member::Int(i) => Value::Int(*i),
        Member::Float(f) => Value::Float(*f),
        Member::Str(s) => Value::Str(Cow::Borrowed(s)),
        Member::Bytes(b) => Value::Bytes(Cow::Borrowed(b)),
        Member::Enum(e) => Value::Enum(*e),
        Member::List(l) => Value::List(l.iter().map(to_value).collect()),
        Member::Struct(n) => Value::Struct(n.as_ref()),
    }
}

/// Converts the Luau value `t` of type `ty` (unique schema name). Errors: a value of the
/// wrong shape, named by its path.
pub fn convert(s: &Schema, ty: &str, t: &Table) -> Result<Node, String> {
    convert_at(s, ty, t, "", 0)
}

fn convert_at(s: &Schema, ty: &str, t: &Table, path: &str, depth: usize) -> Result<Node, String> {
    if depth > 256 {
        return Err(format!("{path}: nested too deeply"));
    }
    let td: &TypeDef = s
        .type_named(ty)
        .ok_or_else(|| format!("{path}: no type {ty}"))?;
    let mut names = Vec::new();
    let mut members = Vec::new();
    let mut add = |name: &str, kind: Kind, names: &mut Vec<&'static str>| -> Result<(), String> {
        let v: LuaValue = t.get(name).map_err(|e| format!("{path}.{name}: {e}"))?;
        let p = format!("{path}.{name}");
        names.push(intern(name));
        members.push(member(s, &kind, v, &p, depth)?);
        Ok(())
    };
    for f in &td.fields {
        add(&f.id, field_kind(s, f), &mut names)?;
    }
    for p in td.params.iter().filter(|p| p.context.is_none()) {
        add(&p.id, param_kind(s, &p.kind), &mut names)?;
    }
    for i in &td.instances {
        let k = instance_kind(s, td, i).unwrap_or(Kind::Any);
        add(&i.id, k, &mut names)?;
    }
    Ok(Node {
        ty: intern(&td.schema_name),
        names: intern_names(names),
        members,
    })
}

fn number(v: &LuaValue) -> Option<f64> {
    match v {
        LuaValue::Integer(i) => Some(*i as f64),
        LuaValue::Number(n) => Some(*n),
        _ => None,
    }
}

fn member(s: &Schema, k: &Kind, v: LuaValue, path: &str, depth: usize) -> Result<Member, String> {
    if matches!(v, LuaValue::Nil) {
        return Ok(Member::Null);
    }
    let bad = |what: &str, v: &LuaValue| Err(format!("{path}: expected {what}, got {v:?}"));
    Ok(match k {
        Kind::Int => match number(&v) {
            Some(n) if n.fract() == 0.0 => Member::Int(n as i128),
            Some(n) => Member::Float(n),
            None => match v {
                LuaValue::Boolean(b) => Member::Bool(b),
                _ => return bad("an integer", &v),
            },
        },
        Kind::Float => match number(&v) {
            Some(n) => Member::Float(n),
            None => return bad("a number", &v),
        },
        Kind::Bool => match v {
            LuaValue::Boolean(b) => Member::Bool(b),
            _ => return bad("a boolean", &v),
        },
        Kind::Str => match &v {
            LuaValue::String(x) => {
                Member::Str(x.to_str().map_err(|e| format!("{path}: {e}"))?.to_owned())
            }
            _ => return bad("text", &v),
        },
        Kind::Bytes => match &v {
            LuaValue::String(x) => Member::Bytes(x.as_bytes().to_vec()),
            // A user type read through `process: zlib`: bytes in Luau (kept as stored), the
            // value read from the inflated bytes in Lua 5.1.
            LuaValue::Table(_) => return member(s, &Kind::Any, v, path, depth),
            _ => return bad("bytes", &v),
        },
        Kind::Enum(e) => {
            let n = number(&v)
                .ok_or_else(|| format!("{path}: expected an enum value, got {v:?}"))?
                as i128;
            let d = s
                .enum_named(e)
                .ok_or_else(|| format!("{path}: no enum {e}"))?;
            Member::Enum(EnumValue {
                enum_name: intern(&d.schema_name),
                name: d
                    .values
                    .iter()
                    .find(|x| x.value == n)
                    .map(|x| intern(&x.name)),
                value: n,
            })
        }
        Kind::List(el) => match &v {
            LuaValue::Table(t) => {
                let mut out = Vec::new();
                for (i, x) in t.clone().sequence_values::<LuaValue>().enumerate() {
                    let x = x.map_err(|e| format!("{path}[{i}]: {e}"))?;
                    out.push(member(s, el, x, &format!("{path}[{i}]"), depth + 1)?);
                }
                Member::List(out)
            }
            _ => return bad("a list", &v),
        },
        Kind::User(_) | Kind::Any => match &v {
            LuaValue::Table(t) => {
                let ty: String = t
                    .get("__type")
                    .map_err(|e| format!("{path}: no __type: {e}"))?;
                Member::Struct(Box::new(convert_at(s, &ty, t, path, depth + 1)?))
            }
            LuaValue::String(x) => Member::Bytes(x.as_bytes().to_vec()),
            LuaValue::Boolean(b) => Member::Bool(*b),
            _ => match number(&v) {
                Some(n) if n.fract() == 0.0 => Member::Int(n as i128),
                Some(n) => Member::Float(n),
                None => return bad("a value", &v),
            },
        },
    })
}
