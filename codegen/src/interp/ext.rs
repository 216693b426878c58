//! What the interpreter is given beside the schema: the custom processors
//! (`process: name(args)`) and opaque types (`meta.ks-opaque-types: true`) that the
//! generated Rust takes from the build (`Options::processors`, `Options::opaque_types`).
//!
//! An [`Extensions`] registry maps schema names to them:
//!
//! - a **processor** by the name written in the schema (`my_fx`, `nested.deeply.my_fx`): a
//!   function that builds a [`CustomProcessor`] from the key's arguments, evaluated where the
//!   field is read (or written), as the generated reader passes them to `MyFx::new(..)`;
//! - an **opaque type** by its type name (`hello_world`): an [`OpaqueCodec`], either a Rust
//!   type implementing [`OpaqueType`] and [`ToValue`] ([`RustOpaque`], the type the generated
//!   code would use) or another `.ksy` schema read and written by the interpreter itself
//!   ([`SchemaOpaque`], what the command line can be given).
//!
//! A schema naming a processor or an opaque type the registry does not hold is refused by
//! name before anything is read ([`super::unsupported_with`]). A processor's output counts
//! against the file's processed-bytes budget like `zlib`'s
//! ([`statepack_runtime::io::ByteReader::charge_processed`]), and an opaque type read from a
//! substream (a `size` or `process` on the field) shares it too.

use super::write::{write_root, Given};
use super::{intern_names, DynStruct, DynValue};
use crate::typed::Checked;
use statepack_runtime::io::{ByteReader, ByteWriter, DecodeError, DecodeErrorKind};
use statepack_runtime::process::{CustomProcessor, OpaqueType};
use statepack_runtime::reflect::{Reflect, ToValue, Value};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

/// Builds the processor of one `process: name(args)` key from its arguments.
pub type ProcessorFactory =
    dyn Fn(&ProcArgs<'_>) -> Result<Box<dyn CustomProcessor>, String> + Send + Sync;

/// The custom processors and opaque types the interpreter may use, by schema name. Empty by
/// default ([`Extensions::none`]): the interpreter then refuses every schema that names one.
#[derive(Clone, Default)]
pub struct Extensions {
    processors: BTreeMap<String, Arc<ProcessorFactory>>,
    opaque: BTreeMap<String, Arc<dyn OpaqueCodec>>,
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("processors", &self.processors.keys().collect::<Vec<_>>())
            .field("opaque", &self.opaque.keys().collect::<Vec<_>>())
            .finish()
    }
}

static NONE: Extensions = Extensions {
    processors: BTreeMap::new(),
    opaque: BTreeMap::new(),
};

impl Extensions {
    /// The empty registry (what [`super::decode`] and the other entry points without
    /// `_with` use).
    pub fn none() -> &'static Extensions {
        &NONE
    }

    /// Registers processor `name` (as written after `process:`, without its arguments):
    /// `make` gets the key's arguments, evaluated, and gives the processor, or a message
    /// saying why the arguments do not fit (the reader reports it as a `Semantic` error with
    /// the field's path and offset). A name registered again replaces the first.
    pub fn processor<F>(mut self, name: &str, make: F) -> Self
    where
        F: Fn(&ProcArgs<'_>) -> Result<Box<dyn CustomProcessor>, String> + Send + Sync + 'static,
    {
        self.processors.insert(name.to_owned(), Arc::new(make));
        self
    }

    /// Registers opaque type `name` (the type name a field of a `ks-opaque-types: true`
    /// schema uses). A name registered again replaces the first.
    pub fn opaque(mut self, name: &str, codec: impl OpaqueCodec + 'static) -> Self {
        self.opaque.insert(name.to_owned(), Arc::new(codec));
        self
    }

    /// Whether processor `name` is registered.
    pub fn has_processor(&self, name: &str) -> bool {
        self.processors.contains_key(name)
    }

    /// The opaque type registered as `name`.
    pub fn opaque_type(&self, name: &str) -> Option<&dyn OpaqueCodec> {
        self.opaque.get(name).map(|c| c.as_ref())
    }

    /// The processor of `process: name(args)` built from `args` (evaluated). Errors: the
    /// name is not registered, or its factory refuses the arguments.
    pub fn make_processor(
        &self,
        name: &str,
        args: &[DynValue],
    ) -> Result<Box<dyn CustomProcessor>, String> {
        let make = self.processors.get(name).ok_or_else(|| {
            format!("process: {name} is a processor written in Rust, and none is registered under that name")
        })?;
        make(&ProcArgs { name, values: args }).map_err(|m| format!("process: {name}: {m}"))
    }
}

/// The evaluated arguments of one `process: name(args)` key, in order, with typed getters
/// whose errors name the processor and the argument.
#[derive(Debug, Clone, Copy)]
pub struct ProcArgs<'a> {
    /// The processor's name as written in the schema.
    pub name: &'a str,
    /// The arguments' values: integers as `Int`, conditions as `Bool`, floats as `Float`,
    /// strings as `Str`, byte arrays (`[0x20, 0x30]`, a byte field) as `Bytes`.
    pub values: &'a [DynValue],
}

impl<'a> ProcArgs<'a> {
    /// The number of arguments given.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no argument is given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Errors unless exactly `n` arguments are given.
    pub fn expect_len(&self, n: usize) -> Result<(), String> {
        if self.values.len() == n {
            Ok(())
        } else {
            Err(format!(
                "takes {n} argument(s), {} given",
                self.values.len()
            ))
        }
    }

    fn at(&self, i: usize) -> Result<&'a DynValue, String> {
        self.values
            .get(i)
            .ok_or_else(|| format!("argument {} is missing ({} given)", i + 1, self.len()))
    }

    fn wrong<T>(&self, i: usize, want: &str) -> Result<T, String> {
        let got = self.values.get(i).map_or("nothing", |v| v.kind());
        Err(format!("argument {} is {got}, not {want}", i + 1))
    }

    /// Argument `i` (from 0) as an integer.
    pub fn int(&self, i: usize) -> Result<i128, String> {
        match self.at(i)? {
            DynValue::Int(v) => Ok(*v),
            DynValue::Enum(e) => Ok(e.value),
            _ => self.wrong(i, "an integer"),
        }
    }

    /// Argument `i` as a boolean.
    pub fn bool(&self, i: usize) -> Result<bool, String> {
        match self.at(i)? {
            DynValue::Bool(v) => Ok(*v),
            _ => self.wrong(i, "a boolean"),
        }
    }

    /// Argument `i` as a float (an integer is converted).
    pub fn float(&self, i: usize) -> Result<f64, String> {
        match self.at(i)? {
            DynValue::Float(v) => Ok(*v),
            DynValue::Int(v) => Ok(*v as f64),
            _ => self.wrong(i, "a number"),
        }
    }

    /// Argument `i` as a string.
    pub fn str(&self, i: usize) -> Result<&'a str, String> {
        match self.at(i)? {
            DynValue::Str(v) => Ok(v),
            _ => self.wrong(i, "a string"),
        }
    }

    /// Argument `i` as a byte array.
    pub fn bytes(&self, i: usize) -> Result<&'a [u8], String> {
        match self.at(i)? {
            DynValue::Bytes(v) => Ok(v),
            _ => self.wrong(i, "a byte array"),
        }
    }
}

/// An opaque type as the interpreter reads and writes it.
pub trait OpaqueCodec: Send + Sync {
    /// The fewest bytes a value takes (bounds a list's count before it grows); 0 when
    /// unknown.
    fn min_len(&self) -> usize {
        0
    }

    /// Reads one value at `r`'s position (for a sized or processed field, `r` holds the
    /// field's bytes). `ext` is the registry the enclosing read uses. Errors: a
    /// [`DecodeError`] at the offset where the bytes are wrong (the caller adds the field's
    /// path).
    fn read(&self, r: &mut ByteReader<'_>, ext: &Extensions) -> Result<DynStruct, DecodeError>;

    /// Writes one value given as `encode --schema` takes it (an object of its fields).
    /// `path` names the field for messages. Gives the value written. Errors: a message
    /// naming the path.
    fn write(
        &self,
        w: &mut ByteWriter,
        given: &Given,
        path: &str,
        ext: &Extensions,
    ) -> Result<DynStruct, String>;
}

/// An opaque type given as another `.ksy` schema, read and written by the interpreter (its
/// root type, which must take no params). The value is that schema's root type, named by its
/// `meta.id`, as the generated module of that schema would give it.
pub struct SchemaOpaque {
    schema: Arc<Checked>,
    min_len: usize,
}

impl SchemaOpaque {
    /// The opaque type read as `schema`'s root type. Errors: a root type that takes params.
    pub fn new(schema: Checked) -> Result<Self, String> {
        let root = schema.types.first().ok_or("the schema has no types")?;
        if root.params.iter().any(|p| p.context.is_none()) {
            return Err(format!(
                "the root type `{}` takes params, which an opaque type cannot be given",
                root.name
            ));
        }
        let min_len = crate::sizes::min_lens(&schema.schema)
            .0
            .get(&root.id)
            .copied()
            .unwrap_or(0);
        Ok(Self {
            schema: Arc::new(schema),
            min_len,
        })
    }
}

impl OpaqueCodec for SchemaOpaque {
    fn min_len(&self) -> usize {
        self.min_len
    }

    fn read(&self, r: &mut ByteReader<'_>, ext: &Extensions) -> Result<DynStruct, DecodeError> {
        // Each schema read inside another counts as one level of nesting, so schemas that
        // use each other as opaque types end at the recursion limit.
        r.enter_recursion()?;
        let v = super::read::read_root_in(&self.schema, r, ext);
        r.leave_recursion();
        v
    }

    fn write(
        &self,
        w: &mut ByteWriter,
        given: &Given,
        path: &str,
        ext: &Extensions,
    ) -> Result<DynStruct, String> {
        write_root(&self.schema, w, given, path, ext)
    }
}

/// A value built from what `encode --schema` is given.
type FromGiven<T> = dyn Fn(&Given) -> Result<T, String> + Send + Sync;

/// An opaque type that is a Rust type (the one the generated code would use): read with
/// [`OpaqueType::read_from`] and shown through [`ToValue`]. To write it, give the function
/// that builds a value from what `encode --schema` is given ([`RustOpaque::writing`]); without
/// it, writing a value of the type is refused naming it.
pub struct RustOpaque<T> {
    name: String,
    from_given: Option<Arc<FromGiven<T>>>,
    _t: PhantomData<fn() -> T>,
}

impl<T> RustOpaque<T> {
    /// The adapter for `T`; `name` is the opaque type's schema name, used in messages.
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            from_given: None,
            _t: PhantomData,
        }
    }

    /// Writes a value of the type by building it with `make` from the given value (then
    /// [`OpaqueType::write_to`]).
    pub fn writing(
        mut self,
        make: impl Fn(&Given) -> Result<T, String> + Send + Sync + 'static,
    ) -> Self {
        self.from_given = Some(Arc::new(make));
        self
    }
}

impl<T: OpaqueType + ToValue> OpaqueCodec for RustOpaque<T> {
    fn min_len(&self) -> usize {
        T::MIN_LEN
    }

    fn read(&self, r: &mut ByteReader<'_>, _ext: &Extensions) -> Result<DynStruct, DecodeError> {
        let start = r.offset();
        let v = T::read_from(r)?;
        let size = r.offset().saturating_sub(start);
        let mut s = match from_value(&v.to_value(), 0) {
            Some(DynValue::Struct(s)) => Arc::try_unwrap(s).unwrap_or_else(|s| (*s).clone()),
            _ => {
                return Err(DecodeError::new(
                    start,
                    DecodeErrorKind::Semantic(format!(
                        "opaque type {}: its value is not a user type",
                        self.name
                    )),
                ))
            }
        };
        s.size = size;
        Ok(s)
    }

    fn write(
        &self,
        w: &mut ByteWriter,
        given: &Given,
        path: &str,
        _ext: &Extensions,
    ) -> Result<DynStruct, String> {
        let make = self.from_given.as_ref().ok_or_else(|| {
            format!(
                "{path}: opaque type {} is registered for reading only (no writer given)",
                self.name
            )
        })?;
        let v = make(given).map_err(|m| format!("{path}: {m}"))?;
        v.write_to(w).map_err(|e| format!("{path}: {e}"))?;
        let shown = from_value(&v.to_value(), 0);
        match shown {
            Some(DynValue::Struct(s)) => Ok(Arc::try_unwrap(s).unwrap_or_else(|s| (*s).clone())),
            _ => Err(format!(
                "{path}: opaque type {}: its value is not a user type",
                self.name
            )),
        }
    }
}

/// The deepest value [`from_value`] copies.
const MAX_DEPTH: usize = 512;

/// A value seen through [`Reflect`] as the interpreter's own ([`DynValue`]): user types are
/// copied member by member (no spans: the bytes are the Rust type's own). `None` past
/// [`MAX_DEPTH`] levels.
pub fn from_value(v: &Value<'_>, depth: usize) -> Option<DynValue> {
    if depth > MAX_DEPTH {
        return None;
    }
    Some(match v {
        Value::Null | Value::Error(_) => DynValue::Null,
        Value::Bool(b) => DynValue::Bool(*b),
        Value::Int(i) => DynValue::Int(*i),
        Value::Float(f) => DynValue::Float(*f),
        Value::Str(s) => DynValue::Str(s.to_string()),
        Value::Bytes(b) => DynValue::Bytes(b.to_vec()),
        Value::Enum(e) => DynValue::Enum(*e),
        Value::List(items) => DynValue::List(
            items
                .iter()
                .map(|x| from_value(x, depth + 1))
                .collect::<Option<_>>()?,
        ),
        Value::Struct(_) | Value::Owned(_) => match v.as_struct() {
            Some(s) => DynValue::Struct(Arc::new(struct_from(s, depth)?)),
            None => DynValue::Null,
        },
    })
}

fn struct_from(s: &dyn Reflect, depth: usize) -> Option<DynStruct> {
    let names = s.member_names();
    let mut members = Vec::with_capacity(names.len());
    for &n in names {
        let v = s.member(n).unwrap_or(Value::Null);
        members.push((n, from_value(&v, depth + 1)?));
    }
    Some(DynStruct {
        type_name: s.schema_type(),
        spans: vec![None; members.len()],
        elem_spans: vec![Vec::new(); members.len()],
        members,
        bit_spans: Vec::new(),
        errors: Vec::new(),
        stream: None,
        hidden: Vec::new(),
        size: 0,
        extent: 0,
        io: None,
        names: intern_names(names),
    })
}
