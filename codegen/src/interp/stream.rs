//! The interpreter as a streaming reader: every value is handed to a [`Sink`] as it is read,
//! and only what a later expression can reach is kept ([`super::keep`]), so memory follows
//! what the schema's expressions need, not the size of the file.
//!
//! The events come in reading order, which is the order `decode --schema` prints: for each
//! user type, [`Sink::open_struct`], then each `seq` field (positional instances among
//! them, where the schema lists them) as a [`Label::Member`] key followed by its value, then
//! the params written in the schema and the value instances ([`Sink::value`], whole values
//! computed once the `seq` is read), then the caller's [`Sink::close_struct`]. A value is
//! [`Sink::leaf`] (a number, a string, bytes, an enum, null), a struct (`open_struct` …
//! `close_struct`) or a list ([`Sink::open_list`], each element as a [`Label::Element`] key
//! and its value, [`Sink::close_list`]).

use super::{DynStruct, DynValue};
use statepack_runtime::io::DecodeError;
use std::io;

/// What the next value is: a member of the struct being read, or an element of the list
/// being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// A member, by name, and what kind of member it is.
    Member(&'static str, MemberKind),
    /// The element at this index of the open list.
    Element(usize),
}

/// The kinds of members of a user type, as [`super::DynStruct::members`] orders them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberKind {
    /// A `seq` field or a positional instance, read from the bytes.
    Field,
    /// A param written in the schema (an input of the type, not read).
    Param,
    /// A value instance, computed from the other members.
    Instance,
}

/// Where the values of a streaming read go ([`stream`]). Every method may fail with the
/// output's error, which ends the read ([`StreamError::Output`]).
pub trait Sink {
    /// The next value's label.
    fn key(&mut self, label: Label) -> io::Result<()>;
    /// A user type starts: its members follow.
    fn open_struct(&mut self, type_name: &'static str) -> io::Result<()>;
    /// The user type opened last ends. `span`: the bytes the value was read from (for a
    /// member, the member's bytes: a sized type's padding included, a processed type's
    /// stored bytes in the enclosing stream); `None` for the root.
    fn close_struct(&mut self, span: Option<(u64, u64)>) -> io::Result<()>;
    /// A list starts: its elements follow, each after a [`Label::Element`] key.
    fn open_list(&mut self) -> io::Result<()>;
    /// The list opened last ends: the bytes it was read from and its number of elements.
    fn close_list(&mut self, span: (u64, u64), count: usize) -> io::Result<()>;
    /// A value read from the bytes that is neither a user type nor a list: where it was read
    /// (`None` for a field whose `if` was false), and its exact bits when it starts or ends
    /// inside a byte (see [`super::BitSpan`]).
    fn leaf(
        &mut self,
        v: &DynValue,
        span: Option<(u64, u64)>,
        bits: Option<(u64, u64)>,
    ) -> io::Result<()>;
    /// A whole value not read from the bytes at this place: a param or a value instance
    /// (which may be a user type or a list, shown as a tree).
    fn value(&mut self, v: &DynValue) -> io::Result<()>;
}

/// Why a streaming read stopped.
#[derive(Debug)]
pub enum StreamError {
    /// The bytes do not read with the schema: the error [`super::decode`] gives.
    Decode(DecodeError),
    /// The sink failed.
    Output(io::Error),
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Decode(e) => write!(f, "{e}"),
            StreamError::Output(e) => write!(f, "cannot write the output: {e}"),
        }
    }
}

impl std::error::Error for StreamError {}

/// Reads the root type of `schema` from `bytes` as [`super::decode`] does (same values, same
/// errors), handing every value to `sink` as it is read instead of building the tree.
///
/// Returns the root as kept: only the members some expression can still read
/// ([`super::keep`]), with [`DynStruct::read_extent`] (one past the furthest byte read) as
/// `decode` gives it. Memory: the values kept, the value being read (a byte array or a
/// processed field's bytes whole, a list's elements one at a time when nothing keeps the
/// list), and the sink's own.
///
/// Errors: [`StreamError::Decode`] with the field path and byte offset (the sink has then
/// seen the values read before the error), [`StreamError::Output`] when the sink fails.
pub fn stream(
    schema: &crate::ir::Schema,
    bytes: &[u8],
    sink: &mut (dyn Sink + Send),
) -> Result<DynStruct, StreamError> {
    super::read::run_streaming(schema, bytes, sink)
}
