//! The value an expression evaluates to, shared by every evaluating backend.

use statepack_runtime::reflect::EnumValue;
use std::fmt;

/// A user-type value as a backend holds it: the interpreter's owned tree node
/// (`Arc<DynStruct>`), or a generated value seen through
/// [`statepack_runtime::reflect::Reflect`].
pub trait Handle: Clone + fmt::Debug {
    /// The type's schema name (`header`; a root type's is its `meta.id`).
    fn type_name(&self) -> &str;

    /// Whether two user-type values are equal (`a == b` of two user types).
    fn same(&self, other: &Self) -> bool;
}

/// One value of the expression language.
///
/// Integers of every width are `Int` (128 bits, so every `u8`/`s8` field and every sum of two
/// of them is exact), `f4`/`f8` are `Float` (an `f4` widened exactly), `b1` is `Bool`,
/// `str`/`strz` are `Str`, raw bytes are `Bytes`. `H` is the backend's user-type value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val<H> {
    /// Nothing: a field whose `if` was false, a switch that selected no case.
    Null,
    /// A boolean.
    Bool(bool),
    /// An integer of any width.
    Int(i128),
    /// A float.
    Float(f64),
    /// Decoded text.
    Str(String),
    /// Raw bytes.
    Bytes(Vec<u8>),
    /// A value of an enum (schema names).
    Enum(EnumValue),
    /// A repeated field, a list-valued param or instance.
    List(Vec<Val<H>>),
    /// A user type.
    Struct(H),
    /// A stream (`_io`, `value._io`, an `io` param): its position and size in bytes, what
    /// its members `pos`, `size` and `eof` give.
    Io {
        /// The position, in bytes from the stream's start.
        pos: i128,
        /// The size in bytes.
        size: i128,
    },
}

impl<H> Val<H> {
    /// A short name of the value's kind, for messages (`an integer`, `a byte array`).
    pub fn kind(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Bool(_) => "a boolean",
            Val::Int(_) => "an integer",
            Val::Float(_) => "a float",
            Val::Str(_) => "a string",
            Val::Bytes(_) => "a byte array",
            Val::Enum(_) => "an enum value",
            Val::List(_) => "a list",
            Val::Struct(_) => "a user type",
            Val::Io { .. } => "a stream",
        }
    }
}

impl<H: Handle> fmt::Display for Val<H> {
    /// The value as a person reads it in a message: numbers in decimal, strings quoted,
    /// bytes in hex, enums as `enum::name` (or `enum(7)` for a value the enum does not
    /// list), user types as `<type>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Null => f.write_str("null"),
            Val::Bool(b) => write!(f, "{b}"),
            Val::Int(v) => write!(f, "{v}"),
            Val::Float(v) => write!(f, "{v:?}"),
            Val::Str(s) => write!(f, "{s:?}"),
            Val::Bytes(b) => {
                f.write_str("[")?;
                for (i, x) in b.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x:#04x}")?;
                }
                f.write_str("]")
            }
            Val::Enum(e) => match e.name {
                Some(n) => write!(f, "{}::{n}", e.enum_name),
                None => write!(f, "{}({})", e.enum_name, e.value),
            },
            Val::List(items) => {
                f.write_str("[")?;
                for (i, x) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
            Val::Struct(s) => write!(f, "<{}>", s.type_name()),
            Val::Io { pos, size } => write!(f, "<io pos={pos} size={size}>"),
        }
    }
}
