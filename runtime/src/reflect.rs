//! A dynamic view of decoded values: any generated type can be read member by member, by its
//! schema name, without knowing its Rust type.
//!
//! Tools that work on every schema use it: the conformance runner evaluates Kaitai Struct
//! expressions (`header.entries[1].filename`) over it, and `inspect` can walk it. Every
//! generated type implements [`Reflect`]; its [`Reflect::member`] answers for stored fields,
//! for the counts, lengths and sums the writer derives (they are not struct members, but they
//! are in the bytes), and for instances.
//!
//! The view is read-only and borrows from the value it looks at; building it allocates only
//! for lists (one [`Value`] per element) and for members computed on demand.

use std::borrow::Cow;
use std::rc::Rc;

/// One value seen through [`Reflect`].
///
/// Integers of every width (`u1`..`u8`, `s1`..`s8`, bit fields `b1`..`b64`) are `Int`;
/// `f4`/`f8` are `Float`; a `b1` bit field is `Bool` (Kaitai Struct's rule); `str`/`strz` are
/// `Str`; raw byte fields are `Bytes`.
#[derive(Debug, Clone)]
pub enum Value<'a> {
    /// A member that holds nothing: a field whose `if` was false, a switch with no matching
    /// case and no `_` case.
    Null,
    /// A boolean (a `b1` field, a comparison instance).
    Bool(bool),
    /// An integer of any width.
    Int(i128),
    /// A floating-point number.
    Float(f64),
    /// Decoded text.
    Str(Cow<'a, str>),
    /// Raw bytes.
    Bytes(Cow<'a, [u8]>),
    /// A value of an enum.
    Enum(EnumValue),
    /// A repeated field or a list-valued instance, in stream order.
    List(Vec<Value<'a>>),
    /// A user type stored in (or borrowed from) the value looked at.
    Struct(&'a dyn Reflect),
    /// A user type computed on demand (for example a parsed instance that is not stored).
    Owned(Rc<dyn Reflect + 'a>),
    /// A positional instance read on first use ([`crate::lazy::Lazy`]) whose read failed:
    /// its error, naming the instance's path and the byte offset.
    Error(crate::io::DecodeError),
}

/// A value of an enum, by schema names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnumValue {
    /// The enum's schema name (`animal`).
    pub enum_name: &'static str,
    /// The value's schema name (`cat`), or `None` for an integer that the enum does not list
    /// (possible only where unknown values are allowed).
    pub name: Option<&'static str>,
    /// The stored integer.
    pub value: i128,
}

/// Read access to a generated type by member name.
///
/// Implemented by the generator for every user type of every schema.
pub trait Reflect: core::fmt::Debug {
    /// The type's schema name (`header`; the root type's is `meta.id`).
    fn schema_type(&self) -> &'static str;

    /// The member named `name` (schema spelling, lower_snake_case): a `seq` field, a derived
    /// count/length/sum, or an instance. `None` when the type has no member of that name;
    /// `Some(Value::Null)` when the member exists but holds nothing.
    fn member(&self, name: &str) -> Option<Value<'_>>;

    /// The names [`Reflect::member`] answers for, in schema order (`seq` first, then
    /// instances).
    fn member_names(&self) -> &'static [&'static str];
}

impl<'a> Value<'a> {
    /// The user type behind `Struct` or `Owned`, if this is one.
    pub fn as_struct(&self) -> Option<&dyn Reflect> {
        match self {
            Value::Struct(s) => Some(*s),
            Value::Owned(b) => Some(b.as_ref()),
            _ => None,
        }
    }

    /// Wraps a list of reflectable elements.
    pub fn list_of<T: Reflect>(items: &'a [T]) -> Value<'a> {
        Value::List(
            items
                .iter()
                .map(|v| Value::Struct(v as &dyn Reflect))
                .collect(),
        )
    }
}

/// Conversion of a stored member into a [`Value`]; generated `member` bodies call it so that
/// they stay one line per member.
pub trait ToValue {
    /// This value as seen through [`Reflect`].
    fn to_value(&self) -> Value<'_>;
}

/// A list member (a repeated field, a list param): each element's [`Value`], in order.
pub fn list<T: ToValue>(items: &[T]) -> Value<'_> {
    Value::List(items.iter().map(ToValue::to_value).collect())
}

/// A list member under an `if`: [`list`] of it, or [`Value::Null`] when it is absent.
pub fn opt_list<'a, T: ToValue + 'a, L: AsRef<[T]>>(items: &'a Option<L>) -> Value<'a> {
    items.as_ref().map_or(Value::Null, |l| list(l.as_ref()))
}

/// A member of fixed bytes (a `contents` field).
pub fn fixed_bytes(bytes: &'static [u8]) -> Value<'static> {
    Value::Bytes(Cow::Borrowed(bytes))
}

/// Implements [`ToValue`] for a generated user type (which implements [`Reflect`]): the
/// value is [`Value::Struct`] of itself.
#[macro_export]
macro_rules! struct_to_value {
    ($name:ident) => {
        impl $crate::reflect::ToValue for $name {
            fn to_value(&self) -> $crate::reflect::Value<'_> {
                $crate::reflect::Value::Struct(self)
            }
        }
    };
}

macro_rules! int_to_value {
    ($($t:ty),*) => {$(
        impl ToValue for $t {
            #[inline]
            fn to_value(&self) -> Value<'_> {
                Value::Int(*self as i128)
            }
        }
    )*};
}
int_to_value!(u8, u16, u32, u64, i8, i16, i32, i64, i128, usize);

impl ToValue for bool {
    fn to_value(&self) -> Value<'_> {
        Value::Bool(*self)
    }
}
impl ToValue for f32 {
    fn to_value(&self) -> Value<'_> {
        Value::Float(f64::from(*self))
    }
}
impl ToValue for f64 {
    fn to_value(&self) -> Value<'_> {
        Value::Float(*self)
    }
}
impl ToValue for String {
    fn to_value(&self) -> Value<'_> {
        Value::Str(Cow::Borrowed(self.as_str()))
    }
}
impl ToValue for Vec<u8> {
    fn to_value(&self) -> Value<'_> {
        Value::Bytes(Cow::Borrowed(self.as_slice()))
    }
}
impl<T: ToValue> ToValue for Option<T> {
    fn to_value(&self) -> Value<'_> {
        match self {
            Some(v) => v.to_value(),
            None => Value::Null,
        }
    }
}
impl<T: ToValue + ?Sized> ToValue for Box<T> {
    fn to_value(&self) -> Value<'_> {
        (**self).to_value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Point {
        x: u16,
        name: String,
        tags: Option<Vec<u8>>,
    }
    impl Reflect for Point {
        fn schema_type(&self) -> &'static str {
            "point"
        }
        fn member(&self, name: &str) -> Option<Value<'_>> {
            Some(match name {
                "x" => self.x.to_value(),
                "name" => self.name.to_value(),
                "tags" => self.tags.to_value(),
                _ => return None,
            })
        }
        fn member_names(&self) -> &'static [&'static str] {
            &["x", "name", "tags"]
        }
    }

    #[test]
    fn members_read_by_name() {
        let p = Point {
            x: 7,
            name: "a".into(),
            tags: None,
        };
        assert!(matches!(p.member("x"), Some(Value::Int(7))));
        assert!(matches!(p.member("name"), Some(Value::Str(s)) if s == "a"));
        assert!(matches!(p.member("tags"), Some(Value::Null)));
        assert!(p.member("y").is_none());
        let list = [Point {
            x: 1,
            name: String::new(),
            tags: Some(vec![1]),
        }];
        let v = Value::list_of(&list);
        let Value::List(items) = v else {
            panic!("a list")
        };
        let inner = items[0].as_struct().expect("a struct");
        assert_eq!(inner.schema_type(), "point");
        assert!(matches!(inner.member("tags"), Some(Value::Bytes(b)) if b.as_ref() == [1]));
    }
}
