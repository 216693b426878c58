//! An interpreter of the generator's IR: reads (and writes) any schema's bytes without
//! generating Rust, into an owned tree of dynamic values.
//!
//! [`decode`] takes a checked schema ([`crate::load_checked`]: imports resolved, `_parent` and
//! `_root` already lowered to context params, every expression typed by the check stage,
//! whose trees it evaluates) and the input bytes, and reads the root type
//! the way the generated reader does: the same [`statepack_runtime::io::ByteReader`], the
//! same alignment rules for bit fields, the same Kaitai Struct rules for sized types, open
//! enums and switches without a matching case, the same limits (recursion depth
//! [`statepack_runtime::io::MAX_RECURSION`], the positional-instance budget, every count
//! checked against the bytes left before a list grows). The result is a [`DynStruct`], which
//! implements [`statepack_runtime::reflect::Reflect`] with the members the generated type's
//! dynamic view answers for (`seq` fields, params written in the schema, value instances),
//! so the tools that evaluate expressions on generated types work on it unchanged.
//!
//! [`stream()`] reads the same way without building the tree: each value goes to a [`Sink`]
//! as it is read (the CLI's JSON writer, its tree printer), and only what a later expression
//! can still read is kept (the analysis of `keep.rs`), so `decode --schema` and `inspect
//! --schema` hold what the schema's expressions need, not a tree of the file.
//!
//! [`encode`] writes a tree back (every `seq` field in schema order, from the values given),
//! and [`DynValue`] trees can be built from JSON-like input with [`from_given`].
//!
//! Custom processors (`process: name(args)`) and opaque types (`ks-opaque-types: true`),
//! which the generated Rust takes from the build, are given to the `_with` entry points
//! ([`decode_with`], [`decode_partial_with`], [`stream_with`], [`encode_with`]) in an
//! [`Extensions`] registry: a processor built from the key's evaluated arguments, an opaque
//! type as a Rust type ([`RustOpaque`]) or as another schema ([`SchemaOpaque`]). The entry
//! points without `_with` use none.
//!
//! Errors: a [`statepack_runtime::io::DecodeError`] naming the field path and the byte
//! offset; a construct the interpreter does not cover (or a processor or opaque type the
//! registry does not hold) is refused up front by [`unsupported_with`] (and [`decode`]
//! refuses it with a `Semantic` error naming it), never read into a wrong value.

mod eval;
mod ext;
mod keep;
mod read;
mod stream;
mod write;

pub use ext::{
    from_value, Extensions, OpaqueCodec, ProcArgs, ProcessorFactory, RustOpaque, SchemaOpaque,
};
pub use read::{decode, decode_partial, decode_partial_with, decode_with, stream, stream_with};
pub use stream::{Check, Discard, InstanceErrors, Label, MemberKind, Sink, StreamError};
pub use write::{encode, encode_with, from_given, nonfinite_text, Given};

use statepack_runtime::reflect::{Reflect, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::{Mutex, OnceLock};

use crate::ir::{FieldKind, Process, Schema};

/// One value read by the interpreter: the expression language's value ([`crate::sem::Val`])
/// whose user types are owned tree nodes.
///
/// Integers of every width are `Int`, `f4`/`f8` are `Float` (an `f4` widened exactly), a
/// `b1` bit field is `Bool`, `str`/`strz` are `Str`, raw bytes are `Bytes`, as in
/// [`statepack_runtime::reflect::Value`].
pub type DynValue = crate::sem::Val<Arc<DynStruct>>;

/// One user type as read: its members in schema order (`seq` fields, params written in the
/// schema, value instances), each with the byte range it was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct DynStruct {
    /// The type's schema name (`header`; the root's is `meta.id`).
    pub type_name: &'static str,
    /// Members in schema order: name and value.
    pub members: Vec<(&'static str, DynValue)>,
    /// For each member, the bytes it was read from: `(start, end)` offsets from the start of
    /// the stream the type was read in (a `process`ed or terminated field's type is read in a
    /// stream of its own, starting at 0). `None` for params and instances.
    pub spans: Vec<Option<(u64, u64)>>,
    /// For each member that is a list read from the bytes, the span of each element (as
    /// [`DynStruct::spans`]); empty for other members.
    pub elem_spans: Vec<Vec<(u64, u64)>>,
    /// The exact bits of the members and list elements that start or end inside a byte
    /// (bit fields), in member order then element order. [`DynStruct::spans`] and
    /// [`DynStruct::elem_spans`] give them the bytes they touch; fields on whole bytes are
    /// not listed.
    pub bit_spans: Vec<BitSpan>,
    /// The positional instances that failed to read on their own (their members are
    /// [`DynValue::Null`]; the dynamic view gives their error, as the generated type's
    /// view of a `Lazy` member that fails): name and error, with the path from this type.
    pub errors: Vec<(&'static str, statepack_runtime::io::DecodeError)>,
    /// The bytes of the substream the value was read in (after `size` or `process`), kept
    /// only when the schema reads a positional instance from another value's substream
    /// (`io: X._io`).
    pub(crate) stream: Option<Arc<[u8]>>,
    /// Hidden members: context params (`_parent`/`_root` paths the type uses), which
    /// expressions inside the type read but the dynamic view does not show.
    pub(crate) hidden: Vec<(&'static str, Option<DynValue>)>,
    /// `_sizeof`: the bytes the type took.
    pub(crate) size: u64,
    /// For the root type: one past the furthest byte of the input read, by the `seq` or by
    /// a positional instance (0 for other types).
    pub(crate) extent: u64,
    /// `_io` after the type was read (for `x._io.pos`).
    pub(crate) io: Option<eval::IoState>,
    names: &'static [&'static str],
}

/// Where a bit field lies, to the bit: a member of a [`DynStruct`], or one element of a
/// list member. Bits count from the start of the stream the type was read in (byte offset
/// × 8 plus the bit in the byte, most significant first for `bit-endian: be`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitSpan {
    /// Index of the member in [`DynStruct::members`].
    pub member: usize,
    /// The element of a list member, or `None` for the member itself.
    pub element: Option<usize>,
    /// First bit.
    pub start: u64,
    /// One past the last bit.
    pub end: u64,
}

impl DynStruct {
    /// The [`DynStruct::bit_spans`] of member `i` (the member's own, then its elements'),
    /// found by binary search: the list is in member order, then element order.
    pub fn bit_spans_of(&self, i: usize) -> &[BitSpan] {
        let lo = self.bit_spans.partition_point(|b| b.member < i);
        let hi = self.bit_spans.partition_point(|b| b.member <= i);
        &self.bit_spans[lo..hi]
    }

    /// The bytes the type took in its stream (`_sizeof`), positional instances not counted.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// For the value [`decode`] returns: one past the furthest byte of the input that was
    /// read, by the root's `seq` or by any positional instance (at least [`DynStruct::size`]).
    pub fn read_extent(&self) -> u64 {
        self.extent.max(self.size)
    }

    /// The error of member `name` when it is a positional instance that failed to read
    /// (see [`DynStruct::errors`]).
    pub fn error_of(&self, name: &str) -> Option<&statepack_runtime::io::DecodeError> {
        self.errors.iter().find(|(n, _)| *n == name).map(|(_, e)| e)
    }

    /// The member named `name`, if the type has one.
    pub fn get(&self, name: &str) -> Option<&DynValue> {
        self.members
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }
}

pub(crate) use crate::sem::intern;

/// A list of member names kept for the rest of the process, once per distinct list.
fn intern_names(names: &[&'static str]) -> &'static [&'static str] {
    type Lists = HashMap<Vec<&'static str>, &'static [&'static str]>;
    static LISTS: OnceLock<Mutex<Lists>> = OnceLock::new();
    let mut lists = LISTS
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(l) = lists.get(names) {
        return l;
    }
    let l: &'static [&'static str] = Box::leak(names.to_vec().into_boxed_slice());
    lists.insert(names.to_vec(), l);
    l
}

impl crate::sem::Val<Arc<DynStruct>> {
    /// This value as seen through [`statepack_runtime::reflect`], borrowing from it.
    pub fn to_value(&self) -> Value<'_> {
        match self {
            DynValue::Null => Value::Null,
            DynValue::Bool(b) => Value::Bool(*b),
            DynValue::Int(i) => Value::Int(*i),
            DynValue::Float(f) => Value::Float(*f),
            DynValue::Str(s) => Value::Str(Cow::Borrowed(s)),
            DynValue::Bytes(b) => Value::Bytes(Cow::Borrowed(b)),
            DynValue::Enum(e) => Value::Enum(*e),
            DynValue::List(items) => Value::List(items.iter().map(DynValue::to_value).collect()),
            DynValue::Struct(s) => Value::Struct(s.as_ref()),
            DynValue::Io { pos, size } => {
                Value::Owned(std::rc::Rc::new(statepack_runtime::positional::Stream {
                    pos: *pos,
                    size: *size,
                }))
            }
        }
    }
}

impl Reflect for DynStruct {
    fn schema_type(&self) -> &'static str {
        self.type_name
    }

    fn member(&self, name: &str) -> Option<Value<'_>> {
        if let Some(e) = self.error_of(name) {
            return Some(Value::Error(e.clone()));
        }
        // The hidden member `_io`: the value's stream after its `seq` had been read, as the
        // generated types answer it.
        if let (Some(io), "_io") = (self.io, name) {
            return Some(Value::Owned(std::rc::Rc::new(
                statepack_runtime::positional::Stream {
                    pos: io.pos,
                    size: io.size,
                },
            )));
        }
        self.get(name).map(DynValue::to_value)
    }

    fn member_names(&self) -> &'static [&'static str] {
        self.names
    }
}

/// The first construct of `schema` the interpreter does not cover with no processors nor
/// opaque types registered ([`unsupported_with`] with [`Extensions::none`]), named with its
/// key path (`types.frame.seq[2]: process: my_fx is a processor written in Rust, ...`), or
/// `None` when it covers them all.
pub fn unsupported(schema: &Schema) -> Option<String> {
    unsupported_with(schema, Extensions::none())
}

/// The first construct of `schema` the interpreter does not cover given the processors and
/// opaque types of `ext`, named with its key path: a custom processor or an opaque type that
/// `ext` does not hold (by name), an opaque type given arguments, `-sp-sum-of` on a
/// non-integer field, a `struct` param whose type was not inferred. `None` when it covers
/// them all.
pub fn unsupported_with(schema: &Schema, ext: &Extensions) -> Option<String> {
    let missing: Vec<&str> = schema
        .opaque
        .iter()
        .filter(|n| ext.opaque_type(n).is_none())
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        let names = missing.join(", ");
        return Some(format!(
            "meta.ks-opaque-types: opaque types ({names}) are not registered with the interpreter (a Rust type, or a schema: `--opaque {}=FILE.ksy`)",
            missing[0]
        ));
    }
    for t in &schema.types {
        for f in &t.fields {
            if let Some(Process::Custom { name, .. }) = &f.process {
                if !ext.has_processor(name) {
                    return Some(format!(
                        "{}: process: {name} is a processor written in Rust, and none is registered under that name",
                        f.key_path
                    ));
                }
            }
            if let FieldKind::User { ty, .. } = &f.kind {
                if !f.args.is_empty() && schema.is_opaque(ty) {
                    return Some(format!(
                        "{}: opaque type {} is given arguments, which the interpreter cannot pass",
                        f.key_path,
                        schema.type_name(ty)
                    ));
                }
            }
            if f.sum_of.is_some() && !matches!(f.kind, FieldKind::Int { .. }) {
                return Some(format!("{}: -sp-sum-of on a non-integer field", f.key_path));
            }
        }
        for p in &t.params {
            if matches!(p.kind, crate::ir::ParamKind::Struct) {
                return Some(format!(
                    "{}: param `{}` of type `struct` whose type was not inferred",
                    t.key_path, p.id
                ));
            }
        }
    }
    None
}

/// Compares two values seen through [`Reflect`] member by member, recursively: the same
/// schema type, the same member names in the same order, and equal values (floats by their
/// bits, so NaN equals NaN; enums by name and integer). Errors: the path of the first
/// difference and both values (`frames[3].x: 5 vs 6`).
pub fn compare(a: &dyn Reflect, b: &dyn Reflect) -> Result<(), String> {
    compare_struct(a, b, "", 0)
}

fn compare_struct(
    a: &dyn Reflect,
    b: &dyn Reflect,
    path: &str,
    depth: usize,
) -> Result<(), String> {
    let at = if path.is_empty() { "<root>" } else { path };
    if depth > 512 {
        return Err(format!("{at}: nested deeper than 512 levels"));
    }
    if a.schema_type() != b.schema_type() {
        return Err(format!(
            "{at}: type {} vs {}",
            a.schema_type(),
            b.schema_type()
        ));
    }
    if a.member_names() != b.member_names() {
        return Err(format!(
            "{at}: members [{}] vs [{}]",
            a.member_names().join(", "),
            b.member_names().join(", ")
        ));
    }
    for name in a.member_names() {
        let p = if path.is_empty() {
            (*name).to_owned()
        } else {
            format!("{path}.{name}")
        };
        match (a.member(name), b.member(name)) {
            (Some(x), Some(y)) => compare_value(&x, &y, &p, depth)?,
            (x, y) => return Err(format!("{p}: present {} vs {}", x.is_some(), y.is_some())),
        }
    }
    Ok(())
}

fn compare_value(a: &Value<'_>, b: &Value<'_>, path: &str, depth: usize) -> Result<(), String> {
    let same = match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan())
        }
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::Enum(x), Value::Enum(y)) => x == y,
        // Two instances that fail to read: the same when their errors are.
        (Value::Error(x), Value::Error(y)) => x.kind.to_string() == y.kind.to_string(),
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Err(format!("{path}: {} element(s) vs {}", x.len(), y.len()));
            }
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                compare_value(p, q, &format!("{path}[{i}]"), depth + 1)?;
            }
            true
        }
        (x, y) => match (x.as_struct(), y.as_struct()) {
            (Some(p), Some(q)) => return compare_struct(p, q, path, depth + 1),
            _ => false,
        },
    };
    if same {
        Ok(())
    } else {
        Err(format!("{path}: {} vs {}", short(a), short(b)))
    }
}

fn short(v: &Value<'_>) -> String {
    let s = match v {
        Value::Struct(_) | Value::Owned(_) => format!(
            "<{}>",
            v.as_struct().map(|s| s.schema_type()).unwrap_or("?")
        ),
        other => format!("{other:?}"),
    };
    if s.len() > 120 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(117).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}
