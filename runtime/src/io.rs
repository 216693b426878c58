//! Byte-level reading and writing for generated raw types, with errors that name the
//! field path (`recordings[2].frames[57].rot_delta`) and the byte offset.
//!
//! The generated code (see `docs/schema-language.md`) reads through [`ByteReader`], a
//! bounds-checked cursor over a byte slice, and writes through [`ByteWriter`], a growable
//! buffer. Every read is fail-closed: asking for more bytes than remain returns
//! [`DecodeErrorKind::UnexpectedEof`]; nothing reads past the end and nothing panics.
//! Before a list is allocated, [`ByteReader::check_count`] checks the stated element count
//! against the bytes left, so a hostile count can never make a reader reserve more memory
//! than the input justifies.
//!
//! Errors are built at the failing leaf with its byte offset, then each enclosing field and
//! list index is added as the error travels up ([`DecodeError::in_field`],
//! [`DecodeError::in_index`]); the cost is paid only on the error path.

use std::fmt;

/// One step of a field path: a named field or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathSeg {
    /// A named field of a schema type (`frames`).
    Field(&'static str),
    /// An element of a list field (`[57]`).
    Index(usize),
}

/// A field path such as `recordings[2].frames[57].rot_delta`, from the outermost type down.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath {
    /// Segments stored innermost first (errors are built from the leaf upwards).
    rev: Vec<PathSeg>,
}

impl FieldPath {
    /// An empty path: the error belongs to the top-level value itself.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds a path from segments given outermost first.
    pub fn from_segments(segs: impl IntoIterator<Item = PathSeg>) -> Self {
        let mut rev: Vec<PathSeg> = segs.into_iter().collect();
        rev.reverse();
        Self { rev }
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> impl Iterator<Item = &PathSeg> {
        self.rev.iter().rev()
    }

    /// True when the path has no segments.
    pub fn is_empty(&self) -> bool {
        self.rev.is_empty()
    }

    fn push_outer(&mut self, seg: PathSeg) {
        self.rev.push(seg);
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rev.is_empty() {
            return f.write_str("<root>");
        }
        let mut first = true;
        for seg in self.segments() {
            match seg {
                PathSeg::Field(name) => {
                    if !first {
                        f.write_str(".")?;
                    }
                    f.write_str(name)?;
                }
                PathSeg::Index(i) => write!(f, "[{i}]")?,
            }
            first = false;
        }
        Ok(())
    }
}

/// What went wrong while decoding, without the where (see [`DecodeError`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeErrorKind {
    /// The input ended inside a field.
    #[error("input ends early: {needed} byte(s) needed, {available} left")]
    UnexpectedEof {
        /// Bytes the field needs.
        needed: usize,
        /// Bytes left in the input (or in the enclosing sized field).
        available: usize,
    },
    /// Fixed contents (magic, version header) did not match.
    #[error("expected {expected}, found {found}")]
    BadContents {
        /// The schema's contents, printed as text when printable, else as hex.
        expected: String,
        /// The bytes found, printed the same way.
        found: String,
    },
    /// A count field promises more elements than the remaining bytes can hold.
    #[error("count {count} needs at least {needed} byte(s) but only {available} left")]
    CountTooLarge {
        /// The count as stored.
        count: u64,
        /// `count` times the smallest encoded element size.
        needed: u128,
        /// Bytes left in the input.
        available: usize,
    },
    /// A string field is not valid in its declared encoding.
    #[error("not valid {encoding}: {detail}")]
    BadString {
        /// The schema's encoding (`UTF-8`, `ASCII`).
        encoding: &'static str,
        /// Where the first bad byte is.
        detail: String,
    },
    /// An integer has no entry in its (closed) enum.
    #[error("value {value} is not a known {enum_name}")]
    UnknownEnum {
        /// The enum's schema name.
        enum_name: &'static str,
        /// The value found.
        value: i128,
    },
    /// A `valid` rule of the schema failed.
    #[error("value {value} is not valid: {rule}")]
    NotValid {
        /// The value found, printed.
        value: String,
        /// The rule, as written in the schema.
        rule: &'static str,
    },
    /// A sized field was not used up by its type.
    #[error("{unused} byte(s) left unread at the end of a sized field")]
    UnusedBytes {
        /// Bytes left over.
        unused: usize,
    },
    /// Bytes follow the end of the top-level type.
    #[error("{count} trailing byte(s) after the end of the data")]
    TrailingBytes {
        /// How many bytes follow.
        count: usize,
    },
    /// A format rule that the layout alone cannot state (checked by the format module).
    #[error("{0}")]
    Semantic(String),
}

/// A decode failure: what ([`DecodeErrorKind`]), where in the data ([`FieldPath`]) and at which
/// byte offset from the start of the input.
///
/// `{:?}` prints the same message as `{}` (so a `main` returning `Result<_, Box<dyn Error>>`
/// shows `Error: path (byte offset N): what`); `{:#?}` prints the members one by one.
#[derive(Clone, PartialEq)]
pub struct DecodeError {
    /// The field the error belongs to, outermost first.
    pub path: FieldPath,
    /// Byte offset from the start of the input where the failing field starts (or where the
    /// read that failed began).
    pub offset: u64,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// A [`DecodeErrorKind::NotValid`] error at `offset`: the value found (`value`, printed)
    /// breaks `rule`.
    #[cold]
    pub fn not_valid(offset: u64, value: String, rule: &'static str) -> Self {
        Self::new(offset, DecodeErrorKind::NotValid { value, rule })
    }

    /// A new error at `offset` with an empty path; parents add their segments.
    #[cold]
    pub fn new(offset: u64, kind: DecodeErrorKind) -> Self {
        Self {
            path: FieldPath::new(),
            offset,
            kind,
        }
    }

    /// An error with a full path, for format-level checks made after the raw decode.
    #[cold]
    pub fn at(path: FieldPath, offset: u64, kind: DecodeErrorKind) -> Self {
        Self { path, offset, kind }
    }

    /// Adds the enclosing field name as the new outermost path segment.
    #[cold]
    pub fn in_field(mut self, name: &'static str) -> Self {
        self.path.push_outer(PathSeg::Field(name));
        self
    }

    /// Adds the enclosing list index as the new outermost path segment.
    #[cold]
    pub fn in_index(mut self, index: usize) -> Self {
        self.path.push_outer(PathSeg::Index(index));
        self
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (byte offset {}): {}",
            self.path, self.offset, self.kind
        )
    }
}

impl std::error::Error for DecodeError {}

impl fmt::Debug for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.debug_struct("DecodeError")
                .field("path", &self.path)
                .field("offset", &self.offset)
                .field("kind", &self.kind)
                .finish()
        } else {
            fmt::Display::fmt(self, f)
        }
    }
}

/// What went wrong while encoding, without the where (see [`EncodeError`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EncodeErrorKind {
    /// A value (often a derived count or length) does not fit its stored type.
    #[error("{value} does not fit in {ty}")]
    OutOfRange {
        /// The value, printed.
        value: String,
        /// The stored type (`u8`, `u16`, ...).
        ty: &'static str,
    },
    /// An optional field is present when its `if` condition is false, or absent when true.
    #[error("field is {state} but its condition `{condition}` is {holds}")]
    PresenceMismatch {
        /// `present` or `absent`.
        state: &'static str,
        /// The schema's `if` expression.
        condition: &'static str,
        /// Whether the condition holds for the other fields' values.
        holds: bool,
    },
    /// A list's length differs from the fixed count the schema gives it.
    #[error("list has {found} element(s) but the schema fixes {expected}")]
    CountMismatch {
        /// The count the schema's expression gives.
        expected: u64,
        /// The list's length.
        found: usize,
    },
    /// A sized field's encoding is longer than the size the schema fixes.
    #[error("encoded size {found} does not match the fixed size {expected}")]
    SizeMismatch {
        /// The size the schema fixes.
        expected: u64,
        /// The size the value encodes to.
        found: usize,
    },
    /// A switch-on value selects a different case than the value's variant.
    #[error("switch value selects case `{selected}` but the value is `{found}`")]
    SwitchMismatch {
        /// The case the switch expression selects.
        selected: String,
        /// The variant held.
        found: &'static str,
    },
    /// A `valid` rule of the schema failed for a value about to be written.
    #[error("value {value} is not valid: {rule}")]
    NotValid {
        /// The value, printed.
        value: String,
        /// The rule, as written in the schema.
        rule: &'static str,
    },
    /// A `repeat: until` list whose last element does not end the list (or an earlier one does).
    #[error("repeat-until condition `{condition}` does not hold exactly at the last element")]
    UntilMismatch {
        /// The schema's `repeat-until` expression.
        condition: &'static str,
    },
    /// A format rule that the layout alone cannot state (checked by the format module).
    #[error("{0}")]
    Semantic(String),
}

/// An encode failure: what ([`EncodeErrorKind`]) and for which field ([`FieldPath`]).
/// Writers never wrap or truncate a value that does not fit; they return this instead.
///
/// `{:?}` prints the same message as `{}`; `{:#?}` prints the members one by one.
#[derive(Clone, PartialEq)]
pub struct EncodeError {
    /// The field the error belongs to, outermost first.
    pub path: FieldPath,
    /// What went wrong.
    pub kind: EncodeErrorKind,
}

impl EncodeError {
    /// A [`EncodeErrorKind::NotValid`] error: the value (`value`, printed) breaks `rule`.
    #[cold]
    pub fn not_valid(value: String, rule: &'static str) -> Self {
        Self::new(EncodeErrorKind::NotValid { value, rule })
    }

    /// A new error with an empty path; parents add their segments.
    #[cold]
    pub fn new(kind: EncodeErrorKind) -> Self {
        Self {
            path: FieldPath::new(),
            kind,
        }
    }

    /// An error with a full path, for format-level checks.
    #[cold]
    pub fn at(path: FieldPath, kind: EncodeErrorKind) -> Self {
        Self { path, kind }
    }

    /// The error of an optional field `name` whose presence (`present`) does not match its
    /// `if` condition `condition` (`holds`: its value for the other fields): a
    /// [`EncodeErrorKind::PresenceMismatch`] in field `name`.
    #[cold]
    pub fn presence(
        name: &'static str,
        condition: &'static str,
        holds: bool,
        present: bool,
    ) -> Self {
        Self::new(EncodeErrorKind::PresenceMismatch {
            state: if present { "present" } else { "absent" },
            condition,
            holds,
        })
        .in_field(name)
    }

    /// Adds the enclosing field name as the new outermost path segment.
    #[cold]
    pub fn in_field(mut self, name: &'static str) -> Self {
        self.path.push_outer(PathSeg::Field(name));
        self
    }

    /// Adds the enclosing list index as the new outermost path segment.
    #[cold]
    pub fn in_index(mut self, index: usize) -> Self {
        self.path.push_outer(PathSeg::Index(index));
        self
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.kind)
    }
}

impl std::error::Error for EncodeError {}

impl fmt::Debug for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.debug_struct("EncodeError")
                .field("path", &self.path)
                .field("kind", &self.kind)
                .finish()
        } else {
            fmt::Display::fmt(self, f)
        }
    }
}

/// Prints bytes as quoted text when every byte is printable ASCII, else as spaced hex.
pub fn show_bytes(bytes: &[u8]) -> String {
    if !bytes.is_empty() && bytes.iter().all(|b| (0x20..0x7f).contains(b)) {
        format!("\"{}\"", String::from_utf8_lossy(bytes))
    } else {
        let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
        format!("[{}]", hex.join(" "))
    }
}

macro_rules! read_prim {
    ($($name:ident, $ty:ty, $n:expr, $from:ident;)*) => {$(
        #[doc = concat!("Reads one `", stringify!($ty), "` (", stringify!($n), " bytes, ",
                        stringify!($from), "). Errors: `UnexpectedEof` when fewer bytes remain.")]
        #[inline]
        pub fn $name(&mut self) -> Result<$ty, DecodeError> {
            let bytes = self.take_array::<$n>()?;
            Ok(<$ty>::$from(bytes))
        }
    )*};
}

/// A leaf's value as a generated reader found it, typed, so that tools can compare it exactly
/// (the Kaitai oracle compares integers exactly and floats by bit pattern) and print it
/// (its `Display` form is what `statepack inspect` shows).
#[derive(Debug, Clone, PartialEq)]
pub enum TraceValue {
    /// An integer field of any width, signed or not (bit fields included).
    Int(i128),
    /// A one-bit field (`b1`), which Kaitai Struct reads as a boolean.
    Bool(bool),
    /// An `f4` field.
    F32(f32),
    /// An `f8` field.
    F64(f64),
    /// A string field, decoded.
    Str(String),
    /// Raw bytes, or the bytes of a fixed `contents` field.
    Bytes(Vec<u8>),
    /// An enum field: the value's schema name and the stored integer.
    Enum {
        /// The value's name in the schema (`absolute`).
        name: &'static str,
        /// The stored integer.
        value: i128,
    },
    /// A field whose bytes hold a code for its value (an offset-binary bit field): both, so
    /// a reader of the trace sees what the bytes hold and what the field means.
    Coded {
        /// The value the code stands for (what `decode` prints and the generated type holds).
        value: i128,
        /// The stored code (what Kaitai Struct reads for the same bits).
        code: u64,
        /// The encoding's name (`offset binary`).
        encoding: &'static str,
    },
}

impl fmt::Display for TraceValue {
    /// Integers in decimal, floats in their shortest exact form (`1.0542928`), strings quoted
    /// and escaped, bytes as quoted text when printable else as hex, enums as `absolute (4)`, coded
    /// values as `2752 (stored code 2099904, offset binary)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceValue::Int(v) => write!(f, "{v}"),
            TraceValue::Bool(v) => write!(f, "{v}"),
            TraceValue::F32(v) => write!(f, "{v:?}"),
            TraceValue::F64(v) => write!(f, "{v:?}"),
            TraceValue::Str(v) => write!(f, "{v:?}"),
            TraceValue::Bytes(v) => f.write_str(&show_bytes(v)),
            TraceValue::Enum { name, value } => write!(f, "{name} ({value})"),
            TraceValue::Coded {
                value,
                code,
                encoding,
            } => write!(f, "{value} (stored code {code}, {encoding})"),
        }
    }
}

/// A value a generated reader can report to a [`Tracer`] (see [`ByteReader::leave`]).
pub trait TraceLeaf {
    /// The typed value.
    fn trace_value(&self) -> TraceValue;
}

macro_rules! trace_int {
    ($($t:ty),*) => {$(
        impl TraceLeaf for $t {
            #[inline]
            fn trace_value(&self) -> TraceValue {
                TraceValue::Int(*self as i128)
            }
        }
    )*};
}
trace_int!(u8, u16, u32, u64, i8, i16, i32, i64);

impl TraceLeaf for bool {
    #[inline]
    fn trace_value(&self) -> TraceValue {
        TraceValue::Bool(*self)
    }
}

impl TraceLeaf for f32 {
    fn trace_value(&self) -> TraceValue {
        TraceValue::F32(*self)
    }
}

impl TraceLeaf for f64 {
    fn trace_value(&self) -> TraceValue {
        TraceValue::F64(*self)
    }
}

impl TraceLeaf for String {
    fn trace_value(&self) -> TraceValue {
        TraceValue::Str(self.clone())
    }
}

impl TraceLeaf for Vec<u8> {
    fn trace_value(&self) -> TraceValue {
        TraceValue::Bytes(self.clone())
    }
}

impl TraceLeaf for [u8] {
    fn trace_value(&self) -> TraceValue {
        TraceValue::Bytes(self.to_vec())
    }
}

impl<const N: usize> TraceLeaf for [u8; N] {
    fn trace_value(&self) -> TraceValue {
        TraceValue::Bytes(self.to_vec())
    }
}

impl TraceLeaf for TraceValue {
    fn trace_value(&self) -> TraceValue {
        self.clone()
    }
}

/// Nodes that are not leaves (user types, lists) are left with `leave::<()>(None)`; the unit
/// value itself is never reported.
impl TraceLeaf for () {
    fn trace_value(&self) -> TraceValue {
        TraceValue::Bytes(Vec::new())
    }
}

/// What one field of a fixed run holds, in the table a generated reader passes to
/// [`ByteReader::run`] and [`ByteReader::bit_run`]: enough to read the field on its own,
/// trace it and report its error, so a run's field-by-field reading is data, not code.
#[derive(Debug, Clone, Copy)]
pub enum RunKind {
    /// An integer of `bytes` (1, 2, 4 or 8) bytes, `signed` or not, big-endian when `be`.
    Int {
        /// Its size in bytes.
        bytes: u8,
        /// Two's complement when true.
        signed: bool,
        /// Big-endian when true, little-endian otherwise.
        be: bool,
    },
    /// An `f4` (`bytes` 4) or `f8` (`bytes` 8), big-endian when `be`.
    Float {
        /// 4 or 8.
        bytes: u8,
        /// Big-endian when true.
        be: bool,
    },
    /// An integer that stores an enum value.
    Enum {
        /// Its size in bytes.
        bytes: u8,
        /// Two's complement when true.
        signed: bool,
        /// Big-endian when true.
        be: bool,
        /// The enum's name, for `UnknownEnum`.
        enum_name: &'static str,
        /// The schema name of a listed value, `None` for an integer the enum does not list.
        label: fn(i128) -> Option<&'static str>,
        /// True for an open enum (an unlisted integer is kept, traced as `unlisted`);
        /// false: an unlisted integer is an `UnknownEnum` error at the field's offset.
        open: bool,
    },
    /// Fixed contents (a magic number), checked as [`ByteReader::expect`] does.
    Contents(&'static [u8]),
    /// A big-endian bit field of `width` (1 to 32) bits; `offset_binary`: the bits store
    /// the value plus 2^(width-1), traced with both.
    Bits {
        /// 1 to 32.
        width: u8,
        /// True for an offset-binary field.
        offset_binary: bool,
    },
}

/// One field of a fixed run's table: its schema name, its kind, and its element count
/// when it is a fixed-count array (its elements are traced and reported by index).
#[derive(Debug, Clone, Copy)]
pub struct RunField {
    /// The field's name in the schema (`dt_ms`), as errors and traces name it.
    pub name: &'static str,
    /// `Some(n)`: an array of `n` values; `None`: one value.
    pub count: Option<usize>,
    /// What each value is.
    pub kind: RunKind,
}

impl RunField {
    /// One value of `kind`, named `name`.
    pub const fn new(name: &'static str, kind: RunKind) -> Self {
        Self {
            name,
            count: None,
            kind,
        }
    }

    /// An integer field (see [`RunKind::Int`]).
    pub const fn int(name: &'static str, bytes: u8, signed: bool, be: bool) -> Self {
        Self::new(name, RunKind::Int { bytes, signed, be })
    }

    /// A float field (see [`RunKind::Float`]).
    pub const fn float(name: &'static str, bytes: u8, be: bool) -> Self {
        Self::new(name, RunKind::Float { bytes, be })
    }

    /// An integer field that stores a value of enum `enum_name` (see [`RunKind::Enum`]).
    pub const fn enumerated(
        name: &'static str,
        (bytes, signed, be): (u8, bool, bool),
        enum_name: &'static str,
        label: fn(i128) -> Option<&'static str>,
        open: bool,
    ) -> Self {
        Self::new(
            name,
            RunKind::Enum {
                bytes,
                signed,
                be,
                enum_name,
                label,
                open,
            },
        )
    }

    /// A fixed `contents` field.
    pub const fn contents(name: &'static str, bytes: &'static [u8]) -> Self {
        Self::new(name, RunKind::Contents(bytes))
    }

    /// A big-endian bit field (see [`RunKind::Bits`]).
    pub const fn bits(name: &'static str, width: u8, offset_binary: bool) -> Self {
        Self::new(
            name,
            RunKind::Bits {
                width,
                offset_binary,
            },
        )
    }

    /// The same field as an array of `n` values.
    pub const fn times(self, n: usize) -> Self {
        Self {
            count: Some(n),
            ..self
        }
    }
}

/// Receives the structure of the data as a generated reader walks it: every field and list
/// element is entered at its start offset and left at its end offset, leaves with their value.
/// `statepack inspect` builds its tree this way; normal decoding uses [`NoTrace`], whose calls
/// compile to nothing.
pub trait Tracer {
    /// True for a tracer that records nothing ([`NoTrace`]): generated readers then read a
    /// run of fixed-size fields in one step ([`ByteReader::run`]) instead of telling
    /// the tracer about each field. `false` unless a tracer says otherwise.
    const SILENT: bool = false;
    /// A field or element starts at absolute byte `offset`.
    fn enter(&mut self, seg: PathSeg, offset: u64);
    /// The innermost open field ends at `offset`; `value` is its value for leaves.
    fn leave(&mut self, offset: u64, value: Option<TraceValue>);
    /// True when `leave` wants values (so readers skip building them otherwise).
    fn wants_values(&self) -> bool;
    /// [`Tracer::enter`] with the exact bit offset as well (bit fields start inside bytes).
    #[inline(always)]
    fn enter_at(&mut self, seg: PathSeg, offset: u64, bit_offset: u64) {
        let _ = bit_offset;
        self.enter(seg, offset);
    }
    /// [`Tracer::leave`] with the exact bit offset as well.
    #[inline(always)]
    fn leave_at(&mut self, offset: u64, bit_offset: u64, value: Option<TraceValue>) {
        let _ = bit_offset;
        self.leave(offset, value);
    }
}

/// The object-safe part of a [`Tracer`], so that a reader of a substream (the processed
/// bytes of a `process` field) can report to the tracer of the reader it came from through
/// one concrete type, [`Relay`], whatever that tracer is.
pub trait DynTracer {
    /// [`Tracer::enter_at`].
    fn dyn_enter_at(&mut self, seg: PathSeg, offset: u64, bit_offset: u64);
    /// [`Tracer::leave_at`].
    fn dyn_leave_at(&mut self, offset: u64, bit_offset: u64, value: Option<TraceValue>);
    /// [`Tracer::wants_values`].
    fn dyn_wants_values(&self) -> bool;
}

impl<T: Tracer> DynTracer for T {
    fn dyn_enter_at(&mut self, seg: PathSeg, offset: u64, bit_offset: u64) {
        self.enter_at(seg, offset, bit_offset);
    }
    fn dyn_leave_at(&mut self, offset: u64, bit_offset: u64, value: Option<TraceValue>) {
        self.leave_at(offset, bit_offset, value);
    }
    fn dyn_wants_values(&self) -> bool {
        self.wants_values()
    }
}

/// A tracer that passes every event on to another one ([`ByteReader::relay`]). The events of
/// a processed substream carry offsets from the start of the processed bytes.
pub struct Relay<'t>(pub &'t mut dyn DynTracer);

impl Tracer for Relay<'_> {
    fn enter(&mut self, seg: PathSeg, offset: u64) {
        self.0.dyn_enter_at(seg, offset, offset * 8);
    }
    fn leave(&mut self, offset: u64, value: Option<TraceValue>) {
        self.0.dyn_leave_at(offset, offset * 8, value);
    }
    fn wants_values(&self) -> bool {
        self.0.dyn_wants_values()
    }
    fn enter_at(&mut self, seg: PathSeg, offset: u64, bit_offset: u64) {
        self.0.dyn_enter_at(seg, offset, bit_offset);
    }
    fn leave_at(&mut self, offset: u64, bit_offset: u64, value: Option<TraceValue>) {
        self.0.dyn_leave_at(offset, bit_offset, value);
    }
}

/// The tracer of plain decoding: does nothing, costs nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoTrace;

impl Tracer for NoTrace {
    const SILENT: bool = true;
    #[inline(always)]
    fn enter(&mut self, _: PathSeg, _: u64) {}
    #[inline(always)]
    fn leave(&mut self, _: u64, _: Option<TraceValue>) {}
    #[inline(always)]
    fn wants_values(&self) -> bool {
        false
    }
}

/// One node of a decoded file's structure: a field or list element with its byte range.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TraceNode {
    /// Field name, or `[i]` for a list element.
    pub name: String,
    /// Absolute byte offset where the node starts.
    pub start: u64,
    /// Absolute byte offset just past the node.
    pub end: u64,
    /// Absolute bit offset where the node starts (`start × 8` unless it is inside a bit
    /// field run; [`TraceNode::start`] then counts a partly read byte as read, as Kaitai
    /// Struct does).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub start_bit: u64,
    /// Absolute bit offset just past the node.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub end_bit: u64,
    /// The value, for leaves (integers, floats, strings, enum names, bytes), as printed: the
    /// `Display` form of [`TraceNode::typed`].
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub value: Option<String>,
    /// The same value, typed (not part of the JSON form, which prints `value`).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub typed: Option<TraceValue>,
    /// Fields or elements inside this node.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Vec::is_empty"))]
    pub children: Vec<TraceNode>,
}

/// A [`Tracer`] that builds the tree of [`TraceNode`]s, rooted at a node named `root`.
#[derive(Debug, Clone)]
pub struct TreeTracer {
    stack: Vec<TraceNode>,
}

impl TreeTracer {
    /// A tracer whose root node is called `root_name` and starts at offset 0.
    pub fn new(root_name: &str) -> Self {
        Self {
            stack: vec![TraceNode {
                name: root_name.to_owned(),
                start: 0,
                end: 0,
                start_bit: 0,
                end_bit: 0,
                value: None,
                typed: None,
                children: Vec::new(),
            }],
        }
    }

    /// The finished tree; `end` is the offset where the root ends. Nodes left open by an
    /// error are closed at the deepest offset reached.
    pub fn finish(mut self, end: u64) -> TraceNode {
        while self.stack.len() > 1 {
            let mut n = self.stack.pop().expect("stack has more than one node");
            n.end = n
                .end
                .max(n.children.last().map(|c| c.end).unwrap_or(n.start));
            n.end_bit = n
                .end_bit
                .max(n.children.last().map(|c| c.end_bit).unwrap_or(n.start_bit));
            self.stack.last_mut().expect("root").children.push(n);
        }
        let mut root = self.stack.pop().expect("root node");
        root.end = end;
        root.end_bit = end * 8;
        root
    }
}

impl Tracer for TreeTracer {
    fn enter(&mut self, seg: PathSeg, offset: u64) {
        self.enter_at(seg, offset, offset * 8);
    }

    fn leave(&mut self, offset: u64, value: Option<TraceValue>) {
        self.leave_at(offset, offset * 8, value);
    }

    fn enter_at(&mut self, seg: PathSeg, offset: u64, bit_offset: u64) {
        let name = match seg {
            PathSeg::Field(f) => f.to_owned(),
            PathSeg::Index(i) => format!("[{i}]"),
        };
        self.stack.push(TraceNode {
            name,
            start: offset,
            end: offset,
            start_bit: bit_offset,
            end_bit: bit_offset,
            value: None,
            typed: None,
            children: Vec::new(),
        });
    }

    fn leave_at(&mut self, offset: u64, bit_offset: u64, value: Option<TraceValue>) {
        if self.stack.len() > 1 {
            let mut n = self.stack.pop().expect("stack has more than one node");
            n.end = offset;
            n.end_bit = bit_offset;
            n.value = value.as_ref().map(TraceValue::to_string);
            n.typed = value;
            self.stack.last_mut().expect("root").children.push(n);
        }
    }

    fn wants_values(&self) -> bool {
        true
    }
}

/// The outer stream's limits, saved by [`ByteReader::push_limit`] and given back to
/// [`ByteReader::pop_limit`] (or [`ByteReader::pop_limit_skip`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// The outer stream's end (absolute byte offset).
    pub(crate) end: usize,
    /// The outer stream's start (absolute byte offset).
    pub(crate) start: usize,
}

/// A reader position saved by [`ByteReader::mark`] and restored by [`ByteReader::reset_to`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadMark {
    pos: usize,
    bits: u8,
    nbits: u8,
}

/// The pending bits of a run of bit fields being appended to a [`ByteWriter`]
/// ([`ByteWriter::begin_bit_run`], [`ByteWriter::bit_run_put`], [`ByteWriter::end_bit_run`]):
/// fewer than eight bits not yet written as a byte, most significant first.
#[derive(Debug, Clone, Copy)]
pub struct BitRun {
    acc: u64,
    n: u32,
}

/// The reading position of a run of big-endian bit fields checked with
/// [`ByteReader::bit_run_cursor`]: the input window, the next byte and the pending bits,
/// held by the generated reader as a local so that they stay in registers for the whole
/// run instead of being stored to the reader after every field. [`BitCursor::take`] reads
/// one field; [`ByteReader::bit_run_done`] gives the position back to the reader.
#[derive(Debug, Clone, Copy)]
pub struct BitCursor<'a> {
    win: &'a [u8],
    pos: usize,
    acc: u64,
    n: u32,
}

impl BitCursor<'_> {
    /// Reads the next `width`-bit (1..=32) field of the run: the value
    /// [`ByteReader::read_bits_be`] gives at the same place. The run's bits were checked to
    /// be there ([`ByteReader::bit_run_cursor`]); reading past the run's width panics (an
    /// index out of bounds), so a generated reader never does.
    #[inline(always)]
    pub fn take(&mut self, width: u32) -> u64 {
        debug_assert!((1..=32).contains(&width));
        let v;
        (v, self.acc, self.n) =
            crate::bits::msb_pull(self.win, &mut self.pos, self.acc, self.n, width);
        v
    }

    /// The absolute byte offset [`ByteReader::offset`] would give here (a partly read
    /// byte counts as read).
    #[inline(always)]
    pub fn offset(&self) -> u64 {
        self.pos as u64
    }
}

/// The bytes a reader reads, copied once for the positional instances read on first use
/// (`crate::lazy`), with the budgets used so far by the reads from them (during decode, and
/// on access; shared by every instance of the input). Each count is the largest any reader
/// reported: reads on access one after the other add up, as during decode.
pub struct LazyInput {
    pub(crate) bytes: Box<[u8]>,
    pub(crate) reads: std::sync::atomic::AtomicU64,
    pub(crate) read_bytes: std::sync::atomic::AtomicU64,
    pub(crate) processed: std::sync::atomic::AtomicU64,
    /// Substreams of the root type's fields kept for lazy instances read from them
    /// (`io: _root.x._io` with `x` read later): name, absolute start and end.
    pub(crate) later: std::sync::Mutex<Vec<(&'static str, usize, usize)>>,
}

impl LazyInput {
    pub(crate) fn new(bytes: &[u8]) -> Self {
        Self {
            later: std::sync::Mutex::new(Vec::new()),
            bytes: bytes.into(),
            reads: std::sync::atomic::AtomicU64::new(0),
            read_bytes: std::sync::atomic::AtomicU64::new(0),
            processed: std::sync::atomic::AtomicU64::new(0),
        }
    }
}

impl fmt::Debug for LazyInput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LazyInput({} byte(s))", self.bytes.len())
    }
}

/// A bounds-checked cursor over a byte slice, used by every generated reader.
///
/// Offsets are absolute from the start of the input. A sized field (KS `size` on a user type)
/// narrows the readable range with [`ByteReader::push_limit`] and restores it with
/// [`ByteReader::pop_limit`], so one reader (and one tracer) serves the whole decode.
#[derive(Debug, Clone)]
pub struct ByteReader<'a, T: Tracer = NoTrace> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
    pub(crate) end: usize,
    /// `buf[..end]`, kept with `end` by [`ByteReader::set_end`]: a run is then taken with
    /// one comparison against this slice's length instead of one against `end` and one
    /// against the input's length.
    win: &'a [u8],
    /// Bits of the last fetched byte not read yet (the low `nbits` bits of `bits`).
    pub(crate) bits: u8,
    pub(crate) nbits: u8,
    /// Where the stream being read starts (`_io` of a sized field starts at its first byte).
    pub(crate) start: usize,
    /// Positional instances being read, innermost last (see `crate::positional`).
    pub(crate) inst_depth: u32,
    /// Where the innermost positional instance being read started (absolute; `usize::MAX`
    /// for none), and how many enclosing ones in a row started there too.
    pub(crate) inst_at: (usize, u8),
    /// The furthest byte any positional instance read reached (absolute).
    pub(crate) pos_hi: usize,
    /// Nesting of recursive types entered ([`ByteReader::enter_recursion`]).
    pub(crate) depth: u16,
    /// Positional instances read so far (bounded, see `crate::positional`).
    pub(crate) inst_reads: u64,
    /// Bytes read by positional instances so far (bounded, see `crate::positional`).
    pub(crate) inst_bytes: u64,
    /// Bytes produced by processed fields so far by this reader (bounded, see
    /// `crate::positional`).
    pub(crate) processed: u64,
    /// The processed-bytes budget of the whole file
    /// ([`crate::limits::processed_budget`] of the outermost input), which a reader of
    /// processed bytes shares with the reader it was made by.
    pub(crate) processed_total: u64,
    /// Bytes already produced by the readers this one was made by (0 for the outermost).
    pub(crate) processed_base: u64,
    /// The copy of `buf` that lazy positional instances read from (made by the first
    /// [`ByteReader::lazy_at`], see `crate::lazy`).
    pub(crate) lazy_input: Option<std::sync::Arc<LazyInput>>,
    /// The `-sp-align` positional instances read so far (absolute start, bytes read,
    /// alignment), in reading order, for the check of the `-sp-end-zeros` type holding them
    /// (see `crate::positional`).
    pub(crate) aligned: Vec<(usize, usize, u32)>,
    /// The tracer told about every field (see [`Tracer`]).
    pub tracer: T,
}

/// The deepest nesting of recursive types (a type that holds itself, directly or not) a
/// reader follows: deeper input is a decode error rather than a stack overflow.
pub const MAX_RECURSION: u16 = 256;

impl<'a, T: Tracer> ByteReader<'a, T> {
    /// A tracer for a reader of a substream (processed bytes) that reports to this reader's
    /// tracer.
    pub fn relay(&mut self) -> Relay<'_> {
        Relay(&mut self.tracer)
    }
}

impl<'a> ByteReader<'a, NoTrace> {
    /// A reader at the start of `buf` (offset 0), without tracing.
    pub fn new(buf: &'a [u8]) -> Self {
        Self::with_tracer(buf, NoTrace)
    }
}

impl<'a, T: Tracer> ByteReader<'a, T> {
    /// A reader at the start of `buf` that reports the structure to `tracer`.
    pub fn with_tracer(buf: &'a [u8], tracer: T) -> Self {
        Self {
            buf,
            pos: 0,
            end: buf.len(),
            win: buf,
            bits: 0,
            nbits: 0,
            start: 0,
            inst_depth: 0,
            inst_at: (usize::MAX, 0),
            pos_hi: 0,
            depth: 0,
            inst_reads: 0,
            inst_bytes: 0,
            processed: 0,
            processed_total: crate::limits::processed_budget(buf.len()),
            processed_base: 0,
            lazy_input: None,
            aligned: Vec::new(),
            tracer,
        }
    }

    /// Enters one level of a recursive type (generated readers call it before reading a
    /// field whose type contains the field's own type). Errors: `Semantic` at the current
    /// offset past [`MAX_RECURSION`] levels.
    #[inline]
    pub fn enter_recursion(&mut self) -> Result<(), DecodeError> {
        if self.depth >= MAX_RECURSION {
            return Err(DecodeError::new(
                self.offset(),
                DecodeErrorKind::Semantic(format!(
                    "recursive types nested deeper than {MAX_RECURSION} levels"
                )),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    /// Leaves the level entered by [`ByteReader::enter_recursion`].
    #[inline]
    pub fn leave_recursion(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Bits consumed from the start of the input (a bit field's exact position).
    #[inline]
    pub fn bit_offset(&self) -> u64 {
        self.pos as u64 * 8 - u64::from(self.nbits)
    }

    /// Reads a `width`-bit (1..=64) unsigned big-endian bit field, most significant bit first
    /// (KS `bN` with `bit-endian: be`). The byte offset ([`ByteReader::offset`]) counts a
    /// partly read byte as read, as Kaitai Struct does. Errors: `UnexpectedEof` (in whole
    /// bytes), before anything is consumed.
    #[inline]
    pub fn read_bits_be(&mut self, width: u32) -> Result<u64, DecodeError> {
        debug_assert!((1..=64).contains(&width));
        let avail = (self.end - self.pos) as u64 * 8 + u64::from(self.nbits);
        if u64::from(width) > avail {
            let need_bits = u64::from(width) - u64::from(self.nbits);
            return Err(self.eof(need_bits.div_ceil(8) as usize));
        }
        if width <= 32 {
            Ok(self.take_bits32(width))
        } else {
            let hi = self.take_bits32(width - 32);
            Ok((hi << 32) | self.take_bits32(32))
        }
    }

    /// Reads a `width`-bit (1..=64) unsigned bit field least significant bit first (KS `bN`
    /// with `bit-endian: le`): bits come from each byte's lowest bit up, and later bytes
    /// hold the higher bits. Errors: `UnexpectedEof`, before anything is consumed.
    #[inline]
    pub fn read_bits_le(&mut self, width: u32) -> Result<u64, DecodeError> {
        let avail = (self.end - self.pos) as u64 * 8 + u64::from(self.nbits);
        if !(1..=64).contains(&width) || u64::from(width) > avail {
            let need_bits = u64::from(width).saturating_sub(u64::from(self.nbits));
            return Err(self.eof(need_bits.div_ceil(8) as usize));
        }
        if width <= 32 {
            Ok(self.take_bits32_le(width))
        } else {
            let lo = self.take_bits32_le(32);
            Ok(lo | (self.take_bits32_le(width - 32) << 32))
        }
    }

    /// Takes `width` (1..=32) bits that are known to be there, least significant first
    /// (the one LSB-first step, [`crate::bits::lsb::lsb_pull`]).
    #[inline(always)]
    fn take_bits32_le(&mut self, width: u32) -> u64 {
        let (v, bits, n) = crate::bits::lsb::lsb_pull(
            self.buf,
            &mut self.pos,
            u64::from(self.bits),
            u32::from(self.nbits),
            width,
        );
        self.bits = bits as u8;
        self.nbits = n as u8;
        v
    }

    /// Takes `width` (1..=32) bits that are known to be there: the pending bits (at most 7)
    /// and whole bytes go through a u64 accumulator of at most 39 bits.
    #[inline(always)]
    fn take_bits32(&mut self, width: u32) -> u64 {
        let (v, bits, n) = crate::bits::msb_pull(
            self.buf,
            &mut self.pos,
            u64::from(self.bits),
            u32::from(self.nbits),
            width,
        );
        self.bits = bits as u8;
        self.nbits = n as u8;
        v
    }

    /// Drops the unread bits of a partly read byte so the next read starts on a byte (KS
    /// `alignToByte`, which the generator emits where Kaitai Struct's compiler does). The
    /// dropped bits must be zero, so that decoding then encoding gives back the same bytes.
    /// Errors: `Semantic` naming the padding.
    #[inline]
    pub fn align_to_byte(&mut self) -> Result<(), DecodeError> {
        if self.nbits > 0 {
            let pad = self.bits;
            self.nbits = 0;
            self.bits = 0;
            if pad != 0 {
                return Err(DecodeError::new(
                    self.offset() - 1,
                    DecodeErrorKind::Semantic(format!(
                        "padding bits to the byte boundary are not zero (byte {:#04x})",
                        self.buf[self.pos - 1]
                    )),
                ));
            }
        }
        Ok(())
    }

    /// Drops the unread bits of a partly read byte, as Kaitai Struct does before a
    /// byte-aligned field, and returns them (the low bits of the result; zero when the
    /// reader was on a byte boundary) so that a writer can put them back with
    /// [`ByteWriter::align_to_byte_with`]. Unlike [`ByteReader::align_to_byte`] they may be
    /// anything.
    pub fn align_to_byte_keep(&mut self) -> u8 {
        let pad = if self.nbits > 0 { self.bits } else { 0 };
        self.bits = 0;
        self.nbits = 0;
        pad
    }

    /// Absolute byte offset of the next read, from the start of the input.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.pos as u64
    }

    /// Bytes left to read (inside the current sized field, if any).
    #[inline]
    pub fn remaining(&self) -> usize {
        self.end - self.pos
    }

    /// True when no bytes are left (inside the current sized field, if any).
    #[inline]
    pub fn is_eof(&self) -> bool {
        self.pos >= self.end && self.nbits == 0
    }

    /// Tells the tracer a field or element starts here.
    #[inline(always)]
    pub fn enter(&mut self, seg: PathSeg) {
        let at = self.offset();
        let bit = self.bit_offset();
        self.tracer.enter_at(seg, at, bit);
    }

    /// Tells the tracer the innermost field ends here; `value` is converted only when the
    /// tracer wants values.
    #[inline(always)]
    pub fn leave<V: TraceLeaf + ?Sized>(&mut self, value: Option<&V>) {
        let at = self.offset();
        let bit = self.bit_offset();
        if self.tracer.wants_values() {
            let typed = value.map(TraceLeaf::trace_value);
            self.tracer.leave_at(at, bit, typed);
        } else {
            self.tracer.leave_at(at, bit, None);
        }
    }

    /// Reads field `name` with `read` and traces it as one leaf with its value (enter, read,
    /// leave): the field-by-field read of a number, string or byte array in generated code.
    ///
    /// Errors: `read`'s error, with `name` added to its field path.
    #[inline(always)]
    pub fn leaf<V: TraceLeaf>(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<V, DecodeError>,
    ) -> Result<V, DecodeError> {
        self.enter(PathSeg::Field(name));
        let v = read(self).map_err(|e| e.in_field(name))?;
        self.leave(Some(&v));
        Ok(v)
    }

    /// Tells the tracer the innermost field, an enum value (`name (value)`), ends here.
    #[inline(always)]
    pub fn leave_enum(&mut self, name: &'static str, value: i128) {
        self.leave(Some(&TraceValue::Enum { name, value }));
    }

    /// Reads field `name` with `read` and traces it as one node without a value of its own
    /// (enter, read, leave): the read of a user type, a switch or a list in generated code.
    ///
    /// Errors: `read`'s error, with `name` added to its field path.
    #[inline(always)]
    pub fn node<V>(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut Self) -> Result<V, DecodeError>,
    ) -> Result<V, DecodeError> {
        self.enter(PathSeg::Field(name));
        let v = read(self).map_err(|e| e.in_field(name))?;
        self.leave::<()>(None);
        Ok(v)
    }

    #[cold]
    fn eof(&self, needed: usize) -> DecodeError {
        DecodeError::new(
            self.offset(),
            DecodeErrorKind::UnexpectedEof {
                needed,
                available: self.remaining(),
            },
        )
    }

    /// Takes the `N` bytes of a fixed run described by `fields` (the run's fields in order;
    /// their sizes add up to `N`), for a generated reader that decodes every field of the
    /// run from the array at constant offsets: one bounds check per run instead of one per
    /// field.
    ///
    /// When the bytes are all there and the tracer is [`Tracer::SILENT`], this is the whole
    /// work. Otherwise (the input ends inside the run, or a tracer records the structure)
    /// the run is read field by field from the table, out of line: each field is traced
    /// with its value as a field-by-field reader traces it, and the first field that fails
    /// gives the error, with its name (and element index) and byte offset. The reader then
    /// decodes the returned bytes, whose values the table's checks have passed.
    ///
    /// Errors: the first failing field's `UnexpectedEof`, `BadContents` or `UnknownEnum`.
    #[inline(always)]
    pub fn run<const N: usize>(&mut self, fields: &[RunField]) -> Result<&'a [u8; N], DecodeError> {
        if T::SILENT {
            let win: &'a [u8] = self.win;
            if let Some(run) = win.get(self.pos..).and_then(<[u8]>::first_chunk::<N>) {
                self.pos += N;
                return Ok(run);
            }
        }
        self.run_slow(fields)
    }

    /// [`ByteReader::run`] field by field: traces and checks every field of the table, then
    /// returns the run's bytes.
    #[cold]
    #[inline(never)]
    fn run_slow<const N: usize>(
        &mut self,
        fields: &[RunField],
    ) -> Result<&'a [u8; N], DecodeError> {
        let start = self.pos;
        self.run_fields(fields)?;
        let win: &'a [u8] = self.win;
        match win.get(start..).and_then(<[u8]>::first_chunk::<N>) {
            Some(run) => {
                self.pos = start + N;
                Ok(run)
            }
            None => Err(self.eof(N)),
        }
    }

    /// The error of the fixed run of `n` bytes just taken with [`ByteReader::run`] whose
    /// decoded values fail a check (an enum value the enum does not list, `contents` that
    /// differ): the run is read again field by field from `fields`, from its first byte,
    /// and the first failing field's error is returned, with its name and byte offset.
    #[cold]
    #[inline(never)]
    pub fn run_fault(&mut self, n: usize, fields: &[RunField]) -> DecodeError {
        self.pos = self.pos.saturating_sub(n);
        match self.run_fields(fields) {
            Err(e) => e,
            Ok(()) => DecodeError::new(
                self.offset(),
                DecodeErrorKind::Semantic("a fixed run's values failed a check".to_owned()),
            ),
        }
    }

    /// Checks that a run of big-endian bit fields described by `fields`, `width` bits in
    /// all, can be read with [`ByteReader::take_run_bits_be`], field after field.
    ///
    /// When the bits are all there and the tracer is [`Tracer::SILENT`], this is one
    /// comparison. Otherwise the run is read field by field from the table, out of line:
    /// each field is traced with its value, and the first field past the end of the input
    /// gives the error with its name and byte offset; when every field is there, the reader
    /// goes back to the run's first bit for the reads that follow.
    ///
    /// Errors: the first failing field's `UnexpectedEof`.
    #[inline(always)]
    pub fn bit_run(&mut self, width: u64, fields: &[RunField]) -> Result<(), DecodeError> {
        if self.has_run_bits(width) {
            return Ok(());
        }
        self.bit_run_slow(fields)
    }

    /// As [`ByteReader::bit_run`], then the run's reading position as a [`BitCursor`]: the
    /// generated reader takes every field of the run from it ([`BitCursor::take`]) and
    /// ends the run with [`ByteReader::bit_run_done`]. Errors: those of
    /// [`ByteReader::bit_run`].
    #[inline(always)]
    pub fn bit_run_cursor(
        &mut self,
        width: u64,
        fields: &[RunField],
    ) -> Result<BitCursor<'a>, DecodeError> {
        self.bit_run(width, fields)?;
        Ok(BitCursor {
            win: self.win,
            pos: self.pos,
            acc: u64::from(self.bits),
            n: u32::from(self.nbits),
        })
    }

    /// Ends a run read through a [`BitCursor`] from [`ByteReader::bit_run_cursor`]: the
    /// reader continues after the run's last field.
    #[inline(always)]
    pub fn bit_run_done(&mut self, c: BitCursor<'a>) {
        self.pos = c.pos;
        self.bits = c.acc as u8;
        self.nbits = c.n as u8;
    }

    /// [`ByteReader::bit_run`] field by field.
    #[cold]
    #[inline(never)]
    fn bit_run_slow(&mut self, fields: &[RunField]) -> Result<(), DecodeError> {
        let m = self.mark();
        self.run_fields(fields)?;
        self.reset_to(m);
        Ok(())
    }

    /// Reads the fields of a run table one by one, entering and leaving each (and each
    /// element of a fixed-count array) with its value: the field-by-field reading of a run.
    fn run_fields(&mut self, fields: &[RunField]) -> Result<(), DecodeError> {
        for f in fields {
            self.enter(PathSeg::Field(f.name));
            match f.count {
                None => {
                    let v = self.run_value(&f.kind).map_err(|e| e.in_field(f.name))?;
                    self.leave(Some(&v));
                }
                Some(n) => {
                    for i in 0..n {
                        self.enter(PathSeg::Index(i));
                        let v = self
                            .run_value(&f.kind)
                            .map_err(|e| e.in_index(i).in_field(f.name))?;
                        self.leave(Some(&v));
                    }
                    self.leave::<()>(None);
                }
            }
        }
        Ok(())
    }

    /// Reads one value of a run field as a field-by-field reader does, and gives it as the
    /// tracer sees it.
    fn run_value(&mut self, kind: &RunKind) -> Result<TraceValue, DecodeError> {
        Ok(match *kind {
            RunKind::Int { bytes, signed, be } => TraceValue::Int(self.run_int(bytes, signed, be)?),
            RunKind::Float { bytes: 4, be } => {
                TraceValue::F32(f32::from_bits(self.run_int(4, false, be)? as u32))
            }
            RunKind::Float { be, .. } => {
                TraceValue::F64(f64::from_bits(self.run_int(8, false, be)? as u64))
            }
            RunKind::Enum {
                bytes,
                signed,
                be,
                enum_name,
                label,
                open,
            } => {
                let at = self.offset();
                let value = self.run_int(bytes, signed, be)?;
                match label(value) {
                    Some(name) => TraceValue::Enum { name, value },
                    None if open => TraceValue::Enum {
                        name: "unlisted",
                        value,
                    },
                    None => {
                        return Err(DecodeError::new(
                            at,
                            DecodeErrorKind::UnknownEnum { enum_name, value },
                        ))
                    }
                }
            }
            RunKind::Contents(c) => {
                self.expect(c)?;
                TraceValue::Bytes(c.to_vec())
            }
            RunKind::Bits {
                width,
                offset_binary,
            } => {
                let w = u32::from(width);
                let raw = self.read_bits_be(w)?;
                match (width, offset_binary) {
                    (1, false) => TraceValue::Bool(raw != 0),
                    (_, false) => TraceValue::Int(i128::from(raw)),
                    (_, true) => {
                        let value = crate::bits::from_offset_binary(raw, w);
                        TraceValue::Coded {
                            value: i128::from(value),
                            code: crate::bits::to_offset_binary(value, w).unwrap_or(0),
                            encoding: "offset binary",
                        }
                    }
                }
            }
        })
    }

    /// Reads an integer of `bytes` (1 to 8) bytes. Errors: `UnexpectedEof`.
    fn run_int(&mut self, bytes: u8, signed: bool, be: bool) -> Result<i128, DecodeError> {
        let b = self.take(usize::from(bytes))?;
        let push = |acc: u64, byte: &u8| (acc << 8) | u64::from(*byte);
        let raw = if be {
            b.iter().fold(0, push)
        } else {
            b.iter().rev().fold(0, push)
        };
        let unused = 64 - 8 * u32::from(bytes);
        Ok(if signed {
            i128::from(((raw << unused) as i64) >> unused)
        } else {
            i128::from(raw)
        })
    }

    /// Sets the end of the readable range (absolute) and the window `buf[..end]` with it
    /// (an end past the input leaves an empty window, so runs fall back to the checked
    /// field-by-field reads).
    #[inline]
    pub(crate) fn set_end(&mut self, end: usize) {
        self.end = end;
        self.win = self.buf.get(..end).unwrap_or(&[]);
    }

    /// The reader's position (byte and pending bits), for [`ByteReader::reset_to`].
    #[inline(always)]
    pub fn mark(&self) -> ReadMark {
        ReadMark {
            pos: self.pos,
            bits: self.bits,
            nbits: self.nbits,
        }
    }

    /// Goes back to a position taken with [`ByteReader::mark`] in the same stream: after
    /// reading a run of bit fields one by one for a tracer ([`ByteReader::bit_run`]), to
    /// read them again in one step; in the schema interpreter, to read a value again.
    #[cold]
    pub fn reset_to(&mut self, m: ReadMark) {
        self.pos = m.pos;
        self.bits = m.bits;
        self.nbits = m.nbits;
    }

    /// Takes a byte-aligned LEB128 varint (`-sp-varint: leb128` over `u1` groups) in one
    /// loop: its value. `None`, with nothing consumed, when the groups run past the end, are
    /// not a valid shortest form of at most 64 bits ([`crate::bits::Leb128Decoder`]) or the
    /// tracer records the structure; the generated reader then reads group by group and
    /// reports the exact error.
    #[inline(always)]
    pub fn take_varint(&mut self) -> Option<u64> {
        if !T::SILENT {
            return None;
        }
        let rest = self.buf.get(self.pos..self.end)?;
        let first = *rest.first()?;
        if first < 0x80 {
            self.pos += 1;
            return Some(u64::from(first));
        }
        let mut leb = crate::bits::Leb128Decoder::new();
        for (i, &g) in rest.iter().enumerate() {
            match leb.push(g) {
                Ok(Some(v)) => {
                    self.pos += i + 1;
                    return Some(v);
                }
                Ok(None) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// Reads a byte-aligned `-sp-varint: leb128` field `name` (groups of one byte) that
    /// has no condition: in one loop ([`ByteReader::take_varint`]) when it can, otherwise
    /// (a tracer records the structure, or the groups are not a valid varint) out of line,
    /// field by field: entered, then read as [`ByteReader::varint_groups`] reads it.
    ///
    /// Errors: those of [`ByteReader::varint_groups`].
    #[inline(always)]
    pub fn varint(&mut self, name: &'static str) -> Result<u64, DecodeError> {
        if let Some(v) = self.take_varint() {
            return Ok(v);
        }
        self.varint_slow(name)
    }

    /// [`ByteReader::varint`] group by group.
    #[cold]
    #[inline(never)]
    fn varint_slow(&mut self, name: &'static str) -> Result<u64, DecodeError> {
        self.enter(PathSeg::Field(name));
        self.varint_groups(name, false)
    }

    /// Reads the groups of `-sp-varint: leb128` field `name` (already entered) one by one,
    /// each traced as a list element with its byte, and leaves the field: its value. The
    /// groups are bytes, or 8-bit big-endian bit fields when `bit_groups`.
    ///
    /// Errors: `UnexpectedEof` naming the group (`name[i]`); `Semantic` at the field's
    /// offset for more than 64 value bits or a trailing zero group (not the shortest form).
    pub fn varint_groups(
        &mut self,
        name: &'static str,
        bit_groups: bool,
    ) -> Result<u64, DecodeError> {
        let start = self.offset();
        let mut leb = crate::bits::Leb128Decoder::new();
        let mut i = 0usize;
        let value = loop {
            self.enter(PathSeg::Index(i));
            let g = if bit_groups {
                self.read_bits_be(8).map(|b| b as u8)
            } else {
                self.read_u8()
            }
            .map_err(|e| e.in_index(i).in_field(name))?;
            self.leave(Some(&g));
            match leb.push(g) {
                Ok(Some(v)) => break v,
                Ok(None) => i += 1,
                Err(fault) => {
                    return Err(DecodeError::new(
                        start,
                        DecodeErrorKind::Semantic(fault.to_string()),
                    )
                    .in_field(name))
                }
            }
        };
        self.leave::<()>(None);
        Ok(value)
    }

    /// True when a run of bit fields `width` bits wide in total can be read in one step
    /// with [`ByteReader::take_run_bits_be`]: that many bits are left and the tracer is
    /// [`Tracer::SILENT`]. Otherwise the generated reader reads field by field.
    #[inline(always)]
    pub fn has_run_bits(&self, width: u64) -> bool {
        T::SILENT && width <= (self.end - self.pos) as u64 * 8 + u64::from(self.nbits)
    }

    /// Reads one `width`-bit (1..=32) field of a run checked with [`ByteReader::bit_run`]
    /// (or [`ByteReader::has_run_bits`]): the value [`ByteReader::read_bits_be`] gives, without a
    /// bounds check of its own. Without that check first, a read past the input's last byte
    /// panics (an index out of bounds); never call it otherwise.
    #[inline(always)]
    pub fn take_run_bits_be(&mut self, width: u32) -> u64 {
        debug_assert!((1..=32).contains(&width));
        self.take_bits32(width)
    }

    /// Takes exactly `N` bytes as an array. Errors: `UnexpectedEof`.
    #[inline]
    pub fn take_array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        if N > self.end - self.pos {
            return Err(self.eof(N));
        }
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        Ok(out)
    }

    /// Takes exactly `n` bytes, borrowed from the input. Errors: `UnexpectedEof`.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.remaining() {
            return Err(self.eof(n));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// Takes a byte count computed by a schema expression; a negative count is an error.
    /// Errors: `UnexpectedEof`.
    #[inline]
    pub fn take_sized(&mut self, n: i128) -> Result<&'a [u8], DecodeError> {
        let n = self.size_of(n)?;
        self.take(n)
    }

    fn size_of(&self, n: i128) -> Result<usize, DecodeError> {
        match usize::try_from(n) {
            Ok(n) if n <= self.remaining() => Ok(n),
            _ => Err(DecodeError::new(
                self.offset(),
                DecodeErrorKind::UnexpectedEof {
                    needed: usize::try_from(n).unwrap_or(usize::MAX),
                    available: self.remaining(),
                },
            )),
        }
    }

    /// Takes every remaining byte (KS `size-eos: true`).
    pub fn take_rest(&mut self) -> &'a [u8] {
        let s = &self.buf[self.pos..self.end];
        self.pos = self.end;
        s
    }

    /// Takes bytes up to a terminator byte and consumes the terminator (KS `strz`).
    /// Errors: `UnexpectedEof` when no terminator is found.
    pub fn take_until(&mut self, terminator: u8) -> Result<&'a [u8], DecodeError> {
        match self.buf[self.pos..self.end]
            .iter()
            .position(|b| *b == terminator)
        {
            Some(i) => {
                let s = &self.buf[self.pos..self.pos + i];
                self.pos += i + 1;
                Ok(s)
            }
            None => Err(self.eof(self.remaining() + 1)),
        }
    }

    /// Reads a field with a terminator and/or right padding, as Kaitai Struct does; returns the
    /// value and the *tail*: the bytes the field took beyond the value (the consumed
    /// terminator, the bytes after it in a sized field, the stripped padding), which a writer
    /// puts back so that decode then encode is byte-identical.
    ///
    /// With `size`: the field takes exactly `size` bytes; the value ends at the first
    /// terminator (kept when `include`), or, when there is none, before the trailing
    /// `pad_right` bytes.
    /// Without: the value runs to the terminator, which is consumed unless `consume` is
    /// false; at the end of the stream without a terminator it is an `UnexpectedEof` error,
    /// or (with `eos_error` false) the value is the rest of the stream.
    pub fn read_terminated(
        &mut self,
        size: Option<i128>,
        t: Term,
    ) -> Result<(&'a [u8], &'a [u8]), DecodeError> {
        if let Some(n) = size {
            let region = self.take_sized(n)?;
            let w = usize::from(t.width.max(1));
            let end = match t.find(region) {
                Some(i) if t.include => i + w,
                Some(i) => i,
                None => {
                    let mut end = region.len();
                    if let Some(p) = t.pad_right {
                        while end > 0 && region[end - 1] == p {
                            end -= 1;
                        }
                    }
                    end
                }
            };
            return Ok(region.split_at(end));
        }
        self.align_to_byte()?;
        let rest = &self.buf[self.pos..self.end];
        let w = usize::from(t.width.max(1));
        match t.find(rest) {
            Some(i) => {
                let (value_end, taken) = match (t.include, t.consume) {
                    (true, true) => (i + w, i + w),
                    (true, false) => (i + w, i),
                    (false, true) => (i, i + w),
                    (false, false) => (i, i),
                };
                let value = &rest[..value_end];
                let tail = &rest[value_end.min(taken)..taken];
                self.pos += taken;
                Ok((value, tail))
            }
            None if !t.eos_error => {
                self.pos = self.end;
                Ok((rest, &rest[rest.len()..]))
            }
            None => Err(self.eof(self.remaining() + 1)),
        }
    }

    /// Narrows reading to the next `n` bytes (a sized field); returns the limit to give back
    /// to [`ByteReader::pop_limit`]. Errors: `UnexpectedEof`.
    pub fn push_limit(&mut self, n: i128) -> Result<Limit, DecodeError> {
        let n = self.size_of(n)?;
        let old = Limit {
            end: self.end,
            start: self.start,
        };
        self.set_end(self.pos + n);
        self.start = self.pos;
        Ok(old)
    }

    /// Ends a sized field: checks that it was used up, then restores the outer limit.
    /// Errors: `UnusedBytes`.
    pub fn pop_limit(&mut self, old_end: Limit) -> Result<(), DecodeError> {
        self.align_to_byte()?;
        if self.pos != self.end {
            return Err(DecodeError::new(
                self.offset(),
                DecodeErrorKind::UnusedBytes {
                    unused: self.remaining(),
                },
            ));
        }
        self.set_end(old_end.end);
        self.start = old_end.start;
        Ok(())
    }

    /// Ends a sized field the way Kaitai Struct does: the bits left in a partly read byte
    /// and the bytes the type inside did not read are skipped and returned (a writer puts
    /// them back after the type's fields, so decode then encode keeps them), then the outer
    /// limit is restored. Errors: none today (the `Result` leaves room for checks).
    pub fn pop_limit_skip(&mut self, old_end: Limit) -> Result<(u8, &'a [u8]), DecodeError> {
        let pad = self.align_to_byte_keep();
        let rest = &self.buf[self.pos..self.end];
        self.pos = self.end;
        self.set_end(old_end.end);
        self.start = old_end.start;
        Ok((pad, rest))
    }

    /// Checks fixed contents (magic numbers, version headers). Errors: `BadContents` naming
    /// the bytes found, or `UnexpectedEof` when the input stops inside a matching prefix.
    pub fn expect(&mut self, expected: &[u8]) -> Result<(), DecodeError> {
        let at = self.offset();
        let avail = self.remaining().min(expected.len());
        let found = &self.buf[self.pos..self.pos + avail];
        if found != expected {
            if avail < expected.len() && found == &expected[..avail] {
                return Err(self.eof(expected.len()));
            }
            return Err(DecodeError::new(
                at,
                DecodeErrorKind::BadContents {
                    expected: show_bytes(expected),
                    found: show_bytes(found),
                },
            ));
        }
        self.pos += expected.len();
        Ok(())
    }

    /// Checks a count before anything is allocated: `count` elements of at least
    /// `min_elem_bytes` each (counted as 1 when 0) must fit in the bytes left. A negative
    /// count is refused the same way. Returns the count as `usize`. Errors: `CountTooLarge`.
    #[inline]
    pub fn check_count(&self, count: i128, min_elem_bytes: usize) -> Result<usize, DecodeError> {
        let c = u64::try_from(count).unwrap_or(u64::MAX);
        let needed = c as u128 * min_elem_bytes.max(1) as u128;
        if needed > self.remaining() as u128 {
            return Err(self.count_error(c, needed));
        }
        Ok(c as usize)
    }

    /// [`ByteReader::check_count`] for a list of bit fields: `count` elements of `width_bits`
    /// bits each must fit in the bits left. Errors: `CountTooLarge` (in whole bytes).
    #[inline]
    pub fn check_count_bits(&self, count: i128, width_bits: u32) -> Result<usize, DecodeError> {
        let c = u64::try_from(count).unwrap_or(u64::MAX);
        let needed_bits = c as u128 * u128::from(width_bits.max(1));
        let avail_bits = self.remaining() as u128 * 8 + u128::from(self.nbits);
        if needed_bits > avail_bits {
            return Err(self.count_error(c, needed_bits.div_ceil(8)));
        }
        Ok(c as usize)
    }

    #[cold]
    fn count_error(&self, count: u64, needed: u128) -> DecodeError {
        DecodeError::new(
            self.offset(),
            DecodeErrorKind::CountTooLarge {
                count,
                needed,
                available: self.remaining(),
            },
        )
    }

    /// Checks that the whole input was used. Errors: `TrailingBytes`.
    pub fn finish(&mut self) -> Result<(), DecodeError> {
        self.align_to_byte()?;
        if self.remaining() != 0 {
            return Err(DecodeError::new(
                self.offset(),
                DecodeErrorKind::TrailingBytes {
                    count: self.remaining(),
                },
            ));
        }
        Ok(())
    }

    read_prim! {
        read_u8, u8, 1, from_le_bytes;
        read_i8, i8, 1, from_le_bytes;
        read_u16le, u16, 2, from_le_bytes;
        read_u16be, u16, 2, from_be_bytes;
        read_i16le, i16, 2, from_le_bytes;
        read_i16be, i16, 2, from_be_bytes;
        read_u32le, u32, 4, from_le_bytes;
        read_u32be, u32, 4, from_be_bytes;
        read_i32le, i32, 4, from_le_bytes;
        read_i32be, i32, 4, from_be_bytes;
        read_u64le, u64, 8, from_le_bytes;
        read_u64be, u64, 8, from_be_bytes;
        read_i64le, i64, 8, from_le_bytes;
        read_i64be, i64, 8, from_be_bytes;
        read_f32le, f32, 4, from_le_bytes;
        read_f32be, f32, 4, from_be_bytes;
        read_f64le, f64, 8, from_le_bytes;
        read_f64be, f64, 8, from_be_bytes;
    }
}

/// Decodes bytes as a string in a schema encoding (`UTF-8` or `ASCII`), at absolute
/// offset `at` for errors. Errors: `BadString` naming the first bad byte's offset.
pub fn decode_str(bytes: &[u8], encoding: &'static str, at: u64) -> Result<String, DecodeError> {
    let bad =
        |detail: String| DecodeError::new(at, DecodeErrorKind::BadString { encoding, detail });
    match encoding {
        "UTF-8" | "ASCII" => {}
        "ISO-8859-1" => return Ok(bytes.iter().map(|&b| b as char).collect()),
        "IBM437" => {
            return Ok(bytes
                .iter()
                .map(|&b| {
                    if b < 0x80 {
                        b as char
                    } else {
                        IBM437_HIGH[usize::from(b - 0x80)]
                    }
                })
                .collect())
        }
        "UTF-16LE" | "UTF-16BE" => {
            if !bytes.len().is_multiple_of(2) {
                return Err(bad(format!("odd length {} for UTF-16", bytes.len())));
            }
            let units = bytes.chunks_exact(2).map(|c| {
                if encoding == "UTF-16LE" {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            });
            return char::decode_utf16(units)
                .enumerate()
                .map(|(i, c)| {
                    c.map_err(|_| {
                        bad(format!(
                            "unpaired surrogate at offset {}",
                            at + 2 * i as u64
                        ))
                    })
                })
                .collect();
        }
        other => {
            let Some(enc) = encoding_rs::Encoding::for_label(other.as_bytes()) else {
                return Err(bad("unknown encoding".into()));
            };
            let (text, had_errors) = enc.decode_without_bom_handling(bytes);
            if had_errors {
                return Err(bad("a byte sequence the encoding does not define".into()));
            }
            return Ok(text.into_owned());
        }
    }
    match encoding {
        "ASCII" => {
            if let Some(i) = bytes.iter().position(|b| *b >= 0x80) {
                return Err(bad(format!(
                    "byte {:#04x} at offset {}",
                    bytes[i],
                    at + i as u64
                )));
            }
            Ok(bytes.iter().map(|&b| b as char).collect())
        }
        _ => match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(bad(format!(
                "invalid sequence at offset {}",
                at + e.valid_up_to() as u64
            ))),
        },
    }
}

/// How a string or byte field ends (Kaitai Struct's `terminator`, `include`, `consume`,
/// `eos-error` and `pad-right`); see [`ByteReader::read_terminated`] and
/// [`ByteWriter::write_terminated`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Term {
    /// The byte that ends the value, if any (`strz`: 0).
    pub terminator: Option<u8>,
    /// The terminator is part of the value (`include: true`).
    pub include: bool,
    /// The terminator is taken from the stream (`consume`, default true).
    pub consume: bool,
    /// A missing terminator at the end of the stream is an error (`eos-error`, default true).
    pub eos_error: bool,
    /// Padding stripped from the right of a sized field (`pad-right`).
    pub pad_right: Option<u8>,
    /// Bytes per character unit: 1, or 2 for a UTF-16 `strz`, whose terminator is two
    /// terminator bytes at an even offset from the field's start.
    pub width: u8,
}

impl Term {
    /// Where the terminator starts in `bytes`, if it is there.
    fn find(&self, bytes: &[u8]) -> Option<usize> {
        let term = self.terminator?;
        let w = usize::from(self.width.max(1));
        (0..bytes.len() / w * w)
            .step_by(w)
            .find(|&i| bytes[i..i + w].iter().all(|b| *b == term))
    }
}

impl Term {
    /// The bytes the field takes for a value of `value_len` bytes: the value and `tail`
    /// (as read), or, without a tail, the value, its terminator and padding to `size`.
    pub fn encoded_len(&self, value_len: usize, tail: Option<&[u8]>, size: Option<usize>) -> usize {
        if let Some(n) = size {
            return n;
        }
        match tail {
            Some(t) => value_len + t.len(),
            None => {
                let w = usize::from(self.width.max(1));
                value_len
                    + if self.terminator.is_some() && self.consume && !self.include {
                        w
                    } else {
                        0
                    }
            }
        }
    }
}

/// A `process` transformation of a field's stored bytes (Kaitai Struct's built-in
/// processors). Reading applies it to the stored bytes to get the value; writing applies the
/// inverse to the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Processor<'k> {
    /// `zlib`: the stored bytes are one zlib stream (RFC 1950) of the value (feature `zlib`).
    #[cfg(feature = "zlib")]
    Zlib,
    /// `xor(key)`: every byte XORed with the key, repeated (a one-byte key for an integer).
    Xor(&'k [u8]),
    /// `rol(n)`: every byte rotated left by `n` bits on read (right on write).
    Rol(i128),
    /// `ror(n)`: every byte rotated right by `n` bits on read (left on write).
    Ror(i128),
}

/// The most a zlib stream may expand: deflate's best ratio is about 1032 to 1, so no real
/// stream of `n` bytes decompresses to more than `1032 * n` (plus slack for tiny inputs).
#[cfg(feature = "zlib")]
fn zlib_limit(n: usize) -> usize {
    n.saturating_mul(1032).saturating_add(1024)
}

fn rotate_all(bytes: &[u8], left: i128) -> Vec<u8> {
    let k = left.rem_euclid(8) as u32;
    bytes.iter().map(|b| b.rotate_left(k)).collect()
}

fn xor_all(bytes: &[u8], key: &[u8]) -> Vec<u8> {
    if key.is_empty() {
        return bytes.to_vec();
    }
    bytes
        .iter()
        .zip(key.iter().cycle())
        .map(|(b, k)| b ^ k)
        .collect()
}

/// The value of a processed field from its stored bytes (read side).
///
/// Errors: `Semantic` naming the problem for a zlib stream that is invalid, does not end,
/// has bytes after it or decompresses past the 1032:1 limit.
pub fn unprocess(p: Processor<'_>, stored: &[u8], at: u64) -> Result<Vec<u8>, DecodeError> {
    // Only a zlib stream can fail, at `at`.
    #[cfg(not(feature = "zlib"))]
    let _ = at;
    Ok(match p {
        #[cfg(feature = "zlib")]
        Processor::Zlib => crate::zlib::inflate(stored, zlib_limit(stored.len())).map_err(|e| {
            DecodeError::new(at, DecodeErrorKind::Semantic(format!("process zlib: {e}")))
        })?,
        Processor::Xor(key) => xor_all(stored, key),
        Processor::Rol(n) => rotate_all(stored, n),
        Processor::Ror(n) => rotate_all(stored, n.wrapping_neg()),
    })
}

/// [`unprocess`] within `room` bytes of output, what is left of the file's processed-bytes
/// budget ([`ByteReader::processed_room`]): a zlib stream that would inflate to more stops
/// there, before anything larger is allocated. Other processors produce as many bytes as
/// they are given (the caller's [`ByteReader::charge_processed`] counts them).
///
/// Errors: as [`unprocess`]; `Semantic` at `at` for a zlib stream that inflates past `room`.
pub fn unprocess_within(
    p: Processor<'_>,
    stored: &[u8],
    at: u64,
    room: u64,
) -> Result<Vec<u8>, DecodeError> {
    #[cfg(feature = "zlib")]
    if let Processor::Zlib = p {
        let room = usize::try_from(room).unwrap_or(usize::MAX);
        if room < zlib_limit(stored.len()) {
            return crate::zlib::inflate(stored, room).map_err(|e| {
                let m = if e.starts_with("decompresses to more than") {
                    format!(
                        "processed fields produced more than the {room} byte(s) left of the file's budget of 65,536 plus 1,032 per input byte (nested compression, or stored bytes shared by many instances?)"
                    )
                } else {
                    format!("process zlib: {e}")
                };
                DecodeError::new(at, DecodeErrorKind::Semantic(m))
            });
        }
    }
    let _ = room;
    unprocess(p, stored, at)
}

/// The stored bytes of a processed field (write side): the bytes read (`kept`) when they
/// still give `value`, so that decode then encode is byte-identical (another zlib would
/// compress differently); otherwise `value` processed anew (zlib at level 6).
pub fn reprocess<'v>(
    p: Processor<'_>,
    value: &[u8],
    kept: Option<&'v [u8]>,
) -> std::borrow::Cow<'v, [u8]> {
    use std::borrow::Cow;
    if let Some(k) = kept {
        if unprocess(p, k, 0).is_ok_and(|v| v == value) {
            return Cow::Borrowed(k);
        }
    }
    Cow::Owned(match p {
        #[cfg(feature = "zlib")]
        Processor::Zlib => crate::zlib::deflate(value, 6),
        Processor::Xor(key) => xor_all(value, key),
        Processor::Rol(n) => rotate_all(value, n.wrapping_neg()),
        Processor::Ror(n) => rotate_all(value, n),
    })
}

/// The upper half (0x80..=0xff) of code page 437, the original IBM PC character set.
const IBM437_HIGH: [char; 128] = [
    'Ç', 'ü', 'é', 'â', 'ä', 'à', 'å', 'ç', 'ê', 'ë', 'è', 'ï', 'î', 'ì', 'Ä', 'Å', //
    'É', 'æ', 'Æ', 'ô', 'ö', 'ò', 'û', 'ù', 'ÿ', 'Ö', 'Ü', '¢', '£', '¥', '₧', 'ƒ', //
    'á', 'í', 'ó', 'ú', 'ñ', 'Ñ', 'ª', 'º', '¿', '⌐', '¬', '½', '¼', '¡', '«', '»', //
    '░', '▒', '▓', '│', '┤', '╡', '╢', '╖', '╕', '╣', '║', '╗', '╝', '╜', '╛', '┐', //
    '└', '┴', '┬', '├', '─', '┼', '╞', '╟', '╚', '╔', '╩', '╦', '╠', '═', '╬', '╧', //
    '╨', '╤', '╥', '╙', '╘', '╒', '╓', '╫', '╪', '┘', '┌', '█', '▄', '▌', '▐', '▀', //
    'α', 'ß', 'Γ', 'π', 'Σ', 'σ', 'µ', 'τ', 'Φ', 'Θ', 'Ω', 'δ', '∞', 'φ', 'ε', '∩', //
    '≡', '±', '≥', '≤', '⌠', '⌡', '÷', '≈', '°', '∙', '·', '√', 'ⁿ', '²', '■', '\u{a0}',
];

/// Encodes `text` in `encoding` (the names [`decode_str`] takes), for writing a string field.
/// UTF-8 text is borrowed as it is.
///
/// Errors: `NotValid` when a character has no encoding in the target character set.
pub fn encode_str<'t>(
    text: &'t str,
    encoding: &'static str,
) -> Result<std::borrow::Cow<'t, [u8]>, EncodeError> {
    use std::borrow::Cow;
    let unmappable = || {
        EncodeError::new(EncodeErrorKind::NotValid {
            value: format!("{text:?}"),
            rule: "a character has no encoding in the field's character set",
        })
    };
    match encoding {
        "UTF-8" => Ok(Cow::Borrowed(text.as_bytes())),
        "ASCII" if text.is_ascii() => Ok(Cow::Borrowed(text.as_bytes())),
        "ASCII" => Err(unmappable()),
        "ISO-8859-1" => text
            .chars()
            .map(|c| u8::try_from(u32::from(c)).map_err(|_| unmappable()))
            .collect::<Result<Vec<u8>, _>>()
            .map(Cow::Owned),
        "IBM437" => text
            .chars()
            .map(|c| {
                if c.is_ascii() {
                    Ok(c as u8)
                } else {
                    IBM437_HIGH
                        .iter()
                        .position(|h| *h == c)
                        .map(|i| 0x80 + i as u8)
                        .ok_or_else(unmappable)
                }
            })
            .collect::<Result<Vec<u8>, _>>()
            .map(Cow::Owned),
        "UTF-16LE" => Ok(Cow::Owned(
            text.encode_utf16().flat_map(u16::to_le_bytes).collect(),
        )),
        "UTF-16BE" => Ok(Cow::Owned(
            text.encode_utf16().flat_map(u16::to_be_bytes).collect(),
        )),
        other => {
            let enc = encoding_rs::Encoding::for_label(other.as_bytes()).ok_or_else(unmappable)?;
            let (bytes, _, had_errors) = enc.encode(text);
            if had_errors {
                return Err(unmappable());
            }
            Ok(Cow::Owned(bytes.into_owned()))
        }
    }
}

macro_rules! write_prim {
    ($($name:ident, $ty:ty, $to:ident;)*) => {$(
        #[doc = concat!("Appends one `", stringify!($ty), "` (", stringify!($to), ").")]
        #[inline]
        pub fn $name(&mut self, v: $ty) {
            self.align_to_byte();
            self.buf.extend_from_slice(&v.$to());
        }
    )*};
}

/// Marks the code after it as rarely run: generated writers call it first on the
/// field-by-field fallback of a run of bit fields (a value wider than its field), so the
/// compiler lays out and allocates registers for the one-step path. Does nothing.
#[cold]
#[inline(never)]
pub fn unlikely() {}

/// The value of a closed enum read as the integer `raw` at `offset`: `from_i`'s value.
///
/// Errors: `raw`'s error; [`DecodeErrorKind::UnknownEnum`] (enum `enum_name`) at `offset`
/// for an integer the enum does not list.
#[inline(always)]
pub fn known<E, I: Into<i128>>(
    offset: u64,
    raw: Result<I, DecodeError>,
    enum_name: &'static str,
    from_i: impl FnOnce(i128) -> Option<E>,
) -> Result<E, DecodeError> {
    let value = raw?.into();
    from_i(value)
        .ok_or_else(|| DecodeError::new(offset, DecodeErrorKind::UnknownEnum { enum_name, value }))
}

/// The value of an optional field to write: `Some` when its `if` condition holds (`holds`)
/// and the value is there, `None` when neither.
///
/// Errors: [`EncodeError::presence`] (field `name`, condition `condition`) when one is
/// without the other.
#[inline(always)]
pub fn present<'a, T>(
    value: &'a Option<T>,
    holds: bool,
    name: &'static str,
    condition: &'static str,
) -> Result<Option<&'a T>, EncodeError> {
    match (holds, value) {
        (true, Some(v)) => Ok(Some(v)),
        (false, None) => Ok(None),
        (holds, v) => Err(EncodeError::presence(name, condition, holds, v.is_some())),
    }
}

/// The error of a bit field value wider than its field.
#[cold]
#[inline(never)]
fn bit_field_out_of_range(value: u64) -> EncodeError {
    EncodeError::new(EncodeErrorKind::OutOfRange {
        value: value.to_string(),
        ty: "a bit field of this width",
    })
}

/// One positional instance, encoded and waiting to be laid out (`crate::positional` lays
/// it out).
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    /// Absolute offset in the output.
    pub(crate) at: usize,
    pub(crate) bytes: Vec<u8>,
    /// The instance's key path in the schema (`types.entry.instances.name`).
    pub(crate) what: &'static str,
    /// An instance of the whole output (`io: _root._io`), whose `at` stays absolute.
    pub(crate) whole: bool,
    /// Placed by the writer itself ([`ByteWriter::derive_position`]): it may start after
    /// the end of the output, the bytes between being zero (padding the writer chose).
    pub(crate) derived: bool,
    /// An instance of a nested type whose place is chosen when the output is laid out
    /// ([`ByteWriter::place_floating`]); `at` means nothing until then.
    pub(crate) float: Option<crate::positional::FloatAt>,
    /// A trailer (`pos: _io.size - k` in the root type, [`ByteWriter::trailer_writer`]):
    /// laid out after everything else, where it ends the output; `at` is provisional.
    pub(crate) trailer: bool,
    /// Placed where the stream is laid out, after everything before it
    /// ([`ByteWriter::place_aligned`]): `at` is the stream's start until then.
    pub(crate) slot: Option<AlignedSlot>,
}

/// Where the writer puts a positional instance it places when the stream is laid out
/// (`-sp-align`), and the integer field that says where it went: `pos = offset + step × n`,
/// `n` the number written, `pos` (from the start of the stream) a multiple of `align`.
#[derive(Debug, Clone, Copy)]
pub struct AlignedSlot {
    /// Where the number goes, as a [`ByteWriter::len`] of the writer the instance is queued
    /// in (taken when the field holding it was written, plus the number's offset in it).
    pub at: usize,
    /// The number's width in bytes (1, 2, 4 or 8).
    pub width: u8,
    /// Whether the number is signed.
    pub signed: bool,
    /// Whether the number is big-endian.
    pub big: bool,
    /// The multiplier of the position expression (positive; 1 for `pos: ofs`).
    pub step: i128,
    /// The literal added in the position expression (0 for `pos: ofs`).
    pub offset: i128,
    /// The alignment: the position is a multiple of it, and zero bytes follow the
    /// instance up to the next multiple.
    pub align: u32,
    /// The smallest and largest number the field's `valid` allows.
    pub min: Option<i128>,
    /// See `min`.
    pub max: Option<i128>,
    /// The field's path in messages (`offset`, `head.ofs_index`).
    pub member: &'static str,
}

/// A growable output buffer, used by every generated writer.
#[derive(Debug, Clone, Default)]
pub struct ByteWriter {
    pub(crate) buf: Vec<u8>,
    /// Where the stream being written starts (a sized field's first byte), for `_io.pos`
    /// and positional instances.
    pub(crate) start: usize,
    /// Positional instances waiting to be laid out (see `crate::positional`).
    pub(crate) placed: Vec<Placement>,
    /// Where this writer's first byte goes in the whole output (non-zero for a positional
    /// instance encoded on its own); `start` and placements are absolute.
    pub(crate) origin: usize,
    /// This writer holds a positional instance of the whole output (`io: _root._io`): its
    /// `origin` is absolute even when it is queued inside a processed substream.
    pub(crate) whole: bool,
    /// Absolute offset before which no instance this writer places itself
    /// ([`ByteWriter::derive_position`]) may start: the end of the enclosing writer's bytes
    /// and instances when this writer was made, and of this writer's own bytes when they are
    /// known in advance ([`ByteWriter::placed_writer`]).
    pub(crate) floor: usize,
    /// This writer's own bytes go after everything it places itself (a trailer, or an
    /// instance whose position the writer derives), so they do not count where those go.
    pub(crate) moves: bool,
    /// This writer encodes a positional instance on its own (made by
    /// [`ByteWriter::instance_writer`], `trailer_writer`, `probe_writer` or `placed_writer`):
    /// the instances of nested types it holds are placed as they are written, not when the
    /// root lays out the output ([`ByteWriter::in_instance`]).
    pub(crate) instance: bool,
    /// Pending bits of an unfinished byte (the low `nbits` bits).
    bits: u8,
    nbits: u8,
    /// The pending bits were written least significant first (`bit-endian: le`): they are
    /// the low bits of the byte, not the high ones.
    bits_le: bool,
}

impl ByteWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer with room for `n` bytes.
    #[inline]
    pub fn with_capacity(n: usize) -> Self {
        Self {
            buf: Vec::with_capacity(n),
            start: 0,
            placed: Vec::new(),
            origin: 0,
            whole: false,
            floor: 0,
            moves: false,
            instance: false,
            bits: 0,
            nbits: 0,
            bits_le: false,
        }
    }

    /// A writer appending to `buf` (whose bytes stay in front).
    #[inline]
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self {
            buf,
            start: 0,
            placed: Vec::new(),
            origin: 0,
            whole: false,
            floor: 0,
            moves: false,
            instance: false,
            bits: 0,
            nbits: 0,
            bits_le: false,
        }
    }

    /// Bytes written so far (an unfinished byte of bit fields counts as written).
    #[inline]
    pub fn len(&self) -> usize {
        self.buf.len() + usize::from(self.nbits > 0)
    }

    /// Bits written so far.
    #[inline]
    pub fn bit_len(&self) -> u64 {
        self.buf.len() as u64 * 8 + u64::from(self.nbits)
    }

    /// Appends the low `width` bits (1..=64) of `value`, most significant first (KS `bN`,
    /// `bit-endian: be`). Errors: `OutOfRange` when `value` does not fit in `width` bits.
    ///
    /// Inlined into the generated writers, where `width` is a constant, so the range check
    /// and the byte loop fold per field; the error is built out of line.
    #[inline]
    pub fn write_bits_be(&mut self, value: u64, width: u32) -> Result<(), EncodeError> {
        if !(1..=64).contains(&width) || (width < 64 && value >> width != 0) {
            return Err(bit_field_out_of_range(value));
        }
        if self.nbits == 0 {
            // A run of big-endian bits starts here, also after little-endian ones.
            self.bits_le = false;
        }
        if width <= 32 {
            self.put_bits32(value, width);
        } else {
            self.put_bits32(value >> 32, width - 32);
            self.put_bits32(value & 0xffff_ffff, 32);
        }
        Ok(())
    }

    /// Appends `value` as a byte-aligned LEB128 varint (`-sp-varint: leb128` over `u1`
    /// groups), shortest form: the groups [`crate::bits::leb128_groups`] gives, one byte
    /// each, after aligning as every byte field does.
    /// On a byte boundary a value below 128 is one push, inlined into the caller; the rest
    /// is one call.
    #[inline(always)]
    pub fn write_varint(&mut self, value: u64) {
        if self.nbits == 0 && value < 0x80 {
            self.buf.push(value as u8);
        } else {
            self.write_varint_general(value);
        }
    }

    /// [`ByteWriter::write_varint`] for a writer inside a byte or a value of several groups.
    #[inline(never)]
    fn write_varint_general(&mut self, value: u64) {
        self.align_to_byte();
        if value < 0x80 {
            self.buf.push(value as u8);
        } else {
            let mut b = [0u8; 10];
            let n = crate::bits::put_varint_slice(&mut b, value);
            self.buf.extend_from_slice(&b[..n]);
        }
    }

    /// Appends one bit field of a run whose values the generated writer checked against
    /// their widths first: what [`ByteWriter::write_bits_be`] writes for `value` (which must
    /// fit in `width`, 1..=32, bits), without the check.
    #[inline(always)]
    pub fn put_run_bits_be(&mut self, value: u64, width: u32) {
        debug_assert!((1..=32).contains(&width) && value >> width == 0);
        if self.nbits == 0 {
            self.bits_le = false;
        }
        self.put_bits32(value, width);
    }

    /// Starts appending a run of big-endian bit fields whose values the generated writer
    /// checked against their widths first: the pending bits move into a [`BitRun`], a local
    /// accumulator, for [`ByteWriter::bit_run_put`] (one call per field) and come back with
    /// [`ByteWriter::end_bit_run`]. The bits are those of one [`ByteWriter::put_run_bits_be`]
    /// per field; the accumulator stays in registers for the whole run instead of being
    /// stored to the writer after every field.
    #[inline(always)]
    pub fn begin_bit_run(&mut self) -> BitRun {
        if self.nbits == 0 {
            self.bits_le = false;
        }
        BitRun {
            acc: u64::from(self.bits),
            n: u32::from(self.nbits),
        }
    }

    /// Appends one field of a run started with [`ByteWriter::begin_bit_run`]: `value` must
    /// fit in `width` (1..=32) bits (checked by the caller; only a debug assertion here).
    #[inline(always)]
    pub fn bit_run_put(&mut self, run: &mut BitRun, value: u64, width: u32) {
        debug_assert!((1..=32).contains(&width) && value >> width == 0);
        (run.acc, run.n) = crate::bits::msb_push(&mut self.buf, run.acc, run.n, value, width);
    }

    /// Ends a run started with [`ByteWriter::begin_bit_run`]: its pending bits (fewer than
    /// eight) go back to the writer.
    #[inline(always)]
    pub fn end_bit_run(&mut self, run: BitRun) {
        self.bits = run.acc as u8;
        self.nbits = run.n as u8;
    }

    /// Appends `width` (1..=32) bits of `value` (already checked to fit) through a u64
    /// accumulator of at most 39 bits: the pending bits (at most 7) and the new ones.
    #[inline(always)]
    fn put_bits32(&mut self, value: u64, width: u32) {
        let (bits, n) = crate::bits::msb_push(
            &mut self.buf,
            u64::from(self.bits),
            u32::from(self.nbits),
            value,
            width,
        );
        self.bits = bits as u8;
        self.nbits = n as u8;
    }

    /// Appends the low `width` bits (1..=64) of `value`, least significant first (KS `bN`
    /// with `bit-endian: le`): they fill each byte from its lowest bit up. Errors:
    /// `OutOfRange` when `value` does not fit in `width` bits.
    #[inline]
    pub fn write_bits_le(&mut self, value: u64, width: u32) -> Result<(), EncodeError> {
        if !(1..=64).contains(&width) || (width < 64 && value >> width != 0) {
            return Err(bit_field_out_of_range(value));
        }
        if self.nbits == 0 {
            self.bits_le = true;
        }
        if width <= 32 {
            self.put_bits32_le(value, width);
        } else {
            self.put_bits32_le(value & 0xffff_ffff, 32);
            self.put_bits32_le(value >> 32, width - 32);
        }
        Ok(())
    }

    /// Appends `width` (1..=32) bits of `value` (already checked to fit) least significant
    /// first (the one LSB-first step, [`crate::bits::lsb::lsb_push`]).
    #[inline(always)]
    fn put_bits32_le(&mut self, value: u64, width: u32) {
        let (bits, n) = crate::bits::lsb::lsb_push(
            &mut self.buf,
            u64::from(self.bits),
            u32::from(self.nbits),
            value,
            width,
        );
        self.bits = bits as u8;
        self.nbits = n as u8;
    }

    /// Completes an unfinished byte with the bits `pad` that a reader dropped there
    /// ([`ByteReader::align_to_byte_keep`]): the bits not written yet, in the bit order the
    /// byte was started in. Nothing happens on a byte boundary.
    pub fn align_to_byte_with(&mut self, pad: u8) {
        if self.nbits == 0 {
            return;
        }
        let n = u32::from(self.nbits);
        let free_mask = ((1u16 << (8 - n)) - 1) as u8;
        let byte = if self.bits_le {
            self.bits | ((pad & free_mask) << n)
        } else {
            (self.bits << (8 - n)) | (pad & free_mask)
        };
        self.buf.push(byte);
        self.bits = 0;
        self.nbits = 0;
        self.bits_le = false;
    }

    /// Pads an unfinished byte with zero bits (KS alignment before a byte-aligned field).
    #[inline]
    pub fn align_to_byte(&mut self) {
        if self.nbits > 0 && self.bits_le {
            self.buf.push(self.bits);
            self.bits = 0;
            self.nbits = 0;
            self.bits_le = false;
        }
        if self.nbits > 0 {
            self.buf.push(self.bits << (8 - self.nbits));
            self.bits = 0;
            self.nbits = 0;
        }
    }

    /// True when nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The bytes written (an unfinished byte is padded with zero bits).
    #[inline(always)]
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.align_to_byte();
        self.buf
    }

    /// The bytes of a substream that the caller transforms before writing them (a
    /// processed or terminated user-type field, written into a writer of its own): the
    /// positional instances queued inside it are laid out in it first, as the root type lays
    /// out its own (their bytes must agree with bytes already there, such as the unread tail
    /// a lenient sized type keeps), except instances of the whole output
    /// (`io: _root._io`), which move to `outer` and are laid out by the root.
    ///
    /// Errors: those of [`ByteWriter::lay_out_positional`], naming the instance.
    pub fn into_stream_bytes(mut self, outer: &mut ByteWriter) -> Result<Vec<u8>, EncodeError> {
        if !self.placed.is_empty() {
            let (whole, own): (Vec<_>, Vec<_>) = std::mem::take(&mut self.placed)
                .into_iter()
                .partition(|p| p.whole);
            outer.placed.extend(whole);
            self.placed = own;
            self.lay_out_positional(&[])?;
        }
        Ok(self.into_bytes())
    }

    /// Overwrites bytes written earlier, from byte `at` (a [`Self::len`] taken before they
    /// were written): a field whose value is known only once later fields are written (a
    /// length derived from a processed field's stored bytes).
    ///
    /// Errors: the range was not written yet (`Semantic`).
    pub fn patch_bytes(&mut self, at: usize, b: &[u8]) -> Result<(), EncodeError> {
        match self.buf.get_mut(at..at.saturating_add(b.len())) {
            Some(dst) if at.checked_add(b.len()).is_some() => {
                dst.copy_from_slice(b);
                Ok(())
            }
            _ => Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                "bytes {at}..{} are patched before they are written",
                at.saturating_add(b.len())
            )))),
        }
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Appends raw bytes.
    #[inline]
    pub fn write_bytes(&mut self, b: &[u8]) {
        self.align_to_byte();
        self.buf.extend_from_slice(b);
    }

    /// Writes a field with a terminator and/or right padding (see [`Term`]). With the `tail`
    /// kept from reading, writes the value and the tail; without one, writes the value, its
    /// terminator (unless `include` or not `consume`) and, in a sized field, padding up to
    /// `size` (the `pad_right` byte, else zeros).
    ///
    /// Errors: `SizeMismatch` when the value and tail do not fill `size` exactly or the value
    /// is longer than `size`; `NotValid` when the value contains the terminator (a reader
    /// would stop there) or, with `include`, does not end with it.
    pub fn write_terminated(
        &mut self,
        value: &[u8],
        tail: Option<&[u8]>,
        size: Option<i128>,
        t: Term,
    ) -> Result<(), EncodeError> {
        let w = usize::from(t.width.max(1));
        if let Some(term) = t.terminator {
            let body = if t.include {
                match value.len().checked_sub(w).map(|k| value.split_at(k)) {
                    Some((body, last)) if last.iter().all(|b| *b == term) => body,
                    // Only a sized field, or one read up to the end of the stream, may end
                    // without its terminator.
                    _ if size.is_some() || !t.eos_error => value,
                    _ => {
                        return Err(EncodeError::new(EncodeErrorKind::NotValid {
                            value: show_bytes(value),
                            rule: "a value that includes its terminator must end with it",
                        }))
                    }
                }
            } else {
                value
            };
            if t.find(body).is_some() {
                return Err(EncodeError::new(EncodeErrorKind::NotValid {
                    value: show_bytes(value),
                    rule: "the value contains its terminator, so a reader would stop early",
                }));
            }
        }
        let size = match size {
            Some(n) => Some(usize::try_from(n).map_err(|_| {
                EncodeError::new(EncodeErrorKind::SizeMismatch {
                    expected: 0,
                    found: value.len(),
                })
            })?),
            None => None,
        };
        self.write_bytes(value);
        match (tail, size) {
            (Some(tail), Some(n)) if value.len() + tail.len() == n => self.write_bytes(tail),
            (Some(tail), None) => self.write_bytes(tail),
            (_, Some(n)) => {
                if value.len() > n {
                    return Err(EncodeError::new(EncodeErrorKind::SizeMismatch {
                        expected: n as u64,
                        found: value.len(),
                    }));
                }
                let mut left = n - value.len();
                if let (Some(term), false, true) = (t.terminator, t.include, left >= w) {
                    self.buf.extend(std::iter::repeat_n(term, w));
                    left -= w;
                }
                let pad = t.pad_right.unwrap_or(0);
                self.buf.extend(std::iter::repeat_n(pad, left));
            }
            (None, None) => {
                if let (Some(term), false, true) = (t.terminator, t.include, t.consume) {
                    self.buf.extend(std::iter::repeat_n(term, w));
                }
            }
        }
        Ok(())
    }

    write_prim! {
        write_u8, u8, to_le_bytes;
        write_i8, i8, to_le_bytes;
        write_u16le, u16, to_le_bytes;
        write_u16be, u16, to_be_bytes;
        write_i16le, i16, to_le_bytes;
        write_i16be, i16, to_be_bytes;
        write_u32le, u32, to_le_bytes;
        write_u32be, u32, to_be_bytes;
        write_i32le, i32, to_le_bytes;
        write_i32be, i32, to_be_bytes;
        write_u64le, u64, to_le_bytes;
        write_u64be, u64, to_be_bytes;
        write_i64le, i64, to_le_bytes;
        write_i64be, i64, to_be_bytes;
        write_f32le, f32, to_le_bytes;
        write_f32be, f32, to_be_bytes;
        write_f64le, f64, to_le_bytes;
        write_f64be, f64, to_be_bytes;
    }
}

/// `a / b` of an expression whose divisor comes from the data, with Kaitai Struct's
/// rounding (toward negative infinity, as [`div_floor`]).
///
/// Errors: `ExprError` "division by zero" when `b` is 0.
pub fn expr_div_floor(a: i128, b: i128) -> Result<i128, ExprError> {
    if b == 0 {
        return Err(ExprError(format!("division by zero ({a} / 0)")));
    }
    Ok(div_floor(a, b))
}

/// `a % b` of two floats in a schema expression: floored, `a - b * floor(a / b)`, so the
/// result takes the divisor's sign as the integer `%` does (`-7.5 % 2.0` is `0.5`). A zero
/// divisor, a NaN or an infinite `a` give NaN; an infinite `b` gives `a` when `a` has `b`'s
/// sign (or is zero) and `b` otherwise (Python's float `%` gives the same).
#[inline]
pub fn expr_fmod_floor(a: f64, b: f64) -> f64 {
    let r = a % b;
    if r != 0.0 && ((r < 0.0) != (b < 0.0)) {
        r + b
    } else {
        r
    }
}

/// `a % b` of an expression whose divisor comes from the data: the remainder takes the
/// divisor's sign (as [`mod_floor`]).
///
/// Errors: `ExprError` "division by zero" when `b` is 0.
pub fn expr_mod_floor(a: i128, b: i128) -> Result<i128, ExprError> {
    if b == 0 {
        return Err(ExprError(format!("division by zero ({a} % 0)")));
    }
    Ok(mod_floor(a, b))
}

/// `a << b` (`left`) or `a >> b` of an expression whose shift amount comes from the data:
/// the same wrapping 128-bit shift as a constant shift (`>>` is arithmetic on the signed
/// value, as Kaitai Struct's targets shift their 64-bit integers).
///
/// Errors: `ExprError` when `b` is outside 0..=63.
pub fn expr_shift(a: i128, b: i128, left: bool) -> Result<i128, ExprError> {
    if !(0..64).contains(&b) {
        let op = if left { "<<" } else { ">>" };
        return Err(ExprError(format!(
            "shift amount {b} outside 0..=63 ({a} {op} {b})"
        )));
    }
    let n = b as u32;
    Ok(if left {
        a.wrapping_shl(n)
    } else {
        a.wrapping_shr(n)
    })
}

/// Integer division as Kaitai Struct's expression language defines it: the quotient rounded
/// toward negative infinity (`-52947 / 13 == -4073`, `7 / -2 == -4`). Wrapping on the one
/// overflow (`i128::MIN / -1`). Generated code divides only by non-zero constants; a zero
/// divisor gives 0 rather than a panic.
pub fn div_floor(a: i128, b: i128) -> i128 {
    if b == 0 {
        return 0;
    }
    let q = a.wrapping_div(b);
    if a.wrapping_rem(b) != 0 && ((a < 0) != (b < 0)) {
        q.wrapping_sub(1)
    } else {
        q
    }
}

/// Integer remainder as Kaitai Struct's expression language defines it: it takes the sign of
/// the divisor, so it is never negative for a positive divisor (`-7 % 3 == 2`,
/// `7 % -3 == -2`); `a == div_floor(a, b) * b + mod_floor(a, b)`. A zero divisor gives 0.
pub fn mod_floor(a: i128, b: i128) -> i128 {
    if b == 0 {
        return 0;
    }
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        r.wrapping_add(b)
    } else {
        r
    }
}

/// Why evaluating a value instance's expression failed: an index past the end of a list or
/// byte array, `.first` / `.last` / `.min` / `.max` of an empty one, a `.substring` range
/// outside the string, a string `.to_i` that is not a number, or bytes `.to_s` that do not
/// decode. Kaitai Struct raises an exception in the same cases; generated value instances
/// that can fail return `Result<_, ExprError>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExprError(pub String);

impl ExprError {
    /// The failure of an expression a reader evaluates, at byte `offset`: a
    /// [`DecodeError`] of kind `Semantic` (the caller adds the field path).
    #[cold]
    pub fn decode_at(self, offset: u64) -> DecodeError {
        DecodeError::new(offset, DecodeErrorKind::Semantic(self.0))
    }

    /// The failure of an expression a writer evaluates: an [`EncodeError`] of kind
    /// `Semantic` (the caller adds the field path).
    #[cold]
    pub fn encode(self) -> EncodeError {
        EncodeError::new(EncodeErrorKind::Semantic(self.0))
    }
}

/// `list[index]` in a schema expression: the element, or an error when `index` is negative
/// or not below `list.len()`. Errors: [`ExprError`].
pub fn expr_at<T>(list: &[T], index: i128) -> Result<&T, ExprError> {
    usize::try_from(index)
        .ok()
        .and_then(|i| list.get(i))
        .ok_or_else(|| {
            ExprError(format!(
                "index {index} is outside a list of {} element(s)",
                list.len()
            ))
        })
}

/// `list.last` in a schema expression. Errors: [`ExprError`] for an empty list.
pub fn expr_last<T>(list: &[T]) -> Result<&T, ExprError> {
    list.last()
        .ok_or_else(|| ExprError("`.last` of an empty list".into()))
}

/// `list.min` (`max == false`) or `list.max` (`max == true`) in a schema expression: the
/// first smallest (largest) element; NaN floats never win a comparison. Errors:
/// [`ExprError`] for an empty list.
pub fn expr_extreme<T: PartialOrd>(list: &[T], max: bool) -> Result<&T, ExprError> {
    let mut it = list.iter();
    let mut best = it.next().ok_or_else(|| {
        ExprError(format!(
            "`.{}` of an empty list",
            if max { "max" } else { "min" }
        ))
    })?;
    for x in it {
        let better = if max { x > best } else { x < best };
        if better {
            best = x;
        }
    }
    Ok(best)
}

/// `s.substring(from, to)` in a schema expression: the characters (Unicode scalar values)
/// `from..to`. Errors: [`ExprError`] when `from > to` or `to` is past the end or `from` is
/// negative.
pub fn expr_substring(s: &str, from: i128, to: i128) -> Result<String, ExprError> {
    let n = s.chars().count();
    let bad = || {
        ExprError(format!(
            "substring({from}, {to}) is outside a string of {n} character(s)"
        ))
    };
    let (a, b) = (
        usize::try_from(from).map_err(|_| bad())?,
        usize::try_from(to).map_err(|_| bad())?,
    );
    if a > b || b > n {
        return Err(bad());
    }
    Ok(s.chars().skip(a).take(b - a).collect())
}

/// `s.to_i` / `s.to_i(radix)` in a schema expression: an optionally signed integer in
/// `radix` (2..=36), with nothing else around it. Errors: [`ExprError`] for a bad radix or
/// text that is not such a number (or does not fit 128 bits).
pub fn expr_str_to_i(s: &str, radix: i128) -> Result<i128, ExprError> {
    let r = u32::try_from(radix)
        .ok()
        .filter(|r| (2..=36).contains(r))
        .ok_or_else(|| ExprError(format!("radix {radix} is not in 2..=36")))?;
    i128::from_str_radix(s, r)
        .map_err(|_| ExprError(format!("{s:?} is not an integer in radix {r}")))
}

/// `bytes.to_s(encoding)` in a schema expression: the bytes decoded as [`decode_str`] does
/// for a field. Errors: [`ExprError`] with the decoder's message.
pub fn expr_bytes_to_s(bytes: &[u8], encoding: &'static str) -> Result<String, ExprError> {
    decode_str(bytes, encoding, 0).map_err(|e| ExprError(e.kind.to_string()))
}

/// Converts a derived count or length to its stored integer type, refusing values that do
/// not fit (`ty` names the stored type for the error). Errors: `OutOfRange`.
#[inline]
pub fn fit<T: TryFrom<i128>>(value: i128, ty: &'static str) -> Result<T, EncodeError> {
    T::try_from(value).map_err(|_| {
        EncodeError::new(EncodeErrorKind::OutOfRange {
            value: value.to_string(),
            ty,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_errors_is_their_message() {
        let d = DecodeError::new(18, DecodeErrorKind::Semantic("bad tick".into()))
            .in_field("tick_count")
            .in_field("head");
        // What `main` returning `Box<dyn Error>` prints after "Error: ".
        let boxed: Box<dyn std::error::Error> = Box::new(d.clone());
        assert_eq!(
            format!("{boxed:?}"),
            "head.tick_count (byte offset 18): bad tick"
        );
        assert_eq!(format!("{d:?}"), d.to_string());
        let long = format!("{d:#?}");
        assert!(
            long.starts_with("DecodeError {") && long.contains("offset: 18"),
            "{long}"
        );
        let e = EncodeError::new(EncodeErrorKind::OutOfRange {
            value: "300".into(),
            ty: "u8",
        })
        .in_field("count");
        assert_eq!(format!("{e:?}"), "count: 300 does not fit in u8");
        assert!(format!("{e:#?}").starts_with("EncodeError {"));
    }

    #[test]
    fn division_floors_like_kaitai() {
        assert_eq!(div_floor(-52947, 13), -4073);
        assert_eq!(div_floor(52947, 13), 4072);
        assert_eq!(div_floor(7, -2), -4);
        assert_eq!(div_floor(-8, 2), -4);
        assert_eq!(mod_floor(-7, 3), 2);
        assert_eq!(mod_floor(7, -3), -2);
        assert_eq!(mod_floor(-52947, 13), -52947 - (-4073 * 13));
        assert_eq!(div_floor(i128::MIN, -1), i128::MIN);
        assert_eq!(mod_floor(i128::MIN, -1), 0);
    }

    #[test]
    fn dropped_padding_bits_are_put_back() {
        for byte in [0xffu8, 0xa5, 0x00] {
            let input = [byte];
            let mut r = ByteReader::new(&input);
            let v = r.read_bits_be(3).unwrap();
            let pad = r.align_to_byte_keep();
            let mut w = ByteWriter::new();
            w.write_bits_be(v, 3).unwrap();
            w.align_to_byte_with(pad);
            assert_eq!(w.into_bytes(), [byte]);
            let mut r = ByteReader::new(&input);
            let v = r.read_bits_le(5).unwrap();
            let pad = r.align_to_byte_keep();
            let mut w = ByteWriter::new();
            w.write_bits_le(v, 5).unwrap();
            w.align_to_byte_with(pad);
            assert_eq!(w.into_bytes(), [byte]);
        }
    }

    #[test]
    fn le_bit_fields_fill_bytes_from_the_low_bit() {
        // b3 = 5, b7 = 0x55, b6 = 0x2a, little-endian bit order: 16 bits over two bytes.
        let mut w = ByteWriter::new();
        w.write_bits_le(5, 3).unwrap();
        w.write_bits_le(0x55, 7).unwrap();
        w.write_bits_le(0x2a, 6).unwrap();
        let bytes = w.into_bytes();
        assert_eq!(bytes, [0xad, 0xaa]);
        let mut r = ByteReader::new(&bytes);
        assert_eq!(r.read_bits_le(3).unwrap(), 5);
        assert_eq!(r.read_bits_le(7).unwrap(), 0x55);
        assert_eq!(r.read_bits_le(6).unwrap(), 0x2a);
        // A partial byte is padded with zero high bits.
        let mut w = ByteWriter::new();
        w.write_bits_le(1, 1).unwrap();
        w.align_to_byte();
        w.write_u8(7);
        assert_eq!(w.into_bytes(), [0x01, 0x07]);
        let mut r = ByteReader::new(&[0x0f; 8]);
        assert_eq!(r.read_bits_le(64).unwrap(), 0x0f0f_0f0f_0f0f_0f0f);
    }

    #[test]
    #[cfg(feature = "zlib")]
    fn processors_invert_and_keep_stored_bytes() {
        let v = b"hello hello hello".to_vec();
        for p in [
            Processor::Zlib,
            Processor::Xor(&[0x15]),
            Processor::Xor(&[1, 2, 3]),
            Processor::Rol(3),
            Processor::Ror(11),
        ] {
            let stored = reprocess(p, &v, None).into_owned();
            assert_eq!(unprocess(p, &stored, 0).unwrap(), v, "{p:?}");
            assert!(matches!(
                reprocess(p, &v, Some(&stored)),
                std::borrow::Cow::Borrowed(_)
            ));
        }
        assert_eq!(unprocess(Processor::Rol(1), &[0x81], 0).unwrap(), [0x03]);
        assert_eq!(unprocess(Processor::Ror(1), &[0x03], 0).unwrap(), [0x81]);
        assert!(unprocess(Processor::Zlib, b"not zlib", 0).is_err());
        // Stored bytes that no longer give the value are not reused.
        let stored = reprocess(Processor::Zlib, b"abc", None).into_owned();
        assert!(matches!(
            reprocess(Processor::Zlib, b"abd", Some(&stored)),
            std::borrow::Cow::Owned(_)
        ));
    }

    #[test]
    fn encodings_round_trip() {
        for (enc, bytes, text) in [
            ("UTF-16LE", &b"a\0\xe9\0"[..], "aé"),
            ("UTF-16BE", &b"\0a\0\xe9"[..], "aé"),
            ("ISO-8859-1", &b"caf\xe9\x80"[..], "café\u{80}"),
            ("IBM437", &b"\x80\xe1\xff"[..], "Çß\u{a0}"),
            ("SHIFT_JIS", &b"\x82\xa0"[..], "あ"),
        ] {
            let s = decode_str(bytes, enc, 0).unwrap();
            assert_eq!(s, text, "{enc}");
            assert_eq!(encode_str(&s, enc).unwrap().as_ref(), bytes, "{enc}");
        }
        assert!(decode_str(b"a", "UTF-16LE", 0).is_err());
        assert!(encode_str("€", "ISO-8859-1").is_err());
    }

    #[test]
    fn terminated_fields_read_and_write_back() {
        let t = Term {
            terminator: Some(0),
            include: false,
            consume: true,
            eos_error: true,
            pad_right: None,
            width: 1,
        };
        let mut r = ByteReader::new(b"ab\0cd");
        assert_eq!(
            r.read_terminated(None, t).unwrap(),
            (&b"ab"[..], &b"\0"[..])
        );
        assert!(
            r.read_terminated(None, t).is_err(),
            "no terminator before the end"
        );
        let lenient = Term {
            eos_error: false,
            ..t
        };
        assert_eq!(
            r.read_terminated(None, lenient).unwrap(),
            (&b"cd"[..], &b""[..])
        );
        // Sized: the value ends at the terminator.
        let padded = Term {
            terminator: Some(b'|'),
            pad_right: Some(b'@'),
            ..t
        };
        let mut r = ByteReader::new(b"ab|x@@ab@@@@");
        let (v, tail) = r.read_terminated(Some(6), padded).unwrap();
        assert_eq!((v, tail), (&b"ab"[..], &b"|x@@"[..]));
        // Padding is stripped only when there is no terminator.
        assert_eq!(
            r.read_terminated(Some(6), padded).unwrap(),
            (&b"ab"[..], &b"@@@@"[..])
        );
        let mut w = ByteWriter::new();
        w.write_terminated(v, Some(tail), Some(6), padded).unwrap();
        assert_eq!(w.into_bytes(), b"ab|x@@");
        // Without a tail: terminator, then padding.
        let mut w = ByteWriter::new();
        w.write_terminated(b"ab", None, Some(5), padded).unwrap();
        assert_eq!(w.into_bytes(), b"ab|@@");
        // UTF-16: a two-byte terminator at an even offset.
        let wide = Term { width: 2, ..t };
        let mut r = ByteReader::new(b"a\0\0b\0\0x");
        assert_eq!(
            r.read_terminated(None, wide).unwrap(),
            (&b"a\0\0b"[..], &b"\0\0"[..])
        );
        let mut w = ByteWriter::new();
        w.write_terminated(b"a\0\0b", None, None, wide).unwrap();
        assert_eq!(w.into_bytes(), b"a\0\0b\0\0");
        let mut w = ByteWriter::new();
        assert!(w.write_terminated(b"a\0b", None, None, t).is_err());
        assert!(w
            .write_terminated(b"abcdef", None, Some(5), padded)
            .is_err());
    }

    #[test]
    fn pop_limit_skip_returns_the_unread_rest() {
        let mut r = ByteReader::new(&[1, 2, 3, 4, 5]);
        let old = r.push_limit(3).unwrap();
        assert_eq!(r.read_u8().unwrap(), 1);
        assert_eq!(r.pop_limit_skip(old).unwrap(), (0, &[2u8, 3][..]));
        assert_eq!(r.read_u8().unwrap(), 4);
    }

    #[test]
    fn path_display_is_outermost_first() {
        let e = DecodeError::new(70, DecodeErrorKind::Semantic("x".into()))
            .in_field("rot_delta")
            .in_index(57)
            .in_field("frames")
            .in_index(2)
            .in_field("recordings");
        assert_eq!(e.path.to_string(), "recordings[2].frames[57].rot_delta");
        assert_eq!(
            e.to_string(),
            "recordings[2].frames[57].rot_delta (byte offset 70): x"
        );
    }

    #[test]
    fn reads_fail_closed() {
        let mut r = ByteReader::new(&[1, 2, 3]);
        assert_eq!(r.read_u16le().unwrap(), 0x0201);
        let e = r.read_u16le().unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(matches!(
            e.kind,
            DecodeErrorKind::UnexpectedEof {
                needed: 2,
                available: 1
            }
        ));
        assert_eq!(r.read_u8().unwrap(), 3);
        assert!(r.is_eof());
    }

    #[test]
    fn count_guard_refuses_bombs() {
        let r = ByteReader::new(&[0; 10]);
        assert_eq!(r.check_count(5, 2).unwrap(), 5);
        assert!(r.check_count(6, 2).is_err());
        assert!(r.check_count(u64::MAX as i128, 18).is_err());
        assert!(r.check_count(1_000_000, 0).is_err());
        assert!(r.check_count(-1, 1).is_err());
    }

    #[test]
    fn contents_mismatch_names_found_bytes() {
        let mut r = ByteReader::new(b"SNAPV1.2\x00");
        let e = r.expect(b"SNAPV1.3").unwrap_err();
        assert_eq!(
            e.to_string(),
            "<root> (byte offset 0): expected \"SNAPV1.3\", found \"SNAPV1.2\""
        );
        let mut r = ByteReader::new(b"SNAP");
        assert!(matches!(
            r.expect(b"SNAPV1.3").unwrap_err().kind,
            DecodeErrorKind::UnexpectedEof { .. }
        ));
    }

    #[test]
    fn limits_keep_absolute_offsets() {
        let mut r = ByteReader::new(&[0, 0, 0, 9, 9, 7]);
        r.take(3).unwrap();
        let old = r.push_limit(2).unwrap();
        r.read_u8().unwrap();
        assert_eq!(r.offset(), 4);
        assert_eq!(r.read_u16le().unwrap_err().offset, 4);
        assert!(r.pop_limit(old).is_err());
        r.read_u8().unwrap();
        r.pop_limit(old).unwrap();
        assert_eq!(r.read_u8().unwrap(), 7);
    }

    #[test]
    fn fit_refuses_overflow() {
        assert_eq!(fit::<u8>(255, "u8").unwrap(), 255);
        assert!(fit::<u8>(-1, "u8").is_err());
        assert!(fit::<u8>(256, "u8").is_err());
    }

    #[test]
    fn tree_tracer_records_ranges() {
        let mut r = ByteReader::with_tracer(&[1, 2, 3], TreeTracer::new("root"));
        r.enter(PathSeg::Field("a"));
        let v = r.read_u8().unwrap();
        r.leave(Some(&v));
        r.enter(PathSeg::Field("b"));
        let v = r.read_u16le().unwrap();
        r.leave(Some(&v));
        let end = r.offset();
        let t = r.tracer.finish(end);
        assert_eq!(t.children.len(), 2);
        assert_eq!((t.children[1].start, t.children[1].end), (1, 3));
        assert_eq!(t.children[1].value.as_deref(), Some("770"));
        assert_eq!(t.children[1].typed, Some(TraceValue::Int(770)));
    }

    #[test]
    fn strings_are_checked() {
        assert!(decode_str(&[0xff], "UTF-8", 10).is_err());
        assert_eq!(decode_str(b"ok", "ASCII", 0).unwrap(), "ok");
    }
}

/// Lossless JSON form of float fields, for `#[serde(with = "...")]` on generated members.
///
/// Finite values are JSON numbers (an `f32` goes through `f64` exactly, and the shortest
/// printed form reads back to the same bits). Non-finite values, which JSON numbers cannot
/// hold, are strings: `"inf"`, `"-inf"`, `"NaN"` for the canonical quiet NaN, and
/// `"nan:0x…"` with the exact bit pattern for any other NaN. So `statepack decode` followed by
/// `statepack encode` gives back the same bytes for every stored float. Works on the member
/// shapes the generator emits: `f32`, `f64`, and `Option`, `Vec` or fixed arrays of them.
#[cfg(feature = "serde")]
pub mod float_json {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// The JSON shape of a float member.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(untagged)]
    pub enum Repr {
        /// A finite value.
        Num(f64),
        /// `inf`, `-inf`, `NaN` or `nan:0x<bits>`.
        Text(String),
        /// A list or array.
        List(Vec<Repr>),
        /// An absent optional member.
        Null,
    }

    /// A member type with a lossless JSON form.
    pub trait FloatRepr: Sized {
        /// To the JSON shape.
        fn to_repr(&self) -> Repr;
        /// From the JSON shape. Errors: a message naming what was expected.
        fn from_repr(r: Repr) -> Result<Self, String>;
    }

    macro_rules! float_repr {
        ($t:ty, $bits:ty, $canon:expr, $hexw:expr) => {
            impl FloatRepr for $t {
                fn to_repr(&self) -> Repr {
                    let v = *self;
                    if v.is_finite() {
                        Repr::Num(v as f64)
                    } else if v == <$t>::INFINITY {
                        Repr::Text("inf".into())
                    } else if v == <$t>::NEG_INFINITY {
                        Repr::Text("-inf".into())
                    } else if v.to_bits() == $canon {
                        Repr::Text("NaN".into())
                    } else {
                        Repr::Text(format!("nan:{:#0w$x}", v.to_bits(), w = $hexw))
                    }
                }
                fn from_repr(r: Repr) -> Result<Self, String> {
                    match r {
                        Repr::Num(n) => {
                            let v = n as $t;
                            if v.is_finite() {
                                Ok(v)
                            } else {
                                Err(format!("{n} is out of range for {}", stringify!($t)))
                            }
                        }
                        Repr::Text(t) => match t.as_str() {
                            "inf" => Ok(<$t>::INFINITY),
                            "-inf" => Ok(<$t>::NEG_INFINITY),
                            "NaN" => Ok(<$t>::from_bits($canon)),
                            s => s
                                .strip_prefix("nan:0x")
                                .and_then(|h| <$bits>::from_str_radix(h, 16).ok())
                                .map(<$t>::from_bits)
                                .filter(|v| v.is_nan())
                                .ok_or_else(|| {
                                    format!("`{s}` is not a number, inf, -inf, NaN or nan:0x<bits>")
                                }),
                        },
                        other => Err(format!("expected a number, found {other:?}")),
                    }
                }
            }
        };
    }
    float_repr!(f32, u32, 0x7fc0_0000, 10);
    float_repr!(f64, u64, 0x7ff8_0000_0000_0000, 18);

    impl<T: FloatRepr> FloatRepr for Option<T> {
        fn to_repr(&self) -> Repr {
            self.as_ref().map_or(Repr::Null, T::to_repr)
        }
        fn from_repr(r: Repr) -> Result<Self, String> {
            match r {
                Repr::Null => Ok(None),
                r => T::from_repr(r).map(Some),
            }
        }
    }

    impl<T: FloatRepr> FloatRepr for Vec<T> {
        fn to_repr(&self) -> Repr {
            Repr::List(self.iter().map(T::to_repr).collect())
        }
        fn from_repr(r: Repr) -> Result<Self, String> {
            match r {
                Repr::List(items) => items.into_iter().map(T::from_repr).collect(),
                other => Err(format!("expected a list, found {other:?}")),
            }
        }
    }

    impl<T: FloatRepr, const N: usize> FloatRepr for [T; N] {
        fn to_repr(&self) -> Repr {
            Repr::List(self.iter().map(T::to_repr).collect())
        }
        fn from_repr(r: Repr) -> Result<Self, String> {
            let v: Vec<T> = Vec::from_repr(r)?;
            let n = v.len();
            v.try_into()
                .map_err(|_| format!("expected {N} values, found {n}"))
        }
    }

    /// `serialize_with` entry point.
    pub fn serialize<T: FloatRepr, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        v.to_repr().serialize(s)
    }

    /// `deserialize_with` entry point. Errors: the value's shape or text is not a float form.
    pub fn deserialize<'de, T: FloatRepr, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        T::from_repr(Repr::deserialize(d)?).map_err(serde::de::Error::custom)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn every_special_value_round_trips_bit_exactly() {
            let f32s = [
                0.0f32,
                -0.0,
                1.5,
                f32::MIN_POSITIVE,
                f32::MAX,
                f32::from_bits(0xC358_1EC5),
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                f32::from_bits(0x7fc0_0001),
                f32::from_bits(0xffc0_0000),
                f32::from_bits(1),
            ];
            for v in f32s {
                let json = serde_json::to_string(&v.to_repr()).unwrap();
                let back = f32::from_repr(serde_json::from_str(&json).unwrap()).unwrap();
                assert_eq!(back.to_bits(), v.to_bits(), "{json}");
            }
            let arr = [f64::NAN, 2.0, f64::NEG_INFINITY];
            let json = serde_json::to_string(&arr.to_repr()).unwrap();
            assert_eq!(json, "[\"NaN\",2.0,\"-inf\"]");
            let back = <[f64; 3]>::from_repr(serde_json::from_str(&json).unwrap()).unwrap();
            assert_eq!(back.map(f64::to_bits), arr.map(f64::to_bits));
            assert!(f32::from_repr(Repr::Text("nan:0x3f800000".into())).is_err());
            assert!(f32::from_repr(Repr::Num(1e300)).is_err());
        }
    }
}

#[cfg(test)]
mod bit_field_tests {
    use super::*;

    #[test]
    fn bit_fields_round_trip_through_byte_reader_and_writer() {
        let mut w = ByteWriter::new();
        w.write_bits_be(0b101, 3).unwrap();
        w.write_bits_be(0x3_ffff, 18).unwrap();
        w.write_bits_be(u64::MAX, 64).unwrap();
        assert!(w.write_bits_be(4, 2).is_err());
        assert_eq!(w.bit_len(), 85);
        w.write_u8(0x7e);
        let b = w.into_bytes();
        assert_eq!(b.len(), 12);
        let mut r = ByteReader::new(&b);
        assert_eq!(r.read_bits_be(3).unwrap(), 0b101);
        assert_eq!(r.offset(), 1);
        assert_eq!(r.read_bits_be(18).unwrap(), 0x3_ffff);
        assert_eq!(r.read_bits_be(64).unwrap(), u64::MAX);
        assert_eq!(r.bit_offset(), 85);
        r.align_to_byte().unwrap();
        assert_eq!(r.read_u8().unwrap(), 0x7e);
        r.finish().unwrap();
        // Past the end: refused before anything is consumed.
        let mut r = ByteReader::new(&b[..2]);
        assert!(r.read_bits_be(17).is_err());
        assert_eq!(r.read_bits_be(16).unwrap() >> 13, 0b101);
        // Padding must be zero.
        let mut r = ByteReader::new(&[0b1010_0001]);
        r.read_bits_be(3).unwrap();
        assert!(r.align_to_byte().is_err());
    }
}
