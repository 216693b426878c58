//! The intermediate representation: a schema after loading, in a fixed order (the root type
//! first, then `types` in document order; enums in document order), ready for checks and emit.

use crate::diag::Pos;
use crate::expr::Expr;

/// A user type of a schema: its index in [`Schema::types`] (see [`Schema::ty`]). Given by
/// `crate::resolve`; types are never removed or reordered after it, so an id stays valid for
/// the life of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

/// An enum of a schema: its index in [`Schema::enums`] (see [`Schema::enm`]), stable as
/// [`TypeId`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EnumId(pub u32);

/// A reference to a user type. Lowering writes the name as written in the schema
/// (`Named`, `outer::inner`); `crate::resolve` turns every name that means a type of the
/// schema into its `Id`. A `Named` left after resolve is a name no type defines: an opaque
/// type (`meta.ks-opaque-types: true`, its Rust path from the build's options) or an unknown
/// type, which the check stage reports. Only lowering constructs `Named`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeRef {
    /// A name not (yet) resolved.
    Named(String),
    /// A type of the schema.
    Id(TypeId),
}

/// A reference to an enum, as [`TypeRef`] is to a type: `Named` (as written) until resolve,
/// then `Id`; a `Named` left after resolve is an unknown enum, which the check stage
/// reports.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EnumRef {
    /// A name not (yet) resolved.
    Named(String),
    /// An enum of the schema.
    Id(EnumId),
}

impl TypeRef {
    /// The type's id, or `None` for a name no type defines.
    pub fn id(&self) -> Option<TypeId> {
        match self {
            TypeRef::Id(i) => Some(*i),
            TypeRef::Named(_) => None,
        }
    }
}

impl EnumRef {
    /// The enum's id, or `None` for a name no enum defines.
    pub fn id(&self) -> Option<EnumId> {
        match self {
            EnumRef::Id(i) => Some(*i),
            EnumRef::Named(_) => None,
        }
    }
}

/// Byte order of multi-byte numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Little-endian (`le`).
    Le,
    /// Big-endian (`be`).
    Be,
    /// Decided when the type starts reading: its `meta.endian` (or an enclosing type's) is a
    /// switch ([`EndianSwitch`]); the generated code holds the choice in `__is_le`.
    Computed,
}

/// `meta.endian: {switch-on: expr, cases: {key: le, key: be, _: le}}`: the byte order of a
/// type's numbers without a suffix, decided from `on` when the type starts reading (and again
/// on write, from the same values). Without `_`, a value no case names is an error
/// (Kaitai Struct's `UndecidedEndiannessError`).
#[derive(Debug, Clone)]
pub struct EndianSwitch {
    /// The value deciding the byte order.
    pub on: SrcExpr,
    /// Case keys (literals) and the byte order each selects (`Le` or `Be`).
    pub cases: Vec<(SrcExpr, Endian)>,
    /// The `_` case, if any.
    pub default: Option<Endian>,
    /// Where `meta.endian` is.
    pub pos: Pos,
    /// Its key path (`types.main.meta.endian`), for errors.
    pub key_path: String,
}

/// A loaded schema.
#[derive(Debug, Clone)]
pub struct Schema {
    /// `meta.id`, snake_case; the root type's name.
    pub id: String,
    /// The schema file as given to the generator (used in headers and errors).
    pub file: String,
    /// `meta.title`, if any.
    pub title: Option<String>,
    /// Default byte order (`meta.endian`).
    pub endian: Option<Endian>,
    /// Types, the root first.
    pub types: Vec<TypeDef>,
    /// Enums.
    pub enums: Vec<EnumDef>,
    /// `-sp-column-sets`: typed column sets (see `crate::columns`).
    pub column_sets: Vec<crate::columns::ColumnSet>,
    /// `meta.-sp-strict: true`: statepack's strict rules for every field (closed enums,
    /// sized types read to their end, a switch must select a case). Off: Kaitai's rules.
    pub strict: bool,
    /// `meta.imports` as written (`common/header`, `/abs/name`, `../x`), with where each is.
    pub imports: Vec<(String, crate::diag::Pos)>,
    /// `meta.ks-opaque-types: true`: a type name the schema does not define names an
    /// external Rust type (see `statepack_runtime::process::OpaqueType`).
    pub opaque_types: bool,
    /// The opaque type names used by fields (filled when names are resolved).
    pub opaque: Vec<String>,
    /// Warnings of this file and its imports: accepted, but worth a look (unknown encodings).
    pub warnings: Vec<crate::diag::Diag>,
    /// Types and enums by unique name, built by `crate::resolve` (see
    /// [`Schema::type_named`]).
    pub names: NameIndex,
}

/// One user type (a `seq` of fields).
#[derive(Debug, Clone)]
pub struct TypeDef {
    /// Its index in [`Schema::types`] (set by `crate::resolve`).
    pub id: TypeId,
    /// Unique name in the schema (snake_case): the name as written for the root and
    /// top-level types, `<outer>_<name>` (made unique) for nested ones. Rust names come from
    /// it.
    pub name: String,
    /// The name as written in the schema (the key under `types`; `meta.id` for the root).
    pub schema_name: String,
    /// Written names of the enclosing types and this one, from the top level
    /// (`["outer", "inner"]`); empty for the root type. References resolve innermost-out.
    pub scope: Vec<String>,
    /// The schema file that defines the type, as diagnostics name it (the importing
    /// schema's or an imported one's). `_parent` is typed within this file, as in Kaitai
    /// Struct: only fields of types of the same file say what a type's parent is.
    pub file: String,
    /// `doc`, if any.
    pub doc: Option<String>,
    /// Where the type is defined.
    pub pos: Pos,
    /// Key path of the type (`types.frame`), for errors.
    pub key_path: String,
    /// The fields in stream order.
    pub fields: Vec<Field>,
    /// Value instances (`instances` with `value`), in document order.
    pub instances: Vec<Instance>,
    /// `params`: values the type is given by the field that reads it, in order.
    pub params: Vec<Param>,
    /// The type's own `meta.endian` when it is a switch (see [`EndianSwitch`]).
    pub endian_switch: Option<EndianSwitch>,
    /// The type is nested (lexically) in a type whose byte order is a switch and has no
    /// `meta.endian` of its own: it takes the decided byte order from the field reading it
    /// (a hidden param `__is_le`, added by `crate::endian`).
    pub endian_inherited: bool,
    /// `to-string`: a string expression over the type's members that describes a value
    /// (the generated Rust type's `Display`).
    pub to_string: Option<SrcExpr>,
    /// `-sp-end-zeros: N`: the type reads to the end of its stream, which holds, after its
    /// `seq`, the `-sp-align` instances placed in it, then `N` zero bytes; the reader checks
    /// that the bytes are what the writer writes from the value, so nothing is kept.
    pub end_zeros: Option<u32>,
}

/// One entry of a type's `params`.
#[derive(Debug, Clone)]
pub struct Param {
    /// The parameter's name (snake_case).
    pub id: String,
    /// `doc`, if any.
    pub doc: Option<String>,
    /// Where it is defined.
    pub pos: Pos,
    /// Its kind.
    pub kind: ParamKind,
    /// For a context param made by `crate::context`: the expression it stands for
    /// (`_parent.header.len`). `None` for a param written in the schema.
    pub context: Option<String>,
    /// The value may be absent (a context param some reader cannot give, under
    /// `parent: false`): the member is an `Option` and using it when absent is an error.
    pub optional: bool,
}

/// What a parameter holds.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    /// An integer (`u1` .. `s8`, `b1`..`b64` wider than 1 bit), kept as `i128`.
    Int,
    /// A condition (`bool`, `b1`).
    Bool,
    /// A float (`f4`, `f8`), kept as `f64`.
    Float,
    /// Text (`str`, `strz`).
    Str,
    /// Bytes (`bytes`).
    Bytes,
    /// A value of this enum (`type: u1` + `enum: e`).
    Enum(EnumRef),
    /// A value of this user type (`type: block`), kept as a copy.
    User(TypeRef),
    /// `type: struct`: a value of some user type; the type is taken from the arguments
    /// given (every field passing it must give the same type) before emit.
    Struct,
    /// A `struct` param given values of these user types (sorted by name, at least one): a
    /// copy of one of them, which one is known when the value is (see `Ty::AnyStruct`).
    AnyUser(Vec<TypeId>),
    /// A list of values (`type: u2[]`, `str[]`, `block[]`, `struct[]`).
    List(Box<ParamKind>),
    /// A stream (`type: io`): its position and size
    /// (`statepack_runtime::positional::Stream`, see `emit::io_of`).
    Io,
}

/// A value instance: a named value computed from the type's fields, never stored in the
/// bytes.
#[derive(Debug, Clone)]
pub struct Instance {
    /// The instance's name (snake_case).
    pub id: String,
    /// `doc`, if any.
    pub doc: Option<String>,
    /// Where the instance is defined.
    pub pos: Pos,
    /// Key path (`types.frame.instances.total`), for errors.
    pub key_path: String,
    /// `value`: the expression.
    pub value: SrcExpr,
    /// `if`: the instance has a value only when this holds.
    pub cond: Option<SrcExpr>,
    /// `enum`: the integer value is seen as a value of this enum.
    pub enum_name: Option<EnumRef>,
}

/// One enum.
#[derive(Debug, Clone)]
pub struct EnumDef {
    /// Its index in [`Schema::enums`] (set by `crate::resolve`).
    pub id: EnumId,
    /// Unique name in the schema (snake_case), as for [`TypeDef::name`].
    pub name: String,
    /// The name as written in the schema.
    pub schema_name: String,
    /// [`TypeDef::scope`] of the type that defines the enum (empty for top-level enums).
    pub scope: Vec<String>,
    /// Where the enum is defined.
    pub pos: Pos,
    /// Values: number, name, doc.
    pub values: Vec<EnumValue>,
}

/// One enum value.
#[derive(Debug, Clone)]
pub struct EnumValue {
    /// The integer stored.
    pub value: i128,
    /// The name (snake_case).
    pub name: String,
    /// `doc`, if any.
    pub doc: Option<String>,
    /// Where the value's name is written.
    pub pos: Pos,
}

/// An expression together with the text it was written as.
#[derive(Debug, Clone)]
pub struct SrcExpr {
    /// Parsed form.
    pub expr: Expr,
    /// As written in the schema.
    pub src: String,
    /// Where it is.
    pub pos: Pos,
}

/// One field of a `seq`.
#[derive(Debug, Clone)]
pub struct Field {
    /// `id` (snake_case).
    pub id: String,
    /// Arguments of a user type with `params` (`type: block(len, 2)`), in order.
    pub args: Vec<SrcExpr>,
    /// `doc`, if any.
    pub doc: Option<String>,
    /// Where the field's entry starts.
    pub pos: Pos,
    /// Key path (`types.frame.seq[2]`), for errors.
    pub key_path: String,
    /// Where each key's value starts (`type`, `enum`, ...), for errors about one key.
    pub value_pos: Vec<(String, Pos)>,
    /// What is stored.
    pub kind: FieldKind,
    /// For a switch field: the snake-case name of the generated enum of its cases (its
    /// CamelCase is the Rust name), `<type>_<field>` made distinct from every other Rust item
    /// by `crate::resolve`; empty for other fields.
    pub switch_enum: String,
    /// Repetition.
    pub repeat: Repeat,
    /// `if` condition.
    pub cond: Option<SrcExpr>,
    /// `valid` rule.
    pub valid: Option<Valid>,
    /// `-sp-units`: the unit of the stored number, for docs and tools.
    pub units: Option<String>,
    /// `-sp-sum-of: list.field`: this field equals the sum of `field` over the elements of
    /// `list` (derived on write, checked on read).
    pub sum_of: Option<(String, String, Pos)>,
    /// `-sp-box: true`: the member is a `Box` of its user type (keeps large, rarely present
    /// types out of the size of the enclosing struct or switch enum). Bytes are unchanged.
    pub boxed: bool,
    /// `-sp-varint: leb128`: the list of LEB128 groups (`u1` or `b8` elements with
    /// `repeat-until: _ < 128`) is one unsigned number (`u64`) in the generated type.
    pub varint: bool,
    /// Statepack's strict rules apply to this field (`-sp-strict`, defaulting to
    /// `meta.-sp-strict`): an unknown enum value, a sized type that leaves bytes unread and
    /// a switch that selects no case are decode errors.
    pub strict: bool,
    /// Terminator and padding rules of a string or byte field, when it has any beyond a
    /// plain `strz` or a plain size.
    pub term: Option<TermSpec>,
    /// `process`: how the stored bytes of a sized byte field or user type become its value.
    pub process: Option<Process>,
    /// A positional instance (`instances` with `pos`) lowered to a field: where it is read.
    /// `None` for `seq` fields.
    pub at: Option<Box<Positional>>,
    /// `parent`: what the read type sees as `_parent`.
    pub parent: ParentSpec,
    /// Context arguments: for each user type this field reads (the type, or each case type
    /// of a switch), the values of that type's context params (`_parent.x`, `_root.y`),
    /// as expressions over this type. Filled by `crate::context`, after the explicit
    /// `args`.
    /// `None` is an absent value (given where `parent: false` leaves no `_parent`).
    pub ctx_args: Vec<(TypeId, Vec<Option<SrcExpr>>)>,
    /// Arguments written in a switch's cases (`cases: {1: block(3)}`), per case type (one
    /// list per type: a type named by several cases gets the same arguments).
    pub switch_args: Vec<(TypeRef, Vec<SrcExpr>)>,
    /// The user types this field reads that contain the field's own type again (recursive
    /// types): held in a `Box`, and read one nesting level deeper (bounded by
    /// `statepack_runtime::io::MAX_RECURSION`). Filled by `crate::context`.
    pub recursive: Vec<TypeId>,
}

/// Where a positional instance is read: byte `pos` of its stream.
#[derive(Debug, Clone)]
pub struct Positional {
    /// `pos`: the position in the stream.
    pub pos: SrcExpr,
    /// `io: _root._io`: the stream is the whole input (else the type's own stream, `_io`).
    pub whole: bool,
    /// `io: X._io` for a user-type value `X` (a field, `_parent.list[0]`): the stream is the
    /// substream `X` was read from, rebuilt from `X` (see `emit::io_of`). `X` is kept here
    /// without the `._io`.
    pub io_of: Option<SrcExpr>,
    /// `io: _root.X._io` where `X` is a field of the root type read after the field that
    /// reads this type (a forward stream): `X`. The instance is then always read on first
    /// use, from `X`'s substream as the root's reader kept it (see `crate::lazy` and
    /// `emit::io_later`); `io_of` is `None`.
    pub io_later: Option<String>,
    /// `-sp-lazy` (default `true`): the instance may be read on first use when nothing names
    /// it (see `crate::lazy::lazy_instances`); `false` has the type's reader read it.
    pub lazy: bool,
    /// `-sp-align: N`: an instance the writer places itself goes at a multiple of `N` bytes
    /// from the start of its stream, in the order the instances are written, each after the
    /// one before, with zero bytes after it up to the next multiple of `N` (see
    /// `crate::derive::placed_instances`); a decoded value keeps no place of its own.
    pub align: Option<u32>,
}

/// The `parent` key of a field that reads a user type.
#[derive(Debug, Clone)]
pub enum ParentSpec {
    /// No key: `_parent` is the type holding the field.
    Default,
    /// `parent: false`: the read type has no `_parent`.
    None(Pos),
    /// `parent: <expr>`: `_parent` of the read type is this value (e.g. `_parent`).
    Expr(SrcExpr),
}

/// A `process` transformation (Kaitai Struct's built-in processors).
#[derive(Debug, Clone)]
pub enum Process {
    /// `zlib`.
    Zlib,
    /// `xor(key)`: an integer (one byte) or a byte array.
    Xor(ProcArg),
    /// `rol(n)`: rotate every byte left by `n` bits on read.
    Rol(SrcExpr),
    /// `ror(n)`: rotate every byte right by `n` bits on read.
    Ror(SrcExpr),
    /// `name(args)`: a processor written in Rust (`statepack_runtime::process`).
    Custom {
        /// The name as written (`my_fx`, `nested.deeply.my_fx`).
        name: String,
        /// The arguments, in order.
        args: Vec<SrcExpr>,
    },
}

/// The key of `xor`.
#[derive(Debug, Clone)]
pub enum ProcArg {
    /// An expression: an integer (its low byte is the key) or a byte field.
    Expr(SrcExpr),
    /// A byte-array literal (`[0xec, 0xbb]`).
    Bytes(Vec<u8>),
}

/// How many bytes a sized field takes.
#[derive(Debug, Clone)]
pub enum Size {
    /// `size: <expr>`.
    Expr(SrcExpr),
    /// `size-eos: true`: the rest of the enclosing stream.
    Eos,
    /// No size: the field's terminator ([`Field::term`]) ends it.
    Terminator,
}

/// How a string or byte field ends: `terminator`, `include`, `consume`, `eos-error`,
/// `pad-right` (and `type: strz` combined with any of them or with a size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TermSpec {
    /// The byte that ends the value (`terminator`; 0 for `strz`).
    pub terminator: Option<u8>,
    /// `include: true`: the terminator is part of the value.
    pub include: bool,
    /// `consume` (default true): the terminator is taken from the stream.
    pub consume: bool,
    /// `eos-error` (default true): the end of the stream before the terminator is an error.
    pub eos_error: bool,
    /// `pad-right`: padding byte stripped from the right of a sized value.
    pub pad_right: Option<u8>,
    /// Bytes per terminator: 2 for a `strz` in UTF-16 (two zero bytes at an even offset),
    /// else 1.
    pub width: u8,
}

impl TermSpec {
    /// A plain zero terminator `width` bytes wide (1, or 2 for a `strz` in UTF-16: two zero
    /// bytes at an even offset), taken from the stream and not part of the value; the end
    /// of the stream before it is an error. `type: strz` without other keys.
    pub fn zero_terminated(width: u8) -> TermSpec {
        TermSpec {
            terminator: Some(0),
            include: false,
            consume: true,
            eos_error: true,
            pad_right: None,
            width,
        }
    }

    /// [`TermSpec::zero_terminated`] for a `strz` in `encoding`.
    pub fn strz(encoding: &str) -> TermSpec {
        TermSpec::zero_terminated(crate::num_type::strz_width(encoding))
    }
}

/// What a field stores.
#[derive(Debug, Clone)]
pub enum FieldKind {
    /// `u1`..`u8`, `s1`..`s8` (optionally with `enum`).
    Int {
        /// Width in bytes (1, 2, 4, 8).
        bytes: u8,
        /// Signed (`sN`).
        signed: bool,
        /// Byte order (after the meta default is applied).
        endian: Endian,
        /// `enum`, if any.
        enum_name: Option<EnumRef>,
    },
    /// `b1`..`b64`: a bit field, most significant bit first (`bit-endian: be`) or least
    /// significant first (`le`).
    Bits {
        /// Width in bits (1..=64).
        width: u8,
        /// `-sp-offset-binary: true`: the stored code is `value + 2^(width-1)` and the field
        /// holds the signed value.
        offset_binary: bool,
        /// `bit-endian: le`: least significant bit first.
        le: bool,
        /// `enum`, if any.
        enum_name: Option<EnumRef>,
    },
    /// `f4`, `f8`.
    Float {
        /// Width in bytes (4 or 8).
        bytes: u8,
        /// Byte order.
        endian: Endian,
    },
    /// Raw bytes with a size.
    Bytes(Size),
    /// `type: str` with a size, or `type: strz` (terminated by a zero byte).
    Str {
        /// `None` for `strz`.
        size: Option<Size>,
        /// `UTF-8` or `ASCII`.
        encoding: &'static str,
    },
    /// Fixed `contents` (magic, version header).
    Contents(Vec<u8>),
    /// A user type, optionally in a sized substream.
    User {
        /// The type.
        ty: TypeRef,
        /// `size`, if any.
        size: Option<Size>,
    },
    /// `type: {switch-on: ..., cases: ...}`.
    Switch {
        /// The switch expression.
        on: SrcExpr,
        /// Case keys (literals, enum values, or any expression of the switch value's type,
        /// tested in order) and the type each selects: a user type, a number type
        /// (`crate::num_type::case_number`), `str` or `strz` (the last three as names no
        /// type defines).
        cases: Vec<(SrcExpr, TypeRef)>,
        /// The `_` case, if any.
        default: Option<TypeRef>,
        /// `size`: the selected case is read in a substream of this many bytes.
        size: Option<Size>,
        /// The character set of the `str` and `strz` cases (the field's `encoding`, else
        /// `meta.encoding`); `None` when no case is a string.
        encoding: Option<&'static str>,
    },
}

/// Repetition of a field.
#[derive(Debug, Clone)]
pub enum Repeat {
    /// Read once.
    None,
    /// `repeat: expr` with `repeat-expr`.
    Expr(SrcExpr),
    /// `repeat: eos`.
    Eos,
    /// `repeat: until` with `repeat-until` (`_` is the element just read).
    Until(SrcExpr),
}

/// A `valid` rule.
#[derive(Debug, Clone)]
pub enum Valid {
    /// `valid: <value>` or `valid: {eq: <value>}`.
    Eq(SrcExpr),
    /// `valid: {min: a, max: b}` (either may be absent).
    Range(Option<SrcExpr>, Option<SrcExpr>),
    /// `valid: {any-of: [...]}`.
    AnyOf(Vec<SrcExpr>),
    /// `valid: {expr: ...}` with `_` as the value.
    Expr(SrcExpr),
    /// `valid: {in-enum: true}`: the value is one the field's enum lists.
    InEnum,
}

impl Valid {
    /// The rule as a readable string (used in error messages of the generated code).
    pub fn describe(&self) -> String {
        match self {
            Valid::Eq(e) => format!("must equal {}", e.src),
            Valid::Range(a, b) => match (a, b) {
                (Some(a), Some(b)) => format!("must be in {}..={}", a.src, b.src),
                (Some(a), None) => format!("must be at least {}", a.src),
                (None, Some(b)) => format!("must be at most {}", b.src),
                (None, None) => "any value".into(),
            },
            Valid::AnyOf(v) => format!(
                "must be one of {}",
                v.iter()
                    .map(|e| e.src.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Valid::Expr(e) => format!("must satisfy {}", e.src),
            Valid::InEnum => "must be a value the enum lists".into(),
        }
    }
}

impl Field {
    /// Where the value of `key` starts, or the entry's start when the key is absent.
    pub fn pos_of(&self, key: &str) -> Pos {
        self.value_pos
            .iter()
            .find(|(k, _)| k == key)
            .map_or(self.pos, |(_, p)| *p)
    }
}

impl Schema {
    /// The type `id` names.
    pub fn ty(&self, id: TypeId) -> &TypeDef {
        &self.types[id.0 as usize]
    }

    /// The enum `id` names.
    pub fn enm(&self, id: EnumId) -> &EnumDef {
        &self.enums[id.0 as usize]
    }

    /// The type `r` refers to, or `None` for a name no type defines (an opaque or unknown
    /// type).
    pub fn type_of(&self, r: &TypeRef) -> Option<&TypeDef> {
        r.id().map(|i| self.ty(i))
    }

    /// The enum `r` refers to, or `None` for a name no enum defines.
    pub fn enum_of(&self, r: &EnumRef) -> Option<&EnumDef> {
        r.id().map(|i| self.enm(i))
    }

    /// Whether `r` is an opaque type: a name no type defines, listed in [`Schema::opaque`].
    pub fn is_opaque(&self, r: &TypeRef) -> bool {
        matches!(r, TypeRef::Named(n) if self.opaque.contains(n))
    }

    /// The unique name of the type `r` refers to ([`TypeDef::name`]), or the name as written
    /// when no type defines it.
    pub fn type_name<'a>(&'a self, r: &'a TypeRef) -> &'a str {
        match r {
            TypeRef::Id(i) => &self.ty(*i).name,
            TypeRef::Named(n) => n,
        }
    }

    /// The unique name of the enum `r` refers to ([`EnumDef::name`]), or the name as written
    /// when no enum defines it.
    pub fn enum_name<'a>(&'a self, r: &'a EnumRef) -> &'a str {
        match r {
            EnumRef::Id(i) => &self.enm(*i).name,
            EnumRef::Named(n) => n,
        }
    }

    /// The type with this unique name ([`TypeDef::name`]), through the index resolve builds
    /// once. For names that arrive as text: in expressions (`.as<t>`, `sizeof<t>`, which
    /// resolve has made unique names), in an assert over a decoded value, on the command
    /// line. IR references are ids ([`TypeRef`]).
    pub fn type_named(&self, name: &str) -> Option<&TypeDef> {
        self.names.types.get(name).map(|&i| self.ty(i))
    }

    /// The enum with this unique name ([`EnumDef::name`]), as [`Schema::type_named`]
    /// (`e::v` in expressions).
    pub fn enum_named(&self, name: &str) -> Option<&EnumDef> {
        self.names.enums.get(name).map(|&i| self.enm(i))
    }

    /// Numbers the types and enums ([`TypeDef::id`], [`EnumDef::id`]) and indexes their
    /// unique names (the first of a name defined twice, which the check stage reports).
    pub(crate) fn index_names(&mut self) {
        self.names = NameIndex::default();
        for (i, t) in self.types.iter_mut().enumerate() {
            t.id = TypeId(i as u32);
            self.names.types.entry(t.name.clone()).or_insert(t.id);
        }
        for (i, e) in self.enums.iter_mut().enumerate() {
            e.id = EnumId(i as u32);
            self.names.enums.entry(e.name.clone()).or_insert(e.id);
        }
    }
}

/// Types and enums by unique name (see [`Schema::type_named`]).
#[derive(Debug, Clone, Default)]
pub struct NameIndex {
    types: std::collections::HashMap<String, TypeId>,
    enums: std::collections::HashMap<String, EnumId>,
}

impl NameIndex {
    /// The type with this unique name.
    pub fn type_id(&self, name: &str) -> Option<TypeId> {
        self.types.get(name).copied()
    }

    /// The enum with this unique name.
    pub fn enum_id(&self, name: &str) -> Option<EnumId> {
        self.enums.get(name).copied()
    }
}

impl TypeDef {
    /// Rewrites every type and enum reference of this type (field types, switch cases and
    /// their arguments, params, `enum` keys) with `ty` and `en`, and the ids of its context
    /// arguments, recursive types and `struct` params with `id`.
    fn map_refs(
        &mut self,
        ty: &dyn Fn(&mut TypeRef),
        en: &dyn Fn(&mut EnumRef),
        id: &dyn Fn(TypeId) -> TypeId,
    ) {
        for f in &mut self.fields {
            match &mut f.kind {
                FieldKind::User { ty: r, .. } => ty(r),
                FieldKind::Switch { cases, default, .. } => {
                    cases.iter_mut().for_each(|(_, r)| ty(r));
                    default.iter_mut().for_each(ty);
                }
                FieldKind::Int {
                    enum_name: Some(r), ..
                }
                | FieldKind::Bits {
                    enum_name: Some(r), ..
                } => en(r),
                _ => {}
            }
            f.switch_args.iter_mut().for_each(|(r, _)| ty(r));
            f.ctx_args.iter_mut().for_each(|(i, _)| *i = id(*i));
            f.recursive.iter_mut().for_each(|i| *i = id(*i));
        }
        for p in &mut self.params {
            let mut k = &mut p.kind;
            while let ParamKind::List(inner) = k {
                k = inner;
            }
            match k {
                ParamKind::User(r) => ty(r),
                ParamKind::Enum(r) => en(r),
                ParamKind::AnyUser(ts) => ts.iter_mut().for_each(|i| *i = id(*i)),
                _ => {}
            }
        }
        for i in &mut self.instances {
            i.enum_name.iter_mut().for_each(en);
        }
    }
}

impl Schema {
    /// Adds to this schema the types and enums of `other` whose unique names it does not
    /// have, with `other`'s references renumbered (a reference to a name both have means
    /// this schema's definition), then makes every name of this schema that no definition
    /// had (an opaque type) refer to the added definition of that name. For tools that
    /// read values of opaque types with their own schemas (the conformance runner's
    /// asserts).
    pub fn absorb(&mut self, other: Schema) {
        let (t_base, e_base) = (self.types.len() as u32, self.enums.len() as u32);
        let mut next = t_base;
        let tmap: Vec<TypeId> = other
            .types
            .iter()
            .map(|t| {
                self.names.type_id(&t.name).unwrap_or_else(|| {
                    next += 1;
                    TypeId(next - 1)
                })
            })
            .collect();
        let mut next = e_base;
        let emap: Vec<EnumId> = other
            .enums
            .iter()
            .map(|e| {
                self.names.enum_id(&e.name).unwrap_or_else(|| {
                    next += 1;
                    EnumId(next - 1)
                })
            })
            .collect();
        for mut t in other.types {
            if tmap[t.id.0 as usize].0 < t_base {
                continue;
            }
            t.map_refs(
                &|r| {
                    if let TypeRef::Id(i) = r {
                        *i = tmap[i.0 as usize];
                    }
                },
                &|r| {
                    if let EnumRef::Id(i) = r {
                        *i = emap[i.0 as usize];
                    }
                },
                &|i| tmap[i.0 as usize],
            );
            self.types.push(t);
        }
        for e in other.enums {
            if emap[e.id.0 as usize].0 >= e_base {
                self.enums.push(e);
            }
        }
        self.index_names();
        let names = self.names.clone();
        for t in &mut self.types {
            t.map_refs(
                &|r| {
                    if let Some(i) = match r {
                        TypeRef::Named(n) => names.type_id(n),
                        TypeRef::Id(_) => None,
                    } {
                        *r = TypeRef::Id(i);
                    }
                },
                &|r| {
                    if let Some(i) = match r {
                        EnumRef::Named(n) => names.enum_id(n),
                        EnumRef::Id(_) => None,
                    } {
                        *r = EnumRef::Id(i);
                    }
                },
                &|i| i,
            );
        }
    }
}
