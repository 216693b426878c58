//! The Rust backend: emits, for every schema type, a struct with a reader (`read_from`), a
//! writer (`write_to`), `encoded_len` and `MIN_LEN`; for every enum a Rust enum; for the root
//! type `decode`, `decode_traced` and `encode`. It runs the whole check stage first
//! (`crate::typed::check`: names, references, layout, every expression typed) and reports
//! its problems; it then compiles every expression from the typed tree the stage made of it.
//! The checks it still makes while emitting fields (an expression that does not type, a
//! `valid` rule or processor argument of the wrong type, a type that may end inside a byte)
//! are the stage's, made again where the code needs them; they find nothing in a schema the
//! stage accepts.
//!
//! Generated readers go through `statepack_runtime::io::ByteReader` (bounds-checked, count
//! guard before any allocation, field-path errors); writers go through `ByteWriter` and derive
//! every count, length and sum from the data, refusing values that do not fit.
//!
//! Layout: this file holds the emitter's state, the expression types and scopes and
//! [`Emitter::emit`], which walks the schema; `types` emits one type, `fields` one field of it
//! (member, read, write, length), `elem_read` and `elem_write` one element of a field per kind,
//! `expr` compiles expressions, `value_instances` the value instances' methods, `enums` the
//! Rust enums; the other files each hold one feature's code (bit fields, positional
//! instances, `io:` of a value, decided byte orders, switches of numbers, processed fields,
//! fixed runs, exact lengths, the dynamic view, the binrw/deku/bitvec impls).

use crate::derive::{counts_and_lengths, plain_encoding, Derived};
use crate::diag::{Diag, Pos};
use crate::expr::{BinOp, Expr, UnOp};
use crate::ir::*;
use crate::names::{doc_attrs, field_ident, temp, temp_for, type_ident};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use std::collections::{HashMap, HashSet};

mod binrw;
mod bits;
mod elem_read;
mod elem_write;
mod endian_code;
mod enums;
mod eq;
mod exact_len;
mod expr;
mod fields;
mod io_later;
mod io_of;
mod lazy;
mod modbits;
pub(crate) mod module_options;
mod num_switch;
mod positional;
mod proc;
mod proc_pos;
mod proc_term;
mod reflect;
mod root_type;
mod runs;
mod to_string;
mod types;
mod value_instances;
use crate::shape::has_no_case;

pub(crate) use crate::typed::{ty_name, Ty};

/// Read or write: where expression names come from.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Read,
    Write,
}

pub(crate) struct Scope {
    vars: Vec<(String, Ty)>,
    /// Where the expression's code goes (decides how a failing expression reports).
    ctx: Ctx,
}

/// The function an expression is emitted into.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Ctx {
    /// `read_from` (a failure is a `DecodeError` at the reader's offset).
    Read,
    /// `write_to` (a failure is an `EncodeError`).
    Write,
    /// A value instance's method (a failure is its `ExprError`).
    Method,
}

impl Ctx {
    /// What follows a `Result<_, ExprError>` to use its value here; `field` is the seq field
    /// whose expression it is (named in the error).
    fn q(self, field: Option<&str>) -> TokenStream {
        match (self, field) {
            (Ctx::Read, Some(f)) => {
                quote!(.map_err(|__e| __e.decode_at(__r.offset()).in_field(#f))?)
            }
            (Ctx::Read, None) => quote!(.map_err(|__e| __e.decode_at(__r.offset()))?),
            // The writer evaluates a field's expressions inside that field's error scope.
            (Ctx::Write, _) => quote!(.map_err(__io::ExprError::encode)?),
            (Ctx::Method, _) => quote!(?),
        }
    }
}

impl Scope {
    fn get(&self, n: &str) -> Option<&Ty> {
        self.vars.iter().rev().find(|(k, _)| k == n).map(|(_, t)| t)
    }
}

pub(crate) struct Emitter<'s> {
    s: &'s Schema,
    pub diags: Vec<Diag>,
    min_len: HashMap<TypeId, usize>,
    /// Enums that keep unknown integers (used by a field without `-sp-strict`): they get the
    /// variant `Unlisted(i128)`.
    open_enums: HashSet<EnumId>,
    /// Types read in a sized substream by a field without `-sp-strict`: they keep the bytes
    /// they leave unread (member `__unread`) and write them back.
    unread_types: HashSet<TypeId>,
    /// The value instances of the type being emitted: a name that is not a field in scope
    /// may be one of them, and is replaced by its expression.
    cur_instances: Vec<Instance>,
    /// The instances whose expressions are being inlined, outermost first (a cycle is
    /// reported, not followed).
    inlining: std::cell::RefCell<Vec<String>>,
    /// Set while emitting an expression that can fail at run time (indexing, `.first`,
    /// `.substring`, ...): it is emitted with `?` on a `Result<_, ExprError>`.
    fallible: std::cell::Cell<bool>,
    /// True while emitting a value instance's method (where `self` and `?` on `ExprError`
    /// are available).
    in_method: std::cell::Cell<bool>,
    /// True while emitting the expressions of a positional instance with `io: value._io`
    /// that are evaluated in the other stream (`size`, counts, `valid`; on write also `if`):
    /// `_io` there is still the type's own stream, as it was just before the instance was
    /// entered (`__own_io` on read, `__own_io_pos` on write, see `emit::io_of`).
    own_io: std::cell::Cell<bool>,
    /// The seq field whose expressions are being emitted (named by their errors).
    cur_field: std::cell::RefCell<Option<String>>,
    /// The type whose code is being emitted (for `_sizeof`).
    cur_type: std::cell::Cell<TypeId>,
    /// The build's choices: custom processor and opaque type paths, and what to emit besides
    /// the native reader and writer (binrw, deku, bitvec impls).
    opts: crate::Options,
    /// Whether an expression anywhere in the schema uses `value._io` (computed once: every
    /// type then keeps `__io_end`).
    member_io: bool,
    /// The types that always end on a byte boundary (computed once for the schema).
    whole_types: HashSet<TypeId>,
    /// Whether every type of the schema ends on a byte boundary, so that the static bit
    /// phase is the reader's (`crate::bits::every_type_ends_aligned`; computed once).
    aligned_ends: bool,
    /// Whether any type of the schema has a positional instance (computed once).
    positional: bool,
    /// The modular-bitfield views of the types emitted so far (option
    /// [`crate::Options::modular_bitfield`]), for the module's `bitfield` submodule.
    bitfield_views: Vec<TokenStream>,
    /// The check stage's typed expressions, which `expr` compiles from.
    typed: crate::typed::TypedSchema,
    /// Every name and member name the schema's expressions use (computed once), and the
    /// positional instances of the type being emitted read on first use (see `lazy`).
    refs: HashSet<String>,
    cur_lazy: HashSet<String>,
    /// Whether any type of the schema has a lazy positional instance (the root then keeps
    /// every byte after its `seq`, see `ByteReader::take_lazy_tail`).
    any_lazy: bool,
    /// The sets of user types held as "one of these" (`Ty::AnyStruct`) so far: each becomes an
    /// enum of the module ([`any_user_ident`]).
    any_users: std::cell::RefCell<Vec<Vec<String>>>,
}

/// What the emission of one type collects, field by field: the struct's members, the
/// reader's and writer's statements, the length terms, the constructor's entries and the
/// items that go beside the struct; the scopes of the reader's and writer's expressions; the
/// bit state of the `seq` (Kaitai's alignment rule); the runs of fixed-size fields.
struct TypeParts {
    struct_fields: Vec<TokenStream>,
    reads: Vec<TokenStream>,
    post_read_checks: Vec<TokenStream>,
    write_pre: Vec<TokenStream>,
    writes: Vec<TokenStream>,
    lens: Vec<TokenStream>,
    exact: exact_len::Exact,
    ctor: Vec<TokenStream>,
    extra_items: Vec<TokenStream>,
    rscope: Scope,
    wscope: Scope,
    /// `params`: given by the reading field, kept as members (for instances and the
    /// writer's own expressions); the parent's writer checks them against its arguments.
    param_args: Vec<TokenStream>,
    param_tys: Vec<TokenStream>,
    /// Context params: the writer's arguments for them, and the members `write_to` gives.
    ctx_write_args: Vec<TokenStream>,
    ctx_members: Vec<TokenStream>,
    /// After a bit field: a field that is not one starts on the next byte.
    unaligned: bool,
    /// The bit phase (bits past the last byte boundary) where it is known statically.
    phase: Option<u32>,
    /// Positional instances: written after the fields in sequence (laid out by the root).
    pos_writes: Vec<TokenStream>,
    /// Fields that may be read and written in fixed runs (see `runs`).
    read_runs: Vec<runs::Member>,
    write_runs: Vec<runs::Member>,
}

impl TypeParts {
    fn new() -> Self {
        Self {
            struct_fields: Vec::new(),
            reads: Vec::new(),
            post_read_checks: Vec::new(),
            write_pre: Vec::new(),
            writes: Vec::new(),
            lens: Vec::new(),
            exact: exact_len::Exact::new(),
            ctor: Vec::new(),
            extra_items: Vec::new(),
            rscope: Scope {
                vars: Vec::new(),
                ctx: Ctx::Read,
            },
            wscope: Scope {
                vars: Vec::new(),
                ctx: Ctx::Write,
            },
            param_args: Vec::new(),
            param_tys: Vec::new(),
            ctx_write_args: Vec::new(),
            ctx_members: Vec::new(),
            unaligned: false,
            phase: Some(0),
            pos_writes: Vec::new(),
            read_runs: Vec::new(),
            write_runs: Vec::new(),
        }
    }
}

fn lit_usize(v: usize) -> Literal {
    Literal::usize_unsuffixed(v)
}

impl<'s> Emitter<'s> {
    pub fn new(s: &'s Schema) -> Self {
        let open_enums = crate::shape::open_enums(s);
        let unread_types = crate::shape::unread_types(s);
        Self {
            s,
            diags: Vec::new(),
            min_len: HashMap::new(),
            open_enums,
            unread_types,
            cur_instances: Vec::new(),
            inlining: std::cell::RefCell::new(Vec::new()),
            fallible: std::cell::Cell::new(false),
            in_method: std::cell::Cell::new(false),
            own_io: std::cell::Cell::new(false),
            cur_field: std::cell::RefCell::new(None),
            cur_type: std::cell::Cell::new(TypeId(0)),
            opts: crate::Options::default(),
            member_io: crate::instances::uses_member_io(s),
            whole_types: crate::shape::whole_byte_types(s),
            aligned_ends: crate::bits::every_type_ends_aligned(s),
            positional: s
                .types
                .iter()
                .any(|t| t.fields.iter().any(|f| f.at.is_some())),
            bitfield_views: Vec::new(),
            typed: crate::typed::TypedSchema::default(),
            refs: crate::lazy::schema_refs(s),
            cur_lazy: HashSet::new(),
            any_users: std::cell::RefCell::new(Vec::new()),
            any_lazy: {
                let refs = crate::lazy::schema_refs(s);
                s.types
                    .iter()
                    .any(|t| !crate::lazy::lazy_instances(s, t, &refs).is_empty())
            },
        }
    }

    /// The element type of a list field `f` that is read straight into the list with its
    /// `read_into`: a plain user type (see `plain_reader`) without size, arguments, checks
    /// (`has_valid`), recursion, processing or terminator.
    fn in_place_elem(&self, f: &Field, has_valid: bool) -> Option<proc_macro2::Ident> {
        match &f.kind {
            FieldKind::User {
                ty: name,
                size: None,
            } if !has_valid
                && f.recursive.is_empty()
                && f.process.is_none()
                && f.term.is_none() =>
            {
                self.s
                    .type_of(name)
                    .filter(|et| self.plain_reader(et))
                    .map(|_| type_ident(self.s.type_name(name)))
            }
            _ => None,
        }
    }

    /// A type read without params, instances, positions or a computed byte order, in a
    /// schema without positional fields: its fixed runs fall back to reading the whole value
    /// again through the same body with its fixed runs off (out of line), and lists of it are read
    /// in place (`read_into`).
    fn plain_reader(&self, t: &TypeDef) -> bool {
        t.params.is_empty()
            && t.instances.is_empty()
            && t.endian_switch.is_none()
            && !self.has_positional()
            && !crate::instances::keeps_io_end(t, self.member_io)
    }

    /// `Default,` in a type's derives, unless the schema has opaque types (Rust types of
    /// the user's, which need not have a default value).
    fn default_derive(&self) -> TokenStream {
        if self.s.opaque.is_empty() && !self.s.opaque_types {
            quote!(Default,)
        } else {
            quote!()
        }
    }

    fn has_positional(&self) -> bool {
        self.positional
    }

    /// The type has positional instances or uses `_io`, or lays out the instances of the
    /// types it reads (`-sp-end-zeros`): written in a sized field, it is given its own
    /// stream start (`ByteWriter::push_io`).
    /// Whether enum `e` keeps unknown integers (see `shape::open_enums`).
    fn is_open(&self, e: &EnumRef) -> bool {
        e.id().is_some_and(|i| self.open_enums.contains(&i))
    }

    /// Whether type `t` keeps the bytes it leaves unread (see `shape::unread_types`).
    fn is_unread(&self, t: &TypeRef) -> bool {
        t.id().is_some_and(|i| self.unread_types.contains(&i))
    }

    fn type_needs_io(&self, name: &TypeRef) -> bool {
        self.s
            .type_of(name)
            .is_some_and(|t| crate::instances::type_uses_io(t) || t.end_zeros.is_some())
    }

    /// The same emitter with the build's options.
    pub fn with_options(mut self, o: &crate::Options) -> Self {
        self.opts = o.clone();
        self
    }

    /// The variant names enum `e`'s values cannot take: `Self`, and `Unlisted` when the
    /// enum keeps unknown integers (see `names::variant_names`).
    pub(crate) fn reserved_variants(&self, e: EnumId) -> &'static [&'static str] {
        if self.open_enums.contains(&e) {
            &["Self", "Unlisted"]
        } else {
            &["Self"]
        }
    }

    /// The schema being emitted.
    pub(crate) fn schema(&self) -> &'s Schema {
        self.s
    }

    pub(crate) fn err(
        &mut self,
        pos: Pos,
        path: &str,
        msg: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.diags
            .push(Diag::new(&self.s.file, pos, path, msg, hint));
    }

    /// What the writer of `t` derives (see `crate::derive`).
    fn derived(&mut self, t: &TypeDef) -> HashMap<String, Derived> {
        // Its problems are the check stage's (`crate::check::layout`).
        crate::derive::derived(self.s, t, &mut Vec::new())
    }

    // ------------------------------------------------------------- expressions

    // ------------------------------------------------------------------- emit

    /// Emits the whole schema, or returns the diagnostics.
    pub fn emit(mut self) -> Result<TokenStream, Vec<Diag>> {
        // The check stage: every problem of the schema, and its typed expressions.
        let (typed, min_len) = crate::typed::check_with_lens(self.s, &self.opts)?;
        self.typed = typed;
        self.min_len = min_len;
        let mut items = Vec::new();
        for e in &self.s.enums {
            items.push(self.emit_enum(e));
            items.push(reflect::enum_impl(e, self.open_enums.contains(&e.id)));
        }
        for (i, t) in self.s.types.iter().enumerate() {
            if let Some(ts) = self.emit_type(t, i == 0) {
                items.push(ts);
            }
            if i == 0 {
                items.push(reflect::root_fns(t));
            }
        }
        items.extend(self.emit_any_user_enums());
        items.push(modbits::module(&self.bitfield_views));
        items.push(crate::columns::emit(&self.s.column_sets, &self.s.file));
        // Opaque types: a local name for the external type, whose `OpaqueType` methods the
        // generated calls (`read_from`, `write_to`, `encoded_len`, `MIN_LEN`) reach.
        if !self.s.opaque.is_empty() {
            items.push(quote! {
                #[allow(unused_imports)]
                use ::statepack_runtime::process::OpaqueType as _;
            });
        }
        for n in &self.s.opaque.clone() {
            match crate::process::opaque_path(&self.opts, n) {
                Ok(path) => {
                    let ti = type_ident(n);
                    let d = format!(" The external type `{n}` (`ks-opaque-types`), implementing `statepack_runtime::process::OpaqueType`.");
                    items.push(quote!(#[doc = #d] pub type #ti = #path;));
                }
                // Reported by the check stage (`crate::check::layout`).
                Err(_) => {}
            }
        }
        if !self.diags.is_empty() {
            self.diags.sort_by_key(|x| x.pos);
            return Err(self.diags);
        }
        let file = &self.s.file;
        let id = &self.s.id;
        Ok(quote! {
            #[doc = " Schema file this module was generated from."]
            pub const SCHEMA_FILE: &str = #file;
            #[doc = " `meta.id` of the schema (the root type's name)."]
            pub const SCHEMA_ID: &str = #id;
            #(#items)*
        })
    }

    fn doc_for(&self, doc: Option<&str>, pos: Pos, extra: &str) -> TokenStream {
        let mut text = doc.map(|d| d.trim().to_owned()).unwrap_or_default();
        if !extra.is_empty() {
            if !text.is_empty() {
                text.push_str("\n\n");
            }
            text.push_str(extra);
        }
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&format!("Schema: `{}` line {}.", self.s.file, pos.line));
        doc_attrs(&text)
    }

    /// Rust type of one element (before repeat/if).
    fn elem_rust_ty(&self, t: &TypeDef, f: &Field) -> TokenStream {
        match &f.kind {
            FieldKind::Int {
                enum_name: Some(e), ..
            } => {
                let i = type_ident(self.s.enum_name(e));
                quote!(#i)
            }
            FieldKind::Int { bytes, signed, .. } => int_ty(*bytes, *signed),
            FieldKind::Bits {
                enum_name: Some(e), ..
            } => {
                let i = type_ident(self.s.enum_name(e));
                quote!(#i)
            }
            FieldKind::Bits {
                width,
                offset_binary,
                ..
            } => bits::bits_rust_ty(*width, *offset_binary),
            FieldKind::Float { bytes: 4, .. } => quote!(f32),
            FieldKind::Float { .. } => quote!(f64),
            FieldKind::Bytes(_) => quote!(::std::vec::Vec<u8>),
            FieldKind::Contents(_) => quote!(()),
            FieldKind::Str { .. } => quote!(::std::string::String),
            FieldKind::User { ty: name, .. } => {
                let i = type_ident(self.s.type_name(name));
                if f.boxed {
                    quote!(::std::boxed::Box<#i>)
                } else {
                    quote!(#i)
                }
            }
            FieldKind::Switch { .. } => {
                let i = Self::switch_enum_name(t, f);
                quote!(#i)
            }
        }
    }

    /// Fixed-size array length, when the field is a primitive repeated a literal number of times.
    fn array_len(f: &Field) -> Option<usize> {
        match (&f.kind, &f.repeat) {
            (
                FieldKind::Int {
                    enum_name: None, ..
                }
                | FieldKind::Float { .. },
                Repeat::Expr(SrcExpr {
                    expr: Expr::Int(n), ..
                }),
            ) if (1..=32).contains(n) => Some(*n as usize),
            _ => None,
        }
    }

    fn fixed_elem_len(&self, f: &Field) -> Option<usize> {
        match &f.kind {
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => Some(*bytes as usize),
            _ => None,
        }
    }
}

/// Whether `ts` names the variable `id` anywhere: an identifier not after a `.` (a field
/// or method) nor before a single `:` (a struct literal's member name).
pub(super) fn names_ident(ts: TokenStream, id: &str) -> bool {
    use proc_macro2::{Spacing, TokenTree as T};
    let tokens: Vec<T> = ts.into_iter().collect();
    let mut after_dot = false;
    for (k, t) in tokens.iter().enumerate() {
        match t {
            T::Ident(i) if !after_dot && i == id => {
                let member_name = matches!(tokens.get(k + 1),
                    Some(T::Punct(p)) if p.as_char() == ':' && p.spacing() == Spacing::Alone);
                if !member_name {
                    return true;
                }
            }
            T::Group(g) if names_ident(g.stream(), id) => return true,
            _ => {}
        }
        after_dot = matches!(t, T::Punct(p) if p.as_char() == '.');
    }
    false
}

/// Whether `ts` holds the identifier `id` anywhere (a method name included).
pub(super) fn has_ident(ts: TokenStream, id: &str) -> bool {
    ts.into_iter().any(|t| match &t {
        proc_macro2::TokenTree::Ident(i) => i == id,
        proc_macro2::TokenTree::Group(g) => has_ident(g.stream(), id),
        _ => false,
    })
}

trait UsizeLit {
    fn into_token_stream_usize(self) -> TokenStream;
}
impl UsizeLit for Literal {
    fn into_token_stream_usize(self) -> TokenStream {
        quote!(#self)
    }
}

/// Binds `_` (the element under test) from a reference: by value for copyable types, so
/// expressions can use it as a number, by reference otherwise.
/// The member type of a param and its type in expressions.
fn param_rust_ty(s: &Schema, k: &ParamKind) -> (TokenStream, Ty) {
    match k {
        ParamKind::Int => (quote!(i128), Ty::Int),
        ParamKind::Bool => (quote!(bool), Ty::Bool),
        ParamKind::Float => (quote!(f64), Ty::Float),
        ParamKind::Str => (quote!(::std::string::String), Ty::Str),
        ParamKind::Bytes => (quote!(::std::vec::Vec<u8>), Ty::Bytes),
        ParamKind::Enum(e) => {
            let i = type_ident(s.enum_name(e));
            (quote!(#i), e.id().map_or(Ty::Int, Ty::Enum))
        }
        // `crate::context` has given every `struct` param a user type; one that is left
        // has been reported there.
        ParamKind::User(t) => {
            let i = type_ident(s.type_name(t));
            (quote!(#i), Ty::User(t.clone()))
        }
        ParamKind::Struct => (quote!(()), Ty::Bool),
        ParamKind::AnyUser(ts) => {
            let names: Vec<String> = ts.iter().map(|t| s.ty(*t).name.clone()).collect();
            let i = any_user_ident(&names);
            (
                quote!(#i),
                Ty::AnyUser(ts.iter().map(|t| TypeRef::Id(*t)).collect()),
            )
        }
        ParamKind::List(inner) => {
            let (r, t) = param_rust_ty(s, inner);
            (quote!(::std::vec::Vec<#r>), Ty::List(Box::new(t)))
        }
        ParamKind::Io => (quote!(::statepack_runtime::positional::Stream), Ty::Io),
    }
}

/// The enum holding a value of one of the user types `ts` (`AnyOfBarFoo` for `bar`, `foo`).
pub(crate) fn any_user_ident(ts: &[String]) -> proc_macro2::Ident {
    let mut n = String::from("AnyOf");
    for t in ts {
        n.push_str(&type_ident(t).to_string());
    }
    format_ident!("{n}")
}

/// Whether the writer takes the value of context param `p` by value (numbers, conditions,
/// enums) rather than by reference.
fn ctx_by_value(s: &Schema, p: &Param) -> bool {
    !p.optional
        && matches!(
            param_rust_ty(s, &p.kind).1,
            Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool
        )
}

/// An argument `ts` (an expression value of type `want`) as the member type of a param of
/// that type: numbers widened, strings and bytes owned, user values and lists copied.
fn convert_arg(ts: TokenStream, want: &Ty) -> TokenStream {
    match want {
        Ty::Float => group(quote!(#ts as f64)),
        Ty::Str => quote!(::std::string::String::from(AsRef::<str>::as_ref(&#ts))),
        Ty::Bytes => quote!(AsRef::<[u8]>::as_ref(&#ts).to_vec()),
        Ty::User(_) | Ty::AnyUser(_) => quote!(#ts.clone()),
        Ty::List(e) => match &**e {
            Ty::Int => {
                quote!(#ts.iter().map(|__x| *__x as i128).collect::<::std::vec::Vec<i128>>())
            }
            Ty::Float => {
                quote!(#ts.iter().map(|__x| *__x as f64).collect::<::std::vec::Vec<f64>>())
            }
            Ty::Bool | Ty::Enum(_) => quote!(#ts.iter().copied().collect::<::std::vec::Vec<_>>()),
            Ty::Str => {
                quote!(#ts.iter().map(|__x| ::std::string::String::from(AsRef::<str>::as_ref(__x))).collect::<::std::vec::Vec<_>>())
            }
            Ty::Bytes => {
                quote!(#ts.iter().map(|__x| AsRef::<[u8]>::as_ref(__x).to_vec()).collect::<::std::vec::Vec<_>>())
            }
            _ => quote!(#ts.to_vec()),
        },
        _ => ts,
    }
}

/// One expression as one operand: `ts` in an invisible group (`Delimiter::None`). syn reads
/// the group as one expression wherever it is put (`Expr::Group`), and prettyplease prints
/// parentheses around it only where the operators beside it need them, so the expression
/// compiler writes no parentheses of its own.
pub(crate) fn group(ts: TokenStream) -> TokenStream {
    proc_macro2::TokenTree::Group(proc_macro2::Group::new(proc_macro2::Delimiter::None, ts)).into()
}

/// `ts` as one operand followed by `rest` (`?`, `.map_err(..)?`): `match x { .. }?`.
pub(crate) fn then(ts: TokenStream, rest: &TokenStream) -> TokenStream {
    let g = group(ts);
    quote!(#g #rest)
}

/// The integer `v` as an `i128` literal (`4_i128`); a negative one is an operand.
pub(crate) fn int_lit(v: i128) -> TokenStream {
    let l = syn::LitInt::new(
        &format!("{}_i128", v.unsigned_abs()),
        proc_macro2::Span::call_site(),
    );
    if v < 0 {
        group(quote!(-#l))
    } else {
        quote!(#l)
    }
}

/// The number `v` as an `f64` literal (`2.5_f64`); a negative one is an operand.
pub(crate) fn float_lit(v: f64) -> TokenStream {
    let digits = Literal::f64_unsuffixed(v.abs()).to_string();
    let l = syn::LitFloat::new(&format!("{digits}_f64"), proc_macro2::Span::call_site());
    if v.is_sign_negative() {
        group(quote!(-#l))
    } else {
        quote!(#l)
    }
}

/// The place `x` of a reference `&x` made by [`group`] (`⟨&x⟩`, `x` not itself a
/// reference), as one operand; any other expression gives `None`.
pub(crate) fn place_of(ts: &TokenStream) -> Option<TokenStream> {
    use proc_macro2::{Delimiter, TokenTree};
    let mut it = ts.clone().into_iter();
    let (Some(TokenTree::Group(g)), None) = (it.next(), it.next()) else {
        return None;
    };
    if g.delimiter() != Delimiter::None {
        return None;
    }
    let mut inner = g.stream().into_iter();
    match inner.next() {
        Some(TokenTree::Punct(p)) if p.as_char() == '&' => {}
        _ => return None,
    }
    let rest: TokenStream = inner.collect();
    let starts_with_amp =
        matches!(rest.clone().into_iter().next(), Some(TokenTree::Punct(q)) if q.as_char() == '&');
    (!starts_with_amp).then(|| group(rest))
}

/// Statements ending in a value, as one expression: a block when there are statements (a
/// `;` at the top level), the value itself when there are none.
pub(crate) fn block_value(ts: TokenStream) -> TokenStream {
    use proc_macro2::TokenTree;
    let statements = ts
        .clone()
        .into_iter()
        .any(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ';'));
    if statements {
        quote!({ #ts })
    } else {
        group(ts)
    }
}

/// The emitted module `file` with every invisible group ([`group`]) replaced by the
/// expression it holds, also in the arguments of `format!`-like macros, so that the
/// printer decides each operand's parentheses from the expression tree alone (prettyplease
/// and syn put the ones precedence needs; prettyplease does not see a cast through a group,
/// and would print `⟨x as i128⟩ < y` without the parentheses it needs there).
pub(crate) fn ungroup(file: &mut syn::File) {
    use syn::punctuated::Punctuated;
    use syn::visit_mut::VisitMut;
    struct Ungroup;
    impl VisitMut for Ungroup {
        fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
            while let syn::Expr::Group(g) = e {
                let inner = std::mem::replace(&mut *g.expr, syn::Expr::PLACEHOLDER);
                *e = inner;
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }

        fn visit_macro_mut(&mut self, m: &mut syn::Macro) {
            let name = m.path.segments.last().map(|s| s.ident.to_string());
            if !matches!(
                name.as_deref(),
                Some("format" | "write" | "writeln" | "panic" | "print" | "println" | "eprintln")
            ) {
                return;
            }
            let Ok(mut args) =
                m.parse_body_with(Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated)
            else {
                return;
            };
            for a in args.iter_mut() {
                self.visit_expr_mut(a);
            }
            m.tokens = quote!(#args);
        }
    }
    Ungroup.visit_file_mut(file);
}

/// The name of a macro in `file` whose tokens still hold an invisible group ([`group`]),
/// which would print as plain tokens without the parentheses it may need; `None` when there
/// is none (what the emitter and [`ungroup`] make sure of).
pub(crate) fn group_in_macro(file: &syn::File) -> Option<String> {
    use proc_macro2::{Delimiter, TokenTree};
    fn holds_group(ts: &TokenStream) -> bool {
        ts.clone().into_iter().any(|t| match t {
            TokenTree::Group(g) => g.delimiter() == Delimiter::None || holds_group(&g.stream()),
            _ => false,
        })
    }
    struct Find(Option<String>);
    impl<'a> syn::visit::Visit<'a> for Find {
        fn visit_macro(&mut self, m: &'a syn::Macro) {
            if self.0.is_none() && holds_group(&m.tokens) {
                self.0 = Some(
                    m.path
                        .segments
                        .last()
                        .map(|s| s.ident.to_string())
                        .unwrap_or_default(),
                );
            }
        }
    }
    let mut f = Find(None);
    syn::visit::Visit::visit_file(&mut f, file);
    f.0
}

/// A list element given by `reference` (a `&T` expression) as an expression value of type
/// `elem`: numbers widened, conditions and enums copied, everything else borrowed.
fn elem_value(reference: TokenStream, elem: Ty) -> (TokenStream, Ty) {
    match elem {
        Ty::Int => (group(quote!(*#reference as i128)), Ty::Int),
        Ty::Float => (group(quote!(*#reference as f64)), Ty::Float),
        Ty::Bool | Ty::Enum(_) => (group(quote!(*#reference)), elem),
        // A copy, taken where no member access would deref it anyway.
        Ty::Io => (
            quote!(::std::convert::identity::<::statepack_runtime::positional::Stream>(*#reference)),
            elem,
        ),
        other => (reference, other),
    }
}

fn bind_elem(ty: &Ty, reference: TokenStream) -> TokenStream {
    let el = temp("elem");
    match ty {
        Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => {
            // A copy of the place itself where the reference is `&place`.
            let value = match place_of(&reference) {
                Some(place) => place,
                None => quote!(*#reference),
            };
            quote! { let #el = #value; let _ = #el; }
        }
        _ => quote! { let #el = #reference; let _ = #el; },
    }
}

/// The prefix of a field's hidden member of kept bytes: `tail` (terminator and padding, or
/// what a number or string case left of a sized switch, see [`switch_tail`]),
/// `stored` (the bytes before `process`), or none.
fn hidden_prefix(f: &Field) -> Option<&'static str> {
    if f.term.is_some() || switch_tail(f) {
        Some("tail")
    } else if f.process.is_some() {
        Some("stored")
    } else {
        None
    }
}

/// UTF-8 and ASCII: the string's bytes are its Rust `String`'s bytes.
/// The runtime's `Term` value for a field's terminator rules.
fn term_tokens(t: &TermSpec) -> TokenStream {
    let opt = |b: Option<u8>| match b {
        Some(b) => quote!(::std::option::Option::Some(#b)),
        None => quote!(::std::option::Option::None),
    };
    let (terminator, pad) = (opt(t.terminator), opt(t.pad_right));
    let (include, consume, eos_error, width) = (t.include, t.consume, t.eos_error, t.width);
    quote! {
        __io::Term { terminator: #terminator, include: #include, consume: #consume, eos_error: #eos_error, pad_right: #pad, width: #width }
    }
}

/// A switch with `size`: its case is read in a substream.
fn switch_sized(f: &Field) -> bool {
    matches!(f.kind, FieldKind::Switch { size: Some(_), .. })
}

/// A switch with `size` and a number, `str` or `strz` case, under Kaitai's rules: the bytes
/// of the size such a case leaves unread are kept in the field's hidden `__tail_<field>`
/// and written back (a user-type case keeps its own, in `__unread`).
fn switch_tail(f: &Field) -> bool {
    !f.strict
        && f.process.is_none()
        && matches!(&f.kind, FieldKind::Switch { size: Some(_), cases, default, .. }
            if cases.iter().map(|(_, n)| n).chain(default.iter()).any(|n| matches!(n, TypeRef::Named(n) if crate::num_type::case_builtin(n))))
}

/// The character set of a switch's `str` and `strz` cases.
fn switch_encoding(f: &Field) -> Option<&'static str> {
    match &f.kind {
        FieldKind::Switch { encoding, .. } => *encoding,
        _ => None,
    }
}

fn int_ty(bytes: u8, signed: bool) -> TokenStream {
    match (bytes, signed) {
        (1, false) => quote!(u8),
        (2, false) => quote!(u16),
        (4, false) => quote!(u32),
        (8, false) => quote!(u64),
        (1, true) => quote!(i8),
        (2, true) => quote!(i16),
        (4, true) => quote!(i32),
        _ => quote!(i64),
    }
}

fn int_ty_name(bytes: u8, signed: bool) -> &'static str {
    match (bytes, signed) {
        (1, false) => "u8",
        (2, false) => "u16",
        (4, false) => "u32",
        (8, false) => "u64",
        (1, true) => "i8",
        (2, true) => "i16",
        (4, true) => "i32",
        _ => "i64",
    }
}

fn method(
    prefix: &str,
    bytes: u8,
    signed: bool,
    float: bool,
    endian: Endian,
) -> proc_macro2::Ident {
    let base = if float {
        format!("f{}", bytes as u32 * 8)
    } else {
        format!("{}{}", if signed { "i" } else { "u" }, bytes as u32 * 8)
    };
    let end = if bytes == 1 {
        ""
    } else if endian == Endian::Le {
        "le"
    } else {
        "be"
    };
    format_ident!("{prefix}_{base}{end}")
}

fn read_method(bytes: u8, signed: bool, float: bool, endian: Endian) -> proc_macro2::Ident {
    method("read", bytes, signed, float, endian)
}

fn write_method(bytes: u8, signed: bool, float: bool, endian: Endian) -> proc_macro2::Ident {
    method("write", bytes, signed, float, endian)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `items` (statements in a function body) as the generator prints them.
    fn printed(items: TokenStream) -> String {
        let mut file: syn::File = syn::parse2(quote!(fn f() { #items })).unwrap();
        ungroup(&mut file);
        assert_eq!(group_in_macro(&file), None);
        let text = prettyplease::unparse(&file);
        let body: Vec<&str> = text.lines().skip(1).map(str::trim).collect();
        body[..body.len() - 1].join(" ")
    }

    #[test]
    fn operands_get_the_parentheses_precedence_needs_and_no_more() {
        let sum = group(quote!(a + b));
        let product = group(quote!(#sum * c));
        let cast = group(quote!(x as i128));
        let neg = int_lit(-5);
        let five = int_lit(5);
        let less = group(quote!(#cast < #neg));
        let call = then(
            quote!(match v {
                Some(x) => Ok(x),
                None => Err(e),
            }),
            &quote!(?),
        );
        assert_eq!(
            printed(quote! {
                let p = #product;
                let q = f(#sum, #product);
                let r = #sum.wrapping_add(#five);
                let s = #neg.wrapping_add(#cast);
                if #less {}
                let t = format!("{} {}", #product, #less);
                let u = #call;
            }),
            "let p = (a + b) * c; let q = f(a + b, (a + b) * c); \
             let r = (a + b).wrapping_add(5_i128); let s = (-5_i128).wrapping_add(x as i128); \
             if (x as i128) < -5_i128 {} let t = format!(\"{} {}\", (a + b) * c, (x as i128) < -5_i128); \
             let u = match v { Some(x) => Ok(x), None => Err(e), }?;"
        );
    }

    #[test]
    fn literals_are_typed_at_their_source() {
        assert_eq!(int_lit(4).to_string(), "4_i128");
        let min = int_lit(-128);
        assert_eq!(printed(quote!(let a = #min;)), "let a = -128_i128;");
        assert_eq!(float_lit(2.5).to_string(), "2.5_f64");
        assert_eq!(float_lit(2.0).to_string(), "2.0_f64");
    }

    #[test]
    fn a_reference_to_a_place_gives_the_place() {
        let r = group(quote!(&list[i]));
        assert_eq!(place_of(&r).map(|p| p.to_string()), Some("list [i]".into()));
        assert!(place_of(&group(quote!(&&x))).is_none());
        assert!(place_of(&quote!(&x)).is_none());
        let one = block_value(quote!(f(x)));
        let two = block_value(quote!(let y = 1; f(y)));
        assert_eq!(
            printed(quote!(let a = #one; let b = #two;)),
            "let a = f(x); let b = { let y = 1; f(y) };"
        );
    }
}
