//! Checks the IR and emits Rust: for every schema type a struct with a reader
//! (`read_from`), a writer (`write_to`), `encoded_len` and `MIN_LEN`; for every enum a Rust
//! enum; for the root type `decode`, `decode_traced` and `encode`.
//!
//! Generated readers go through `statepack_runtime::io::ByteReader` (bounds-checked, count
//! guard before any allocation, field-path errors); writers go through `ByteWriter` and derive
//! every count, length and sum from the data, refusing values that do not fit.

use crate::derive::{counts_and_lengths, plain_encoding, Derived};
use crate::diag::{Diag, Pos};
use crate::expr::{BinOp, Expr, UnOp};
use crate::ir::*;
use crate::names::{camel, doc_attrs, field_ident, temp, temp_for, type_ident};
use crate::sizes::{field_bits, type_bits};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use std::collections::{HashMap, HashSet};

mod binrw;
mod bits;
mod endian_code;
mod exact_len;
mod io_of;
mod num_switch;
mod positional;
mod proc_pos;
mod proc_term;
mod reflect;
mod root_type;
mod runs;
use crate::num_type::{case_number, looks_like_number_type};
use crate::shape::has_no_case;

/// The type of an expression or a field as seen by expressions.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty {
    Int,
    Float,
    Bool,
    Str,
    Bytes,
    Enum(String),
    List(Box<Ty>),
    User(String),
    /// The body of switch field `.1` of type `.0`.
    Switch(String, String),
    /// A conditional field (`if`) holding the given type: usable in value instances only,
    /// where its absence is an `ExprError`.
    Opt(Box<Ty>),
}

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
            (Ctx::Write, _) => quote!(.map_err(::statepack_runtime::io::ExprError::encode)?),
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
    min_len: HashMap<String, usize>,
    /// Enums that keep unknown integers (used by a field without `-sp-strict`): they get the
    /// variant `Unlisted(i128)`.
    open_enums: HashSet<String>,
    /// Types read in a sized substream by a field without `-sp-strict`: they keep the bytes
    /// they leave unread (member `__unread`) and write them back.
    unread_types: HashSet<String>,
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
    /// The seq field whose expressions are being emitted (named by their errors).
    cur_field: std::cell::RefCell<Option<String>>,
    /// The type whose code is being emitted (for `_sizeof`).
    cur_type: std::cell::RefCell<String>,
    /// The build's choices: custom processor and opaque type paths, and what to emit besides
    /// the native reader and writer (binrw, deku, bitvec impls).
    opts: crate::Options,
    /// Whether an expression anywhere in the schema uses `value._io` (computed once: every
    /// type then keeps `__io_end`).
    member_io: bool,
    /// The types that always end on a byte boundary (computed once for the schema).
    whole_types: HashSet<String>,
    /// Whether any type of the schema has a positional instance (computed once).
    positional: bool,
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
            unaligned: false,
            phase: Some(0),
            pos_writes: Vec::new(),
            read_runs: Vec::new(),
            write_runs: Vec::new(),
        }
    }
}

/// The values of one field that its member, read, write and length code share: its Rust
/// name, schema id and key path, whether the writer derives it, the name of its kept start
/// offset, its element, member and field types, its fixed array length.
struct FieldCx {
    id: proc_macro2::Ident,
    fid: String,
    kp: String,
    is_derived: bool,
    at: proc_macro2::Ident,
    elem_ty: TokenStream,
    arr: Option<usize>,
    full_ty: TokenStream,
    field_ty: TokenStream,
    is_contents: bool,
    is_leaf: bool,
}

/// What the read code of a field hands to its write code: the writer's presence test, whether
/// it is a list, its `valid` rule (constant and name), its unit in the fixed runs.
struct ReadOut {
    cond_w: Option<TokenStream>,
    repeated: bool,
    rule_const: Option<TokenStream>,
    rule_id: proc_macro2::Ident,
    run_unit: Option<runs::Unit>,
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
            cur_field: std::cell::RefCell::new(None),
            cur_type: std::cell::RefCell::new(String::new()),
            opts: crate::Options::default(),
            member_io: crate::instances::uses_member_io(s),
            whole_types: crate::shape::whole_byte_types(s),
            positional: s
                .types
                .iter()
                .any(|t| t.fields.iter().any(|f| f.at.is_some())),
        }
    }

    /// The element type of a list field `f` that is read straight into the list with its
    /// `read_push`: a plain user type (see `plain_reader`) without size, arguments, checks
    /// (`has_valid`), recursion, processing or terminator.
    fn in_place_elem(&self, f: &Field, has_valid: bool) -> Option<proc_macro2::Ident> {
        match &f.kind {
            FieldKind::User { name, size: None }
                if !has_valid
                    && f.recursive.is_empty()
                    && f.process.is_none()
                    && f.term.is_none() =>
            {
                self.s
                    .type_def(name)
                    .filter(|et| self.plain_reader(et))
                    .map(|_| type_ident(name))
            }
            _ => None,
        }
    }

    /// A type read without params, instances, positions or a computed byte order, in a
    /// schema without positional fields: its fixed runs fall back to reading the whole value
    /// again field by field (`read_fields`), and lists of it are read in place (`read_push`).
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

    /// The type has positional instances or uses `_io`: written in a sized field, it is
    /// given its own stream start (`ByteWriter::push_io`).
    fn type_needs_io(&self, name: &str) -> bool {
        self.s
            .type_def(name)
            .is_some_and(crate::instances::type_uses_io)
    }

    /// The same emitter with the build's options.
    pub fn with_options(mut self, o: &crate::Options) -> Self {
        self.opts = o.clone();
        self
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

    fn field_ty(&self, f: &Field) -> Ty {
        let inner = self.field_ty_present(f);
        if f.cond.is_some() {
            return Ty::Opt(Box::new(inner));
        }
        inner
    }

    /// The type of a field's value when it is present.
    fn field_ty_present(&self, f: &Field) -> Ty {
        if f.varint {
            return Ty::Int;
        }
        let base = match &f.kind {
            FieldKind::Bits {
                enum_name: Some(e), ..
            } => Ty::Enum(e.clone()),
            FieldKind::Bits {
                width: 1,
                offset_binary: false,
                ..
            } => Ty::Bool,
            FieldKind::Bits { .. } => Ty::Int,
            FieldKind::Int {
                enum_name: Some(e), ..
            } => Ty::Enum(e.clone()),
            FieldKind::Int { .. } => Ty::Int,
            FieldKind::Float { .. } => Ty::Float,
            FieldKind::Bytes(_) | FieldKind::Contents(_) => Ty::Bytes,
            FieldKind::Str { .. } => Ty::Str,
            FieldKind::User { name, .. } => Ty::User(name.clone()),
            FieldKind::Switch { .. } => {
                let owner = self
                    .s
                    .types
                    .iter()
                    .find(|t| t.fields.iter().any(|g| g.key_path == f.key_path))
                    .map(|t| t.name.clone())
                    .unwrap_or_default();
                Ty::Switch(owner, f.id.clone())
            }
        };
        match f.repeat {
            Repeat::None => base,
            _ => Ty::List(Box::new(base)),
        }
    }

    pub(crate) fn expr(
        &mut self,
        e: &SrcExpr,
        scope: &Scope,
        kp: &str,
    ) -> Option<(TokenStream, Ty)> {
        let outer = self.fallible.replace(false);
        let r = self.ex(&e.expr, scope);
        // A failing form in a seq field's expression reports through the reader or writer;
        // only a value instance's own method changes its return type for it.
        self.fallible
            .set(outer || (self.fallible.get() && self.in_method.get()));
        match r {
            Ok(v) => Some(v),
            Err((msg, hint)) => {
                self.err(e.pos, kp, format!("in `{}`: {msg}", e.src), hint);
                None
            }
        }
    }

    pub(crate) fn expect_ty(
        &mut self,
        e: &SrcExpr,
        scope: &Scope,
        kp: &str,
        want: Ty,
    ) -> Option<TokenStream> {
        let (ts, ty) = self.expr(e, scope, kp)?;
        if ty == want || (want == Ty::Float && ty == Ty::Int) {
            Some(if want == Ty::Float && ty == Ty::Int {
                quote!((#ts as f64))
            } else {
                ts
            })
        } else {
            self.err(e.pos, kp, format!("`{}` is {} but {} is needed here", e.src, ty_name(&ty), ty_name(&want)), match want {
                Ty::Bool => "write a condition, e.g. `kind == frame_kind::absolute` or `(flags & 1) != 0`",
                Ty::Int => "write an integer expression; use `.to_i` on enum values",
                _ => "change the expression to the needed type",
            });
            None
        }
    }

    #[allow(clippy::type_complexity)]
    fn ex(&self, e: &Expr, scope: &Scope) -> Result<(TokenStream, Ty), (String, String)> {
        match e {
            Expr::Int(_)
            | Expr::Float(_)
            | Expr::Bool(_)
            | Expr::Null
            | Expr::Str(_)
            | Expr::Name(_)
            | Expr::EnumRef(..) => self.ex_leaf(e, scope),
            Expr::Attr(..) => self.ex_attr(e, scope),
            Expr::Index(..) | Expr::List(_) => self.ex_index_list(e, scope),
            Expr::Call(..) => self.ex_call(e, scope),
            Expr::Cast(..) | Expr::SizeOf(_) | Expr::Unary(..) | Expr::Ternary(..) => {
                self.ex_cast_unary_ternary(e, scope)
            }
            Expr::Binary(..) => self.ex_binary(e, scope),
        }
    }

    /// A literal, a name (a field, param, `_`, `_index`, a value instance, `_sizeof`) or an
    /// enum value.
    #[allow(clippy::type_complexity)]
    fn ex_leaf(&self, e: &Expr, scope: &Scope) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Int(v) => {
                let l = Literal::i128_unsuffixed(*v);
                (quote!((#l as i128)), Ty::Int)
            }
            Expr::Float(v) => {
                let l = Literal::f64_unsuffixed(*v);
                (quote!((#l as f64)), Ty::Float)
            }
            Expr::Bool(b) => (quote!(#b), Ty::Bool),
            Expr::Null => {
                return bad(
                    "`null` has no type in a schema expression".into(),
                    "test for a missing value with the field's own condition instead",
                )
            }
            Expr::Str(s) => (quote!(#s), Ty::Str),
            Expr::Name(n)
                if scope.get(n).is_none() && self.cur_instances.iter().any(|i| &i.id == n) =>
            {
                return self.inline_instance(n, scope);
            }
            Expr::Name(n) if n == "_sizeof" && scope.get(n).is_none() => {
                // Kaitai Struct's `_sizeof` is static: the fixed size of the type.
                let tn = self.cur_type.borrow().clone();
                match self.fixed_size_of(&tn) {
                    Some(v) => {
                        let l = Literal::i128_unsuffixed(v as i128);
                        (quote!((#l as i128)), Ty::Int)
                    }
                    None => return bad(format!("unable to derive `_sizeof` of type `{tn}`: it has no fixed size"), "`_sizeof` needs a type whose fields are all unconditional with fixed sizes and counts"),
                }
            }
            Expr::Name(n) => {
                let Some(ty) = scope.get(n) else {
                    return bad(format!("`{n}` is not a field read before this point"), "expressions may use fields that come earlier in the same type (and `_` where allowed), params, and the enclosing types through `_parent.x` / `_root.x`");
                };
                let id = if n == "_" {
                    temp("elem")
                } else if n == "_index" {
                    // The element's index in a repeated field (the loops' `__i: usize`).
                    temp("i")
                } else {
                    field_ident(n)
                };
                match ty {
                    Ty::Int => (quote!((#id as i128)), Ty::Int),
                    Ty::Float => (quote!((#id as f64)), Ty::Float),
                    Ty::Opt(inner) => {
                        let msg = format!("`{n}` is absent (its `if` is false)");
                        self.fallible.set(true);
                        elem_value(
                            quote!((match &#id { ::std::option::Option::Some(__o) => ::std::result::Result::Ok(__o), ::std::option::Option::None => ::std::result::Result::Err(::statepack_runtime::io::ExprError(::std::string::String::from(#msg))) }) #q),
                            (**inner).clone(),
                        )
                    }
                    t => match self.number_switch_ty(t) {
                        // A switch of number types is its number.
                        Some(nt) => {
                            self.fallible.set(true);
                            (quote!(#id.value() #q), nt)
                        }
                        None => (quote!(#id), t.clone()),
                    },
                }
            }
            Expr::EnumRef(en, v) => {
                let Some(def) = self.s.enum_def(en) else {
                    return bad(format!("unknown enum `{en}`"), "name an enum from `enums`");
                };
                if !def.values.iter().any(|x| &x.name == v) {
                    return bad(
                        format!("`{v}` is not a value of `{en}`"),
                        "use one of the names listed under the enum",
                    );
                }
                let (t, vi) = (type_ident(en), type_ident(v));
                (quote!(#t::#vi), Ty::Enum(en.clone()))
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `a.b`: a member of a user-type value, `_io`, `value._io`, `_sizeof`, or a property of a
    /// number, string, bytes, list or enum.
    #[allow(clippy::type_complexity)]
    fn ex_attr(&self, e: &Expr, scope: &Scope) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Attr(inner, attr) if attr == "_sizeof" => {
                // `field._sizeof`: the static size of that field (its `size`, or its type's).
                let owner = match &**inner {
                    Expr::Name(n) if scope.get(n).is_some() => {
                        Some((self.cur_type.borrow().clone(), n.clone()))
                    }
                    Expr::Attr(obj, m) => {
                        // Only the object's type matters: the size is known without reading
                        // it, so an index in `obj` cannot make this fail.
                        let before = self.fallible.get();
                        let obj_ty = self.ex(obj, scope)?.1;
                        self.fallible.set(before);
                        match obj_ty {
                            Ty::User(tn) => Some((tn, m.clone())),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let size = owner
                    .as_ref()
                    .and_then(|(tn, fid)| self.fixed_field_size(tn, fid));
                match size {
                    Some(v) => {
                        let l = Literal::i128_unsuffixed(v as i128);
                        (quote!((#l as i128)), Ty::Int)
                    }
                    None => return bad(format!("unable to derive the sizeof of `{inner}`: it has no fixed size"), "`x._sizeof` needs a field of fixed size (a number, a literal `size`, or a type of fixed size)"),
                }
            }
            Expr::Attr(inner, attr)
                if matches!(&**inner, Expr::Name(n) if n == "_io")
                    && scope.get("_io").is_none() =>
            {
                return positional::io_attr(scope.ctx == Ctx::Read, scope.ctx == Ctx::Write, attr);
            }
            Expr::Attr(io, attr)
                if matches!(&**io, Expr::Attr(_, a) if a == "_io")
                    && matches!(attr.as_str(), "pos" | "size" | "eof") =>
            {
                // `value._io.pos`: the stream of a user-type value, as it was when the value
                // had been read.
                let Expr::Attr(inner, _) = &**io else {
                    unreachable!()
                };
                let (ts, ty) = self.ex(inner, scope)?;
                if !matches!(ty, Ty::User(_)) {
                    return bad(
                        format!("`._io` applies to a user-type value, not {}", ty_name(&ty)),
                        "use `_io` for this type's own stream",
                    );
                }
                return Ok(positional::member_io(ts, attr));
            }
            Expr::Attr(inner, attr) => {
                let (ts, ty) = self.ex(inner, scope)?;
                if let Ty::User(tn) = &ty {
                    return self.member_of(&ts, tn, attr, scope);
                }
                match (attr.as_str(), &ty) {
                    ("to_i", Ty::Enum(_)) => (quote!(#ts.to_i()), Ty::Int),
                    ("to_i", Ty::Float) => (quote!((#ts as i128)), Ty::Int),
                    ("to_i", Ty::Bool) => (quote!((#ts as i128)), Ty::Int),
                    ("to_s", Ty::Int) => (quote!(::std::format!("{}", #ts)), Ty::Str),
                    ("to_i", Ty::Int) => (ts, Ty::Int),
                    ("to_s", Ty::Str) => (ts, Ty::Str),
                    ("reverse", Ty::Str) => (
                        quote!(AsRef::<str>::as_ref(&#ts).chars().rev().collect::<::std::string::String>()),
                        Ty::Str,
                    ),
                    ("to_i", Ty::Str) => {
                        self.fallible.set(true);
                        (quote!(::statepack_runtime::io::expr_str_to_i(AsRef::<str>::as_ref(&#ts), 10) #q), Ty::Int)
                    }
                    ("first" | "last" | "min" | "max", Ty::List(_) | Ty::Bytes) => {
                        let elem = match &ty {
                            Ty::List(e) => (**e).clone(),
                            _ => Ty::Int,
                        };
                        if matches!(attr.as_str(), "min" | "max") && !matches!(elem, Ty::Int | Ty::Float | Ty::Str) {
                            return bad(format!("`.{attr}` does not apply to {}", ty_name(&ty)), "`.min` and `.max` take lists of numbers or strings, or bytes");
                        }
                        self.fallible.set(true);
                        let r = match attr.as_str() {
                            "first" => quote!(::statepack_runtime::io::expr_at(&(#ts)[..], 0) #q),
                            "last" => quote!(::statepack_runtime::io::expr_last(&(#ts)[..]) #q),
                            "min" => quote!(::statepack_runtime::io::expr_extreme(&(#ts)[..], false) #q),
                            _ => quote!(::statepack_runtime::io::expr_extreme(&(#ts)[..], true) #q),
                        };
                        elem_value(r, elem)
                    }
                    ("size", Ty::List(_) | Ty::Bytes) | ("length", Ty::Bytes) => (quote!((#ts.len() as i128)), Ty::Int),
                    ("length", Ty::Str) => (quote!((#ts.chars().count() as i128)), Ty::Int),
                    // Kaitai Struct's compiler refuses `.length` on a list: keep schemas it accepts.
                    ("length", Ty::List(_)) => return bad(format!("`.length` does not apply to {} (Kaitai Struct counts a list with `.size`)", ty_name(&ty)), "use `.size` for the number of elements"),
                    _ => return bad(format!("`.{attr}` does not apply to {}", ty_name(&ty)), "supported: `.to_i` on enums, `.size` on lists and bytes, `.length` on bytes and strings"),
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `a[i]` and a list literal `[a, b, ...]`.
    #[allow(clippy::type_complexity)]
    fn ex_index_list(
        &self,
        e: &Expr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Index(list, index) => {
                let (ts, ty) = self.ex(list, scope)?;
                let (it, ity) = self.ex(index, scope)?;
                let elem = match &ty {
                    Ty::List(e) => (**e).clone(),
                    Ty::Bytes => Ty::Int,
                    _ => {
                        return bad(
                            format!("`[]` does not apply to {}", ty_name(&ty)),
                            "index a list or a byte array",
                        )
                    }
                };
                if ity != Ty::Int {
                    return bad(
                        format!("the index is {}, not an integer", ty_name(&ity)),
                        "index with an integer expression",
                    );
                }
                self.fallible.set(true);
                elem_value(
                    quote!(::statepack_runtime::io::expr_at(&(#ts)[..], #it) #q),
                    elem,
                )
            }
            Expr::List(items) => {
                if !items.is_empty()
                    && items
                        .iter()
                        .all(|x| matches!(x, Expr::Int(v) if (0..=255).contains(v)))
                {
                    let lits = items.iter().map(|x| match x {
                        Expr::Int(v) => Literal::u8_unsuffixed(*v as u8),
                        _ => Literal::u8_unsuffixed(0),
                    });
                    return Ok((quote!(::std::vec::Vec::<u8>::from([#(#lits),*])), Ty::Bytes));
                }
                let mut parts = Vec::new();
                let mut elem: Option<Ty> = None;
                for x in items {
                    let (mut xt, mut xty) = self.ex(x, scope)?;
                    if xty == Ty::Int && elem == Some(Ty::Float) {
                        xt = quote!((#xt as f64));
                        xty = Ty::Float;
                    }
                    if xty == Ty::Float && elem == Some(Ty::Int) {
                        return bad("a list literal mixes integers and floats; write the integers as floats (`1.0`)".into(), "give every element the same type");
                    }
                    match &elem {
                        Some(e) if *e != xty => {
                            return bad(
                                format!(
                                    "a list literal mixes {} and {}",
                                    ty_name(e),
                                    ty_name(&xty)
                                ),
                                "give every element the same type",
                            )
                        }
                        _ => elem = Some(xty.clone()),
                    }
                    parts.push(match xty {
                        Ty::Str => quote!(::std::string::String::from(AsRef::<str>::as_ref(&#xt))),
                        Ty::Int | Ty::Float | Ty::Bool | Ty::Enum(_) => xt,
                        other => {
                            return bad(
                                format!("list literals of {} are not supported", ty_name(&other)),
                                "list numbers, strings, conditions or enum values",
                            )
                        }
                    });
                }
                let Some(elem) = elem else {
                    return bad(
                        "an empty list literal has no element type".into(),
                        "give at least one element",
                    );
                };
                (
                    quote!(::std::vec::Vec::from([#(#parts),*])),
                    Ty::List(Box::new(elem)),
                )
            }
            // `crate::context`: a context param of a recursive root type, or (at the top
            // level, where it is absent) the root's own value.
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// A method call `a.m(args)`.
    #[allow(clippy::type_complexity)]
    fn ex_call(&self, e: &Expr, scope: &Scope) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Call(inner, m, args) if m == "__or_self" && args.len() == 1 => {
                let Expr::Name(pn) = &**inner else {
                    return bad("internal: `__or_self` on a non-name".into(), "");
                };
                let Some(Ty::Opt(pty)) = scope.get(pn).cloned() else {
                    return bad(
                        format!("internal: `{pn}` is not an optional context param"),
                        "",
                    );
                };
                let (fb, fty) = self.ex(&args[0], scope)?;
                if fty != *pty || !matches!(fty, Ty::Int | Ty::Float | Ty::Bool | Ty::Enum(_)) {
                    return bad(format!("`_root` paths of a recursive root type must give a number, condition or enum, not {}", ty_name(&fty)), "use `_root.<number field>`");
                }
                let id = field_ident(pn);
                (
                    quote!((match &#id { ::std::option::Option::Some(__o) => *__o, ::std::option::Option::None => #fb })),
                    fty,
                )
            }
            Expr::Call(inner, m, args) => {
                let (ts, ty) = self.ex(inner, scope)?;
                let mut vals = Vec::new();
                for a in args {
                    vals.push(self.ex(a, scope)?);
                }
                let tys: Vec<&Ty> = vals.iter().map(|(_, t)| t).collect();
                match (m.as_str(), &ty, tys.as_slice()) {
                    ("substring", Ty::Str, [Ty::Int, Ty::Int]) => {
                        let (a, b) = (&vals[0].0, &vals[1].0);
                        self.fallible.set(true);
                        (
                            quote!(::statepack_runtime::io::expr_substring(AsRef::<str>::as_ref(&#ts), #a, #b) #q),
                            Ty::Str,
                        )
                    }
                    ("to_i", Ty::Str, [Ty::Int]) => {
                        let r = &vals[0].0;
                        self.fallible.set(true);
                        (
                            quote!(::statepack_runtime::io::expr_str_to_i(AsRef::<str>::as_ref(&#ts), #r) #q),
                            Ty::Int,
                        )
                    }
                    ("to_s", Ty::Bytes, [Ty::Str]) => {
                        let Some(Expr::Str(enc)) = args.first() else {
                            return bad(
                                "`.to_s` takes the encoding as a string literal".into(),
                                "write e.g. `.to_s(\"UTF-8\")`",
                            );
                        };
                        self.fallible.set(true);
                        (
                            quote!(::statepack_runtime::io::expr_bytes_to_s(AsRef::<[u8]>::as_ref(&#ts), #enc) #q),
                            Ty::Str,
                        )
                    }
                    _ => {
                        let shown: Vec<String> = tys.iter().map(|t| ty_name(t)).collect();
                        return bad(format!("`.{m}({})` does not apply to {}", shown.join(", "), ty_name(&ty)), "supported: `.substring(from, to)` and `.to_i(radix)` on strings, `.to_s(encoding)` on bytes");
                    }
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `a.as<t>`, `sizeof<t>`, a unary operator and `c ? a : b`.
    #[allow(clippy::type_complexity)]
    fn ex_cast_unary_ternary(
        &self,
        e: &Expr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Cast(inner, target) => {
                let (ts, ty) = self.ex(inner, scope)?;
                // A list cast (`.as<u2[]>`) is accepted where each element has that type.
                let (mut elem_ty, mut elem_target) = (&ty, target.as_str());
                while let (Ty::List(e), Some(t)) = (elem_ty, elem_target.strip_suffix("[]")) {
                    (elem_ty, elem_target) = (&**e, t);
                }
                let same = match (elem_ty, elem_target) {
                    (_, t) if t.ends_with("[]") => false,
                    (Ty::Bytes, "bytes") | (Ty::Str, "str") => true,
                    (Ty::Int, t) => looks_like_number_type(t) && !t.starts_with('f'),
                    (Ty::Float, "f4" | "f8") => true,
                    (Ty::User(tn), t) => match (self.s.type_def(tn), self.s.type_def(t)) {
                        (Some(a), Some(b)) => std::ptr::eq(a, b),
                        _ => false,
                    },
                    _ => false,
                };
                if let (Ty::List(e), "bytes") = (&ty, target.as_str()) {
                    if **e == Ty::Int {
                        // `[a, b].as<bytes>`: every element must be a byte value.
                        self.fallible.set(true);
                        return Ok((
                            quote!((#ts).iter().map(|__b| u8::try_from(*__b as i128).map_err(|_| ::statepack_runtime::io::ExprError(::std::format!("{} is not a byte value (0..=255)", __b)))).collect::<::std::result::Result<::std::vec::Vec<u8>, _>>() #q),
                            Ty::Bytes,
                        ));
                    }
                }
                if let Ty::Switch(owner, fid) = &ty {
                    let field = self
                        .s
                        .type_def(owner)
                        .and_then(|t| t.fields.iter().find(|g| &g.id == fid).map(|g| (t, g)));
                    if let Some((t, g)) = field {
                        if let Some((vi, tn, _)) = self
                            .switch_variants(g)
                            .into_iter()
                            .find(|(_, tn, _)| tn == target)
                        {
                            let en = Self::switch_enum_name(t, g);
                            let msg = format!("`{}.{}` does not hold a `{}`", t.name, g.id, tn);
                            self.fallible.set(true);
                            return Ok((
                                quote!((match &(#ts) { #en::#vi(__c) => ::std::result::Result::Ok(__c), #[allow(unreachable_patterns)] _ => ::std::result::Result::Err(::statepack_runtime::io::ExprError(::std::string::String::from(#msg))) }) #q),
                                Ty::User(tn),
                            ));
                        }
                    }
                }
                if !same {
                    return bad(format!("`.as<{target}>` cannot make {} into `{target}`", ty_name(&ty)), "`.as<>` is supported where the value already has that type (a number type for integers, the same user type)");
                }
                (ts, ty)
            }
            Expr::SizeOf(target) => match self.fixed_size_of(target) {
                Some(n) => {
                    let l = Literal::i128_unsuffixed(n as i128);
                    (quote!((#l as i128)), Ty::Int)
                }
                None => {
                    return bad(
                        format!("`sizeof<{target}>` needs a type of one fixed size"),
                        "name a number type or a user type whose fields all have fixed sizes",
                    )
                }
            },
            Expr::Unary(op, inner) => {
                let (ts, ty) = self.ex(inner, scope)?;
                match (op, &ty) {
                    (UnOp::Not, Ty::Bool) => (quote!((!#ts)), Ty::Bool),
                    (UnOp::Neg, Ty::Int) => (quote!(#ts.wrapping_neg()), Ty::Int),
                    (UnOp::Neg, Ty::Float) => (quote!((-#ts)), Ty::Float),
                    (UnOp::BitNot, Ty::Int) => (quote!((!#ts)), Ty::Int),
                    _ => {
                        return bad(
                            format!("this operator does not apply to {}", ty_name(&ty)),
                            "`not` takes a condition; `-` and `~` take numbers",
                        )
                    }
                }
            }
            Expr::Ternary(c, a, b) => {
                let (c, ct) = self.ex(c, scope)?;
                let (a, at) = self.ex(a, scope)?;
                let (b, bt) = self.ex(b, scope)?;
                if ct != Ty::Bool {
                    return bad(
                        "the condition of `? :` is not a condition".into(),
                        "write a comparison before `?`",
                    );
                }
                if at != bt {
                    return bad(
                        format!(
                            "the branches of `? :` differ ({} and {})",
                            ty_name(&at),
                            ty_name(&bt)
                        ),
                        "make both branches the same type",
                    );
                }
                // Branches may be a borrowed field and an owned computed value: strings and
                // bytes are made owned on both sides so the two have one Rust type.
                let (a, b) = match at {
                    Ty::Str => (
                        quote!(::std::string::String::from(AsRef::<str>::as_ref(&#a))),
                        quote!(::std::string::String::from(AsRef::<str>::as_ref(&#b))),
                    ),
                    Ty::Bytes => (
                        quote!(AsRef::<[u8]>::as_ref(&#a).to_vec()),
                        quote!(AsRef::<[u8]>::as_ref(&#b).to_vec()),
                    ),
                    // Lists of numbers widen to `i128` / `f64` elements (a `u2` field and a
                    // literal then agree); others are copied.
                    Ty::List(ref e) if **e == Ty::Int => (
                        quote!((#a).iter().map(|__e| *__e as i128).collect::<::std::vec::Vec<i128>>()),
                        quote!((#b).iter().map(|__e| *__e as i128).collect::<::std::vec::Vec<i128>>()),
                    ),
                    Ty::List(ref e) if **e == Ty::Float => (
                        quote!((#a).iter().map(|__e| *__e as f64).collect::<::std::vec::Vec<f64>>()),
                        quote!((#b).iter().map(|__e| *__e as f64).collect::<::std::vec::Vec<f64>>()),
                    ),
                    Ty::List(_) => (quote!((#a)[..].to_vec()), quote!((#b)[..].to_vec())),
                    _ => (a, b),
                };
                (quote!((if #c { #a } else { #b })), at)
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// A binary operator: arithmetic, bit operations, comparisons, `and`/`or`.
    #[allow(clippy::type_complexity)]
    fn ex_binary(&self, e: &Expr, scope: &Scope) -> Result<(TokenStream, Ty), (String, String)> {
        let bad = |m: String, h: &str| Err((m, h.to_owned()));
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        Ok(match e {
            Expr::Binary(op, a, b) => {
                let (mut at, mut aty) = self.ex(a, scope)?;
                let (mut bt, mut bty) = self.ex(b, scope)?;
                if aty == Ty::Int && bty == Ty::Float {
                    at = quote!((#at as f64));
                    aty = Ty::Float;
                }
                if aty == Ty::Float && bty == Ty::Int {
                    bt = quote!((#bt as f64));
                    bty = Ty::Float;
                }
                match op {
                    BinOp::And | BinOp::Or => {
                        if aty != Ty::Bool || bty != Ty::Bool {
                            return bad(
                                format!(
                                    "`and`/`or` need conditions, found {} and {}",
                                    ty_name(&aty),
                                    ty_name(&bty)
                                ),
                                "compare values first, e.g. `(flags & 1) != 0 and n > 0`",
                            );
                        }
                        if *op == BinOp::And {
                            (quote!((#at && #bt)), Ty::Bool)
                        } else {
                            (quote!((#at || #bt)), Ty::Bool)
                        }
                    }
                    _ if op.is_comparison() => {
                        let ordered = !matches!(op, BinOp::Eq | BinOp::Ne);
                        let ok = match (&aty, &bty) {
                            (Ty::Int, Ty::Int) | (Ty::Float, Ty::Float) => true,
                            (Ty::Enum(x), Ty::Enum(y)) => x == y && !ordered,
                            // Strings order by code point, as Kaitai's Python target does.
                            (Ty::Str, Ty::Str) => true,
                            (Ty::Bool, Ty::Bool) => !ordered,
                            // Bytes compare element by element as unsigned bytes, like Kaitai.
                            (Ty::Bytes, Ty::Bytes) => true,
                            _ => false,
                        };
                        if !ok {
                            return bad(format!("cannot compare {} with {} this way", ty_name(&aty), ty_name(&bty)), "compare an enum with a value of the same enum (`kind == frame_kind::absolute`), or use `.to_i`");
                        }
                        if aty == Ty::Str {
                            at = quote!(AsRef::<str>::as_ref(&#at));
                            bt = quote!(AsRef::<str>::as_ref(&#bt));
                        }
                        if aty == Ty::Bytes {
                            at = quote!(AsRef::<[u8]>::as_ref(&#at));
                            bt = quote!(AsRef::<[u8]>::as_ref(&#bt));
                        }
                        let o = match op {
                            BinOp::Eq => quote!(==),
                            BinOp::Ne => quote!(!=),
                            BinOp::Lt => quote!(<),
                            BinOp::Le => quote!(<=),
                            BinOp::Gt => quote!(>),
                            _ => quote!(>=),
                        };
                        (quote!((#at #o #bt)), Ty::Bool)
                    }
                    _ => {
                        if aty == Ty::Float && bty == Ty::Float && *op == BinOp::Mod {
                            // Floored, as the integer `%` (docs/schema-language.md, "One
                            // semantics").
                            return Ok((
                                quote!(::statepack_runtime::io::expr_fmod_floor(#at, #bt)),
                                Ty::Float,
                            ));
                        }
                        if aty == Ty::Float
                            && bty == Ty::Float
                            && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div)
                        {
                            let o = match op {
                                BinOp::Add => quote!(+),
                                BinOp::Sub => quote!(-),
                                BinOp::Mul => quote!(*),
                                _ => quote!(/),
                            };
                            return Ok((quote!((#at #o #bt)), Ty::Float));
                        }
                        if *op == BinOp::Add && aty == Ty::Str && bty == Ty::Str {
                            // String concatenation.
                            return Ok((
                                quote!(
                                    ::std::format!("{}{}", AsRef::<str>::as_ref(&#at), AsRef::<str>::as_ref(&#bt))
                                ),
                                Ty::Str,
                            ));
                        }
                        if aty != Ty::Int || bty != Ty::Int {
                            return bad(
                                format!(
                                    "arithmetic needs integers, found {} and {}",
                                    ty_name(&aty),
                                    ty_name(&bty)
                                ),
                                "use `.to_i` on enum values",
                            );
                        }
                        let lit = match &**b {
                            Expr::Int(v) => Some(*v),
                            Expr::Unary(UnOp::Neg, x) => match &**x {
                                Expr::Int(v) => Some(v.wrapping_neg()),
                                _ => None,
                            },
                            _ => None,
                        };
                        match op {
                            BinOp::Add => (quote!(#at.wrapping_add(#bt)), Ty::Int),
                            BinOp::Sub => (quote!(#at.wrapping_sub(#bt)), Ty::Int),
                            BinOp::Mul => (quote!(#at.wrapping_mul(#bt)), Ty::Int),
                            BinOp::BitAnd => (quote!((#at & #bt)), Ty::Int),
                            BinOp::BitOr => (quote!((#at | #bt)), Ty::Int),
                            BinOp::BitXor => (quote!((#at ^ #bt)), Ty::Int),
                            BinOp::Div | BinOp::Mod => {
                                match lit {
                                    Some(v) if v != 0 => {
                                        // Kaitai Struct's rules: `/` rounds down, `%`
                                        // takes the divisor's sign.
                                        if *op == BinOp::Div {
                                            (
                                                quote!(::statepack_runtime::io::div_floor(#at, #bt)),
                                                Ty::Int,
                                            )
                                        } else {
                                            (
                                                quote!(::statepack_runtime::io::mod_floor(#at, #bt)),
                                                Ty::Int,
                                            )
                                        }
                                    }
                                    Some(_) => {
                                        return bad(
                                            "division by the constant 0".into(),
                                            "divide by a non-zero number",
                                        )
                                    }
                                    // A divisor from the data: zero is an error when the
                                    // expression is evaluated, never a wrong value.
                                    None => {
                                        self.fallible.set(true);
                                        let f = if *op == BinOp::Div {
                                            quote!(::statepack_runtime::io::expr_div_floor)
                                        } else {
                                            quote!(::statepack_runtime::io::expr_mod_floor)
                                        };
                                        (quote!(#f(#at, #bt) #q), Ty::Int)
                                    }
                                }
                            }
                            _ => match lit {
                                Some(v) if (0..64).contains(&v) => {
                                    let n = Literal::u32_unsuffixed(v as u32);
                                    if *op == BinOp::Shl {
                                        (quote!(#at.wrapping_shl(#n)), Ty::Int)
                                    } else {
                                        (quote!(#at.wrapping_shr(#n)), Ty::Int)
                                    }
                                }
                                Some(_) => {
                                    return bad(
                                        "a constant shift must be 0..63".into(),
                                        "shift by 0 to 63 bits, e.g. `flags >> 2`",
                                    )
                                }
                                // A shift amount from the data: outside 0..=63 it is an
                                // error when the expression is evaluated.
                                None => {
                                    self.fallible.set(true);
                                    let left = *op == BinOp::Shl;
                                    (
                                        quote!(::statepack_runtime::io::expr_shift(#at, #bt, #left) #q),
                                        Ty::Int,
                                    )
                                }
                            },
                        }
                    }
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// `value.member` where `value` is of user type `tn`: a stored field (copied if it is a
    /// number, borrowed otherwise), a derived count/length computed from the value, or a
    /// value instance (its method).
    #[allow(clippy::type_complexity)]
    fn member_of(
        &self,
        ts: &TokenStream,
        tn: &str,
        attr: &str,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        let Some(t) = self.s.type_def(tn) else {
            return Err((format!("unknown type `{tn}`"), String::new()));
        };
        if let Some(f) = t.fields.iter().find(|f| f.id == attr) {
            let fi = field_ident(attr);
            let derived = counts_and_lengths(t);
            if let Some(d) = derived.get(attr) {
                let v = match d {
                    Derived::Count(l) | Derived::Bytes(l) => {
                        let li = field_ident(l);
                        let user = t.fields.iter().find(|g| &g.id == l).is_some_and(|g| {
                            matches!(g.kind, FieldKind::User { .. } | FieldKind::Switch { .. })
                        });
                        if user && matches!(d, Derived::Bytes(_)) {
                            quote!((#ts.#li.encoded_len() as i128))
                        } else {
                            quote!((#ts.#li.len() as i128))
                        }
                    }
                    Derived::Sum(..) => {
                        return Err((
                            format!("`{attr}` of `{tn}` is a derived sum"),
                            "use the list's values".into(),
                        ))
                    }
                };
                return Ok((v, Ty::Int));
            }
            if f.sum_of.is_some() {
                return Err((
                    format!("`{attr}` of `{tn}` is a derived sum"),
                    "use the list's values".into(),
                ));
            }
            let fty = self.field_ty(f);
            return Ok(match &fty {
                Ty::Int => (quote!((#ts.#fi as i128)), Ty::Int),
                Ty::Float => (quote!((#ts.#fi as f64)), Ty::Float),
                Ty::Bool | Ty::Enum(_) => (quote!(#ts.#fi), fty.clone()),
                Ty::Opt(inner) => {
                    let msg = format!("`{attr}` of `{tn}` is absent (its `if` is false)");
                    self.fallible.set(true);
                    elem_value(
                        quote!((match &#ts.#fi { ::std::option::Option::Some(__o) => ::std::result::Result::Ok(__o), ::std::option::Option::None => ::std::result::Result::Err(::statepack_runtime::io::ExprError(::std::string::String::from(#msg))) }) #q),
                        (**inner).clone(),
                    )
                }
                _ if matches!(f.kind, FieldKind::Contents(_)) => {
                    return Err((
                        format!("`{attr}` of `{tn}` is fixed contents"),
                        "compare with the bytes themselves".into(),
                    ))
                }
                _ => match self.number_switch_ty(&fty) {
                    Some(nt) => {
                        self.fallible.set(true);
                        (quote!(#ts.#fi.value() #q), nt)
                    }
                    None => (quote!((&#ts.#fi)), fty.clone()),
                },
            });
        }
        if let Some(i) = t.instances.iter().find(|i| i.id == attr) {
            let mi = field_ident(attr);
            if i.cond.is_some() {
                return Err((
                    format!("instance `{attr}` of `{tn}` is conditional (`if`)"),
                    "test the same condition instead".into(),
                ));
            }
            // The instance's type, from its expression in the scope of its own type; the key
            // on the inlining stack stops a cycle through other types.
            let key = format!("{tn}.{attr}");
            if self.inlining.borrow().contains(&key) || self.inlining.borrow().len() > 64 {
                return Err((
                    format!("instance `{key}` depends on itself"),
                    "compute the value from fields, not from itself".into(),
                ));
            }
            self.inlining.borrow_mut().push(key);
            let ty = self.instance_ty(t, i);
            self.inlining.borrow_mut().pop();
            let (ty, fallible) = ty?;
            let call = if fallible {
                self.fallible.set(true);
                quote!(#ts.#mi() #q)
            } else {
                quote!(#ts.#mi())
            };
            return Ok(match ty {
                Ty::Int | Ty::Float | Ty::Bool | Ty::Enum(_) => (call, ty),
                other => (quote!((&#call)), other),
            });
        }
        Err((
            format!("`{tn}` has no field or instance `{attr}`"),
            "name a field of that type".into(),
        ))
    }

    /// The arguments of field `f` for the `params` of type `tn` (those written in the schema,
    /// then the context params of `crate::context`), converted to the params' member types,
    /// in `scope`; reports a count or type mismatch.
    fn param_args(
        &mut self,
        f: &Field,
        tn: &str,
        scope: &Scope,
        kp: &str,
    ) -> Option<Vec<TokenStream>> {
        let params = self
            .s
            .type_def(tn)
            .map(|t| t.params.clone())
            .unwrap_or_default();
        let explicit: Vec<Option<SrcExpr>> = match &f.kind {
            FieldKind::User { .. } => f.args.iter().cloned().map(Some).collect(),
            _ => f
                .switch_args
                .iter()
                .find(|(n, _)| n == tn)
                .map(|(_, a)| a.iter().cloned().map(Some).collect())
                .unwrap_or_default(),
        };
        let written = params.iter().filter(|p| p.context.is_none()).count();
        if written != explicit.len() {
            self.err(
                f.pos_of("type"),
                &format!("{kp}.type"),
                format!(
                    "type `{tn}` takes {} argument(s) but {} are given",
                    written,
                    explicit.len()
                ),
                "give one argument per entry of the type's `params`, in order: `type: name(a, b)`",
            );
            return None;
        }
        let mut all = explicit;
        if let Some((_, ctx)) = f.ctx_args.iter().find(|(n, _)| n == tn) {
            all.extend(ctx.iter().cloned());
        }
        let mut out = Vec::new();
        for (p, a) in params.iter().zip(&all) {
            let (rty, want) = param_rust_ty(&p.kind);
            let Some(a) = a else {
                out.push(quote!(::std::option::Option::<#rty>::None));
                continue;
            };
            let (ts, ty) = self.expr(a, scope, &format!("{kp}.type"))?;
            let ok = ty == want || (want == Ty::Float && ty == Ty::Int);
            if !ok {
                let what = match &p.context {
                    Some(c) => format!("`{c}` of `{tn}` (given as `{}`)", a.src),
                    None => format!("argument `{}`", a.src),
                };
                self.err(
                    f.pos_of("type"),
                    &format!("{kp}.type"),
                    format!(
                        "{what} is {} but param `{}` of `{tn}` is {}",
                        ty_name(&ty),
                        p.id,
                        ty_name(&want)
                    ),
                    "pass a value of the param's type",
                );
                return None;
            }
            let v = convert_arg(ts, &want);
            out.push(if p.optional {
                quote!(::std::option::Option::Some(#v))
            } else {
                v
            });
        }
        Some(out)
    }

    /// The writer's check that value `v` of type `tn`, written by field `f`, holds the
    /// params the schema gives it there.
    fn param_checks(
        &mut self,
        f: &Field,
        tn: &str,
        scope: &Scope,
        kp: &str,
        v: TokenStream,
    ) -> Option<TokenStream> {
        let args = self.param_args(f, tn, scope, kp)?;
        let params = self
            .s
            .type_def(tn)
            .map(|td| td.params.clone())
            .unwrap_or_default();
        let checks = params.iter().zip(args).map(|(p, a)| {
            let pi = field_ident(&p.id);
            let pn = p.context.clone().unwrap_or_else(|| p.id.clone());
            quote! {
                if #v.#pi != #a {
                    return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::Semantic(format!("param `{}` of the value is {:?} but the schema gives {:?}", #pn, #v.#pi, #a))));
                }
            }
        });
        Some(quote!(#(#checks)*))
    }

    /// The fixed encoded size in bytes of a number type or a user type (`sizeof<...>`), if it
    /// has one: every field unconditional, of fixed size and count, whole bytes in total.
    fn fixed_size_of(&self, name: &str) -> Option<usize> {
        let number = match name {
            "u1" | "s1" => Some(1),
            "u2" | "s2" => Some(2),
            "u4" | "s4" | "f4" => Some(4),
            "u8" | "s8" | "f8" => Some(8),
            _ => None,
        };
        if number.is_some() {
            return number;
        }
        let b = type_bits(self.s, name, 0)?;
        (b % 8 == 0).then_some(b / 8)
    }

    /// The fixed encoded size in bytes of field `fid` of type `tn` (`x._sizeof`): a number,
    /// a literal `size`, or a user type of fixed size, times a literal repeat count.
    fn fixed_field_size(&self, tn: &str, fid: &str) -> Option<usize> {
        let f = self.s.type_def(tn)?.fields.iter().find(|f| f.id == fid)?;
        let b = field_bits(self.s, f, 0)?;
        (b % 8 == 0).then_some(b / 8)
    }

    /// The type of value instance `i` of type `t` (for member access from outside).
    #[allow(clippy::type_complexity)]
    fn instance_ty(&self, t: &TypeDef, i: &Instance) -> Result<(Ty, bool), (String, String)> {
        let mut scope = Scope {
            vars: Vec::new(),
            ctx: Ctx::Method,
        };
        for p in &t.params {
            let ty = param_rust_ty(&p.kind).1;
            let ty = if p.optional {
                Ty::Opt(Box::new(ty))
            } else {
                ty
            };
            scope.vars.push((p.id.clone(), ty));
        }
        let derived = counts_and_lengths(t);
        for f in &t.fields {
            if derived.contains_key(&f.id) {
                scope.vars.push((f.id.clone(), Ty::Int));
            } else if !matches!(f.kind, FieldKind::Contents(_)) {
                scope.vars.push((f.id.clone(), self.field_ty(f)));
            }
        }
        // Instances of `t` itself are looked up while typing it.
        let me = Emitter {
            s: self.s,
            diags: Vec::new(),
            min_len: HashMap::new(),
            open_enums: self.open_enums.clone(),
            unread_types: HashSet::new(),
            cur_instances: t.instances.clone(),
            inlining: std::cell::RefCell::new(self.inlining.borrow().clone()),
            fallible: std::cell::Cell::new(false),
            in_method: std::cell::Cell::new(true),
            cur_field: std::cell::RefCell::new(None),
            cur_type: std::cell::RefCell::new(t.name.clone()),
            opts: self.opts.clone(),
            member_io: self.member_io,
            // Only expressions are typed with this emitter; no type is emitted.
            whole_types: HashSet::new(),
            positional: self.positional,
        };
        let ty = me.ex(&i.value.expr, &scope).map(|(_, ty)| ty)?;
        if let Some(c) = &i.cond {
            me.ex(&c.expr, &scope)?;
        }
        let ty = match &i.enum_name {
            Some(e) => Ty::Enum(e.clone()),
            None => ty,
        };
        Ok((ty, me.fallible.get()))
    }

    /// The runtime `Processor` of a field's `process` (and the statements that compute its
    /// key), with expressions in `scope`.
    fn processor(&mut self, f: &Field, scope: &Scope) -> Option<(TokenStream, TokenStream)> {
        let kp = format!("{}.process", f.key_path);
        Some(match f.process.as_ref()? {
            Process::Zlib => (quote!(), quote!(::statepack_runtime::io::Processor::Zlib)),
            Process::Xor(ProcArg::Bytes(b)) => {
                let lit = Literal::byte_string(b);
                (
                    quote!(),
                    quote!(::statepack_runtime::io::Processor::Xor(#lit)),
                )
            }
            Process::Xor(ProcArg::Expr(e)) => {
                let (ts, ty) = self.expr(e, scope, &kp)?;
                let setup = match ty {
                    Ty::Int => quote!(let __key = [((#ts) & 0xff) as u8];),
                    Ty::Bytes => quote!(let __key: &[u8] = AsRef::<[u8]>::as_ref(&#ts);),
                    other => {
                        self.err(
                            e.pos,
                            &kp,
                            format!("the xor key `{}` is {}", e.src, ty_name(&other)),
                            "give an integer (one byte) or a byte field",
                        );
                        return None;
                    }
                };
                (
                    setup,
                    quote!(::statepack_runtime::io::Processor::Xor(&__key[..])),
                )
            }
            Process::Rol(e) | Process::Ror(e) => {
                let n = self.expect_ty(e, scope, &kp, Ty::Int)?;
                let v = if matches!(f.process, Some(Process::Rol(_))) {
                    quote!(Rol)
                } else {
                    quote!(Ror)
                };
                (quote!(), quote!(::statepack_runtime::io::Processor::#v(#n)))
            }
            Process::Custom { name, args } => {
                let path = crate::process::processor_path(&self.opts, name)
                    .map_err(|m| {
                        self.err(
                            f.pos_of("process"),
                            &kp,
                            m,
                            "give a Rust path such as `crate::codecs::MyFx`",
                        )
                    })
                    .ok()?;
                let mut vals = Vec::new();
                for a in args {
                    let (ts, ty) = self.expr(a, scope, &kp)?;
                    vals.push(match ty {
                        Ty::Int | Ty::Bool | Ty::Float => ts,
                        Ty::Str => quote!(AsRef::<str>::as_ref(&#ts)),
                        Ty::Bytes => quote!(AsRef::<[u8]>::as_ref(&#ts)),
                        other => {
                            self.err(
                                a.pos,
                                &kp,
                                format!("processor argument `{}` is {}", a.src, ty_name(&other)),
                                "give integers, conditions, floats, strings or byte arrays",
                            );
                            return None;
                        }
                    });
                }
                (
                    quote!(let __proc = #path::new(#(#vals),*);),
                    quote!(&__proc),
                )
            }
        })
    }

    /// The runtime functions that apply the processor of `f` on read and write, and whether
    /// the write side returns a `Result`.
    fn process_fns(f: &Field) -> (TokenStream, TokenStream, bool) {
        match f.process {
            Some(Process::Custom { .. }) => (
                quote!(::statepack_runtime::process::unprocess_custom),
                quote!(::statepack_runtime::process::reprocess_custom),
                true,
            ),
            _ => (
                quote!(::statepack_runtime::io::unprocess),
                quote!(::statepack_runtime::io::reprocess),
                false,
            ),
        }
    }

    /// A value instance used in an expression: its own expression, in the same scope.
    #[allow(clippy::type_complexity)]
    fn inline_instance(
        &self,
        n: &str,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        let Some(inst) = self.cur_instances.iter().find(|i| i.id == n) else {
            return Err((format!("`{n}` is not an instance"), String::new()));
        };
        let outermost = {
            let mut stack = self.inlining.borrow_mut();
            if stack.iter().any(|x| x == n) {
                let chain: Vec<&str> = stack
                    .iter()
                    .map(String::as_str)
                    .skip_while(|x| *x != n)
                    .chain([n])
                    .collect();
                return Err((
                    format!("instance `{n}` depends on itself ({})", chain.join(" -> ")),
                    "compute the value from fields, not from itself".into(),
                ));
            }
            stack.push(n.to_owned());
            stack.len() == 1
        };
        let r = self.ex(&inst.value.expr, scope);
        self.inlining.borrow_mut().pop();
        let (ts, ty) = r.map_err(|(m, h)| {
            if outermost && !m.contains("depends on itself") {
                (format!("in instance `{n}` (`{}`): {m}", inst.value.src), h)
            } else {
                (m, h)
            }
        })?;
        let (ts, ty) = match &inst.enum_name {
            None => (ts, ty),
            Some(e) => self.int_as_enum(e, ts, &ty)?,
        };
        let Some(c) = &inst.cond else {
            return Ok((ts, ty));
        };
        // A conditional instance used by another value instance: its value when its
        // condition holds, else an error of the using instance.
        let (ct, cty) = self.ex(&c.expr, scope)?;
        if cty != Ty::Bool {
            return Err((
                format!("the `if` of instance `{n}` is not a condition"),
                "write a comparison".into(),
            ));
        }
        let msg = format!("instance `{n}` has no value (its `if` is false)");
        let q = scope.ctx.q(self.cur_field.borrow().as_deref());
        self.fallible.set(true);
        Ok((
            quote!((if #ct { ::std::result::Result::Ok(#ts) } else { ::std::result::Result::Err(::statepack_runtime::io::ExprError(::std::string::String::from(#msg))) }) #q),
            ty,
        ))
    }

    /// An integer seen as a value of enum `e` (`enum:` on a value instance).
    #[allow(clippy::type_complexity)]
    fn int_as_enum(
        &self,
        e: &str,
        ts: TokenStream,
        ty: &Ty,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        if self.s.enum_def(e).is_none() {
            return Err((
                format!("unknown enum `{e}`"),
                "name an enum from `enums`".into(),
            ));
        }
        if ty != &Ty::Int {
            return Err((
                format!("`enum: {e}` needs an integer value, found {}", ty_name(ty)),
                "give the instance an integer `value`".into(),
            ));
        }
        if !self.open_enums.contains(e) {
            return Err((
                format!("`enum` on a value instance needs the open enum `{e}` (the schema sets `-sp-strict`)"),
                "compare the integer with `.to_i` of enum values instead".into(),
            ));
        }
        let ei = type_ident(e);
        Ok((quote!(#ei::from_i_open(#ts)), Ty::Enum(e.to_owned())))
    }

    /// The methods computing `t`'s value instances, and their members for the dynamic view.
    fn emit_instances(
        &mut self,
        t: &TypeDef,
        derived: &HashMap<String, Derived>,
    ) -> Option<(Vec<TokenStream>, Vec<(String, TokenStream)>)> {
        let mut binds = Vec::new();
        let mut scope = Scope {
            vars: Vec::new(),
            ctx: Ctx::Method,
        };
        for p in &t.params {
            let id = field_ident(&p.id);
            let (_, ty) = param_rust_ty(&p.kind);
            let ty = if p.optional {
                Ty::Opt(Box::new(ty))
            } else {
                ty
            };
            binds.push(match ty {
                Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => quote!(let #id = self.#id;),
                _ => quote!(let #id = &self.#id;),
            });
            scope.vars.push((p.id.clone(), ty));
        }
        for f in &t.fields {
            let id = field_ident(&f.id);
            if let Some(d) = derived.get(&f.id) {
                let v = reflect::derived_value(t, d);
                binds.push(quote!(let #id: i128 = #v;));
                scope.vars.push((f.id.clone(), Ty::Int));
            } else if matches!(f.kind, FieldKind::Contents(_)) {
                continue;
            } else {
                let ty = self.field_ty(f);
                binds.push(match ty {
                    Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => quote!(let #id = self.#id;),
                    _ => quote!(let #id = &self.#id;),
                });
                scope.vars.push((f.id.clone(), ty));
            }
        }
        let reserved = [
            "read_from",
            "write_to",
            "encoded_len",
            "decode",
            "decode_traced",
            "encode",
        ];
        let mut methods = Vec::new();
        let mut members = Vec::new();
        for inst in &t.instances.clone() {
            let kp = inst.key_path.clone();
            if reserved.contains(&inst.id.as_str()) || t.fields.iter().any(|f| f.id == inst.id) {
                self.err(
                    inst.pos,
                    &kp,
                    format!(
                        "instance `{}` has the name of a field or of a generated method",
                        inst.id
                    ),
                    "rename the instance",
                );
                continue;
            }
            self.in_method.set(true);
            self.fallible.set(false);
            let (ts, ty) = match self
                .ex(&inst.value.expr, &scope)
                .and_then(|(ts, ty)| match &inst.enum_name {
                    None => Ok((ts, ty)),
                    Some(e) => self.int_as_enum(e, ts, &ty),
                }) {
                Ok(v) => v,
                Err((msg, hint)) => {
                    self.err(
                        inst.value.pos,
                        &format!("{kp}.value"),
                        format!("in `{}`: {msg}", inst.value.src),
                        hint,
                    );
                    continue;
                }
            };
            let (rty, body, reflect) = match &ty {
                Ty::Int => (
                    quote!(i128),
                    ts,
                    quote!(::statepack_runtime::reflect::Value::Int(__x)),
                ),
                Ty::Float => (
                    quote!(f64),
                    ts,
                    quote!(::statepack_runtime::reflect::Value::Float(__x)),
                ),
                Ty::Bool => (
                    quote!(bool),
                    ts,
                    quote!(::statepack_runtime::reflect::Value::Bool(__x)),
                ),
                Ty::Str => (
                    quote!(::std::string::String),
                    quote!(::std::string::String::from(AsRef::<str>::as_ref(&#ts))),
                    quote!(::statepack_runtime::reflect::Value::Str(
                        ::std::borrow::Cow::Owned(__x)
                    )),
                ),
                Ty::Bytes => (
                    quote!(::std::vec::Vec<u8>),
                    quote!(AsRef::<[u8]>::as_ref(&#ts).to_vec()),
                    quote!(::statepack_runtime::reflect::Value::Bytes(
                        ::std::borrow::Cow::Owned(__x)
                    )),
                ),
                Ty::Enum(e) => {
                    let ei = type_ident(e);
                    (
                        quote!(#ei),
                        ts,
                        if self.open_enums.contains(e) {
                            quote!(::statepack_runtime::reflect::Value::Enum(::statepack_runtime::reflect::EnumValue { enum_name: #ei::SCHEMA_NAME, name: __x.listed_name(), value: __x.to_i() }))
                        } else {
                            quote!(::statepack_runtime::reflect::Value::Enum(::statepack_runtime::reflect::EnumValue { enum_name: #ei::SCHEMA_NAME, name: ::std::option::Option::Some(__x.name()), value: __x.to_i() }))
                        },
                    )
                }
                Ty::User(tn) => {
                    let ti = type_ident(tn);
                    (
                        quote!(&#ti),
                        quote!(::std::convert::identity::<&#ti>(#ts)),
                        quote!(::statepack_runtime::reflect::Value::Struct(__x)),
                    )
                }
                Ty::List(e) if matches!(**e, Ty::Int | Ty::Float | Ty::Str | Ty::Bool) => {
                    let (ety, conv, item) = match &**e {
                        Ty::Int => (
                            quote!(i128),
                            quote!(*__e as i128),
                            quote!(::statepack_runtime::reflect::Value::Int(*__e)),
                        ),
                        Ty::Float => (
                            quote!(f64),
                            quote!(*__e as f64),
                            quote!(::statepack_runtime::reflect::Value::Float(*__e)),
                        ),
                        Ty::Bool => (
                            quote!(bool),
                            quote!(*__e),
                            quote!(::statepack_runtime::reflect::Value::Bool(*__e)),
                        ),
                        _ => (
                            quote!(::std::string::String),
                            quote!(::std::string::String::from(AsRef::<str>::as_ref(__e))),
                            quote!(::statepack_runtime::reflect::Value::Str(
                                ::std::borrow::Cow::Owned(__e.clone())
                            )),
                        ),
                    };
                    (
                        quote!(::std::vec::Vec<#ety>),
                        quote!((#ts).iter().map(|__e| #conv).collect::<::std::vec::Vec<#ety>>()),
                        quote!(::statepack_runtime::reflect::Value::List(__x.iter().map(|__e| #item).collect())),
                    )
                }
                Ty::List(e) if matches!(**e, Ty::User(_)) => {
                    // A list of user-type values: borrowed from the fields it comes from.
                    let tn = match &**e {
                        Ty::User(tn) => tn.as_str(),
                        _ => "",
                    };
                    let ti = type_ident(tn);
                    (
                        quote!(&[#ti]),
                        quote!(&(#ts)[..]),
                        quote!(::statepack_runtime::reflect::Value::List(
                            __x.iter()
                                .map(|__e| ::statepack_runtime::reflect::Value::Struct(__e))
                                .collect()
                        )),
                    )
                }
                other => {
                    self.err(
                        inst.value.pos,
                        &format!("{kp}.value"),
                        format!(
                            "value instances of {} are not supported yet",
                            ty_name(other)
                        ),
                        "give the instance a number, condition, string, bytes or enum value",
                    );
                    continue;
                }
            };
            let mi = field_ident(&inst.id);
            let base_reflect = reflect.clone();
            let (rty, body, reflect) = match &inst.cond {
                None => (rty, body, quote!({ let __x = self.#mi(); #reflect })),
                Some(c) => {
                    let c = self.expect_ty(c, &scope, &format!("{kp}.if"), Ty::Bool)?;
                    (
                        quote!(::std::option::Option<#rty>),
                        quote!(if #c { ::std::option::Option::Some(#body) } else { ::std::option::Option::None }),
                        quote!(match self.#mi() { ::std::option::Option::Some(__x) => #reflect, ::std::option::Option::None => ::statepack_runtime::reflect::Value::Null }),
                    )
                }
            };
            // An instance whose expression can fail returns the failure; the dynamic view
            // shows it as null.
            let (rty, body, reflect) = if self.fallible.replace(false) {
                (
                    quote!(::std::result::Result<#rty, ::statepack_runtime::io::ExprError>),
                    quote!(::std::result::Result::Ok(#body)),
                    if inst.cond.is_some() {
                        quote!(match self.#mi() { ::std::result::Result::Ok(::std::option::Option::Some(__x)) => #base_reflect, _ => ::statepack_runtime::reflect::Value::Null })
                    } else {
                        quote!(match self.#mi() { ::std::result::Result::Ok(__x) => #base_reflect, ::std::result::Result::Err(_) => ::statepack_runtime::reflect::Value::Null })
                    },
                )
            } else {
                (rty, body, reflect)
            };
            let mi = field_ident(&inst.id);
            let doc = self.doc_for(
                inst.doc.as_deref(),
                inst.pos,
                &format!(
                    "Value instance: `{}` (computed from the fields, never stored).",
                    inst.value.src
                ),
            );
            methods.push(quote! {
                #doc
                #[allow(unused_variables, clippy::redundant_locals, clippy::needless_borrow)]
                pub fn #mi(&self) -> #rty {
                    #(#binds)*
                    #body
                }
            });
            members.push((inst.id.clone(), reflect));
            let _ = &mi;
        }
        self.in_method.set(false);
        Some((methods, members))
    }

    // ------------------------------------------------------------------- emit

    /// Emits the whole schema, or returns the diagnostics.
    pub fn emit(mut self) -> Result<TokenStream, Vec<Diag>> {
        self.diags = crate::check::names_and_refs(self.s);
        if !self.diags.is_empty() {
            return Err(self.diags);
        }
        let (min_len, diags) = crate::check::layout(self.s, &self.opts);
        self.min_len = min_len;
        self.diags = diags;
        let mut items = Vec::new();
        for e in &self.s.enums {
            items.push(self.emit_enum(e));
            items.push(reflect::enum_impl(e, self.open_enums.contains(&e.name)));
        }
        for (i, t) in self.s.types.iter().enumerate() {
            if let Some(ts) = self.emit_type(t, i == 0) {
                items.push(ts);
            }
            if i == 0 {
                items.push(reflect::root_fns(t));
            }
        }
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

    fn emit_enum(&self, e: &EnumDef) -> TokenStream {
        let name = type_ident(&e.name);
        let doc = self.doc_for(
            None,
            e.pos,
            &if self.open_enums.contains(&e.name) {
                format!(
                    "Enum `{}`: an open set; a stored integer it does not list is kept as `Unlisted`.",
                    e.name
                )
            } else {
                format!(
                    "Enum `{}`: a closed set; any other stored value is a decode error.",
                    e.name
                )
            },
        );
        let variants: Vec<TokenStream> = e
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let vi = type_ident(&v.name);
                // The first value listed is the enum's `Default`.
                let default = if i == 0 { quote!(#[default]) } else { quote!() };
                let ren = &v.name;
                let d = doc_attrs(&format!(
                    "{}{} (stored as {}).",
                    v.doc
                        .as_deref()
                        .map(|d| format!("{} ", d.trim()))
                        .unwrap_or_default(),
                    v.name,
                    v.value
                ));
                quote! { #d #default #[serde(rename = #ren)] #vi }
            })
            .collect();
        // An enum without listed values (open, or empty) has no unit variant to mark.
        let (derive_default, manual_default) = if e.values.is_empty() {
            let unlisted = if self.open_enums.contains(&e.name) {
                quote! {
                    impl ::core::default::Default for #name {
                        #[doc = " The integer 0, which the enum does not list."]
                        fn default() -> Self { Self::Unlisted(0) }
                    }
                }
            } else {
                quote!()
            };
            (quote!(), unlisted)
        } else {
            (quote!(Default,), quote!())
        };
        let to_arms = e.values.iter().map(|v| {
            let vi = type_ident(&v.name);
            let l = Literal::i128_unsuffixed(v.value);
            quote! { #name::#vi => #l }
        });
        let from_arms = e.values.iter().map(|v| {
            let vi = type_ident(&v.name);
            let l = Literal::i128_unsuffixed(v.value);
            quote! { #l => Some(#name::#vi) }
        });
        let name_arms = e.values.iter().map(|v| {
            let vi = type_ident(&v.name);
            let n = &v.name;
            quote! { #name::#vi => #n }
        });
        let en = &e.schema_name;
        let open = self.open_enums.contains(&e.name);
        let (unlisted_variant, unlisted_to, unlisted_name, open_fns) = if open {
            (
                quote! {
                    #[doc = " A stored integer the enum does not list (Kaitai Struct's enums are open: the value is kept and written back)."]
                    Unlisted(i128),
                },
                quote!(#name::Unlisted(__v) => __v,),
                quote!(#name::Unlisted(_) => "unlisted",),
                quote! {
                    #[doc = " The value stored as `v`: a listed value, or `Unlisted(v)`."]
                    #[inline]
                    pub const fn from_i_open(v: i128) -> Self {
                        match Self::from_i(v) { Some(x) => x, None => Self::Unlisted(v) }
                    }
                    #[doc = " The value's name in the schema, `None` for an unlisted integer."]
                    pub const fn listed_name(self) -> Option<&'static str> {
                        match self { Self::Unlisted(_) => None, other => Some(other.name()) }
                    }
                },
            )
        } else {
            (quote!(), quote!(), quote!(), quote!())
        };
        quote! {
            #doc
            #[derive(Debug, Clone, Copy, #derive_default PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
            pub enum #name { #(#variants,)* #unlisted_variant }
            #manual_default
            impl #name {
                #[doc = " The enum's name in the schema."]
                pub const SCHEMA_NAME: &'static str = #en;
                #[doc = " The stored integer of this value."]
                #[inline]
                pub const fn to_i(self) -> i128 { match self { #(#to_arms,)* #unlisted_to } }
                #open_fns
                #[doc = " The value stored as `v`, or `None` when `v` is not in the enum."]
                #[inline]
                pub const fn from_i(v: i128) -> Option<Self> { match v { #(#from_arms,)* _ => None } }
                #[doc = " The value's name in the schema."]
                pub const fn name(self) -> &'static str { match self { #(#name_arms,)* #unlisted_name } }
            }
            impl ::core::fmt::Display for #name {
                #[doc = " The schema name and the stored integer, e.g. `absolute (4)`."]
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    write!(f, "{} ({})", self.name(), self.to_i())
                }
            }
        }
    }

    fn switch_enum_name(t: &TypeDef, f: &Field) -> proc_macro2::Ident {
        format_ident!("{}{}", camel(&t.name), camel(&f.id))
    }

    /// Switch variants: (variant ident, type name, case keys).
    fn switch_variants(&self, f: &Field) -> Vec<(proc_macro2::Ident, String, Vec<SrcExpr>)> {
        let FieldKind::Switch { cases, default, .. } = &f.kind else {
            return Vec::new();
        };
        let mut out: Vec<(proc_macro2::Ident, String, Vec<SrcExpr>)> = Vec::new();
        for (k, tn) in cases {
            match out.iter_mut().find(|(_, n, _)| n == tn) {
                Some(v) => v.2.push(k.clone()),
                None => out.push((type_ident(tn), tn.clone(), vec![k.clone()])),
            }
        }
        if let Some(d) = default {
            if !out.iter().any(|(_, n, _)| n == d) {
                out.push((type_ident(d), d.clone(), Vec::new()));
            }
        }
        out
    }

    /// Rust type of one element (before repeat/if).
    fn elem_rust_ty(&self, t: &TypeDef, f: &Field) -> TokenStream {
        match &f.kind {
            FieldKind::Int {
                enum_name: Some(e), ..
            } => {
                let i = type_ident(e);
                quote!(#i)
            }
            FieldKind::Int { bytes, signed, .. } => int_ty(*bytes, *signed),
            FieldKind::Bits {
                enum_name: Some(e), ..
            } => {
                let i = type_ident(e);
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
            FieldKind::User { name, .. } => {
                let i = type_ident(name);
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

    fn emit_type(&mut self, t: &TypeDef, is_root: bool) -> Option<TokenStream> {
        self.cur_instances = t.instances.clone();
        *self.cur_type.borrow_mut() = t.name.clone();
        let derived = self.derived(t);
        let name = type_ident(&t.name);
        let min_len = lit_usize(*self.min_len.get(&t.name).unwrap_or(&0));
        let mut p = TypeParts::new();
        self.type_params(t, &derived, &mut p)?;
        for f in &t.fields {
            self.emit_field(t, f, &derived, &mut p)?;
        }
        let has_bits = t
            .fields
            .iter()
            .any(|f| f.at.is_none() && crate::bits::is_bit_field(f));
        let TypeParts {
            mut struct_fields,
            mut reads,
            post_read_checks,
            write_pre,
            mut writes,
            mut lens,
            mut exact,
            mut ctor,
            extra_items,
            param_args,
            param_tys,
            unaligned,
            phase,
            pos_writes,
            read_runs,
            write_runs,
            ..
        } = p;

        if self.unread_types.contains(&t.name) {
            struct_fields.push(quote! {
                #[doc = " Bytes at the end of the sized field holding this value that its fields did not"]
                #[doc = " read (Kaitai Struct skips them). Written back after the fields; empty when the"]
                #[doc = " value filled its size or is not in a sized field."]
                #[serde(default, skip_serializing_if = "Vec::is_empty", with = "::statepack_runtime::bytes_json")]
                pub __unread: ::std::vec::Vec<u8>
            });
            struct_fields.push(quote! {
                #[doc = " The bits after this value's last bit field, up to the end of that byte, when the"]
                #[doc = " value ends inside a byte of its sized field; written back."]
                #[serde(default)]
                pub __unread_pad: u8
            });
            ctor.push(quote!(__unread: ::std::vec::Vec::new()));
            ctor.push(quote!(__unread_pad: 0));
            writes.push(quote!(__w.align_to_byte_with(self.__unread_pad);));
            writes.push(quote!(__w.write_bytes(&self.__unread);));
            lens.push(quote!(self.__unread.len()));
            exact.aligned_bytes(quote!(self.__unread.len()));
        }
        // Under Kaitai's rules a type may end inside a byte: the enclosing type goes on from
        // that bit (a bit field) or from the next byte (anything else), as Kaitai Struct's
        // generated code does.
        if is_root && unaligned && phase != Some(0) && !self.s.strict {
            // The root type ends inside a byte: the bits after its last field are kept.
            reads.push(quote!(let __end_pad: u8 = __r.align_to_byte_keep();));
            writes.push(quote!(__w.align_to_byte_with(self.__end_pad);));
            struct_fields.push(quote! {
                #[doc = " The bits after the last bit field, up to the end of its byte, as read; written back."]
                #[serde(default)]
                pub __end_pad: u8
            });
            ctor.push(quote!(__end_pad));
        }
        if unaligned && phase != Some(0) && self.s.strict {
            let kp = if t.key_path.is_empty() {
                "seq".to_owned()
            } else {
                format!("{}.seq", t.key_path)
            };
            let last = t.fields.last().map_or(t.pos, |f| f.pos);
            self.err(
                last,
                &kp,
                format!(
                    "type `{}` may end inside a byte (its bit fields do not add up to whole bytes)",
                    t.name
                ),
                crate::bits::unaligned_end_hint(),
            );
        }
        // A plain type (no params, instances, positions or computed byte order) whose fixed
        // runs fail reads itself again from its first byte, field by field, in an
        // out-of-line function: the fused reader then holds no field-by-field code.
        let whole_fallback = self.plain_reader(t);
        let slow_reads = whole_fallback.then(|| reads.clone());
        // The same reader appending the value to a list (`read_push`): the value is stored
        // straight into the list instead of travelling in a `Result`.
        let mut push_reads = reads.clone();
        let fallback = quote! {
            __r.reset_to(__mark);
            return Self::read_fields(__r);
        };
        let push_fallback = quote! {
            __r.reset_to(__mark);
            __out.push(Self::read_fields(__r)?);
            return Ok(());
        };
        let fused = runs::fuse_reads(
            &mut reads,
            &read_runs,
            slow_reads.as_ref().map(|_| &fallback),
        );
        if whole_fallback {
            runs::fuse_reads(&mut push_reads, &read_runs, Some(&push_fallback));
        }
        let slow_reads = slow_reads.filter(|_| fused > 0);
        runs::fuse_writes(&mut writes, &write_runs);
        writes.extend(pos_writes);
        if let Some((read, member, item)) = positional::io_end_member(t, self.member_io) {
            reads.push(read);
            struct_fields.push(member);
            ctor.push(item);
        }
        if is_root && self.has_positional() {
            // The bytes after the seq up to the furthest positional instance belong to the
            // root: kept and written back under the instances, which the root lays out last.
            reads.push(
                quote!(let __beyond: ::std::vec::Vec<u8> = __r.take_positional_tail().to_vec();),
            );
            struct_fields.push(quote! {
                #[doc = " The bytes after the last `seq` field up to the furthest byte a positional instance"]
                #[doc = " read, as read: written back under the positional instances (which must agree with"]
                #[doc = " every byte written in sequence and with each other)."]
                #[serde(default, skip_serializing_if = "Vec::is_empty", with = "::statepack_runtime::bytes_json")]
                pub __beyond: ::std::vec::Vec<u8>
            });
            ctor.push(quote!(__beyond));
            writes.push(quote!(__w.lay_out_positional(&self.__beyond)?;));
            exact.fallback("positional instances are laid out by the root's writer");
        }
        // A type with bit fields counts its bits (see `exact_len`); kept bytes and encoded
        // strings are measured by writing.
        let (len_doc, len_body) = if t.fields.iter().any(|f| {
            hidden_prefix(f).is_some()
                || matches!(f.kind, FieldKind::Str { encoding, .. } if !plain_encoding(encoding))
        }) {
            exact_len::fallback_body("kept terminator or processed bytes, or a string in an encoding other than UTF-8 and ASCII")
        } else if has_bits {
            exact.body()
        } else {
            (quote!(), quote!(0 #(+ #lens)*))
        };
        let doc = self.doc_for(
            t.doc.as_deref(),
            t.pos,
            if is_root {
                "The root type of the schema."
            } else {
                ""
            },
        );
        self.cur_field.replace(None);
        let (inst_methods, inst_members) = self.emit_instances(t, &derived)?;
        let reflect = reflect::type_impls(t, &derived, &inst_members);
        let interop = binrw::impls(
            &self.opts,
            &binrw::TypeShape {
                name: &name,
                params: param_tys,
                has_bits,
                bits_first: t.fields.first().is_some_and(crate::bits::is_bit_field),
                aligned_end: is_root || !unaligned || phase == Some(0),
            },
        );
        let root_api = Self::root_api(t, &name, is_root);
        let (read_inline, read_body, read_fields) = Self::reader_bodies(
            slow_reads.as_deref(),
            (&reads, &push_reads, &post_read_checks, &ctor),
            whole_fallback,
        );
        let derive_default = self.default_derive();
        Some(quote! {
            #doc
            #[derive(Debug, Clone, #derive_default PartialEq, serde::Serialize, serde::Deserialize)]
            pub struct #name { #(#struct_fields,)* }

            impl #name {
                #[doc = " The smallest number of bytes this type can take; list counts are checked against it before anything is allocated."]
                pub const MIN_LEN: usize = #min_len;

                #[doc = " Reads one value at the reader's position."]
                #[doc = ""]
                #[doc = " Errors: [`DecodeError`](::statepack_runtime::io::DecodeError) with the field path (relative to this type) and the absolute byte offset."]
                #[allow(unused_variables, clippy::let_unit_value, clippy::redundant_locals)]
                #read_inline
                pub fn read_from<T: ::statepack_runtime::io::Tracer>(__r: &mut ::statepack_runtime::io::ByteReader<'_, T> #(, #param_args)*) -> Result<Self, ::statepack_runtime::io::DecodeError> {
                    #read_body
                }
                #read_fields

                #[doc = " Writes this value; counts, lengths and sums are derived from the data."]
                #[doc = ""]
                #[doc = " Errors: [`EncodeError`](::statepack_runtime::io::EncodeError) naming the field, never a wrapped value."]
                #[allow(unused_variables, clippy::redundant_closure_call, clippy::needless_borrow, clippy::let_unit_value)]
                pub fn write_to(&self, __w: &mut ::statepack_runtime::io::ByteWriter) -> Result<(), ::statepack_runtime::io::EncodeError> {
                    #(#write_pre)*
                    #(#writes)*
                    Ok(())
                }

                #[doc = " The number of bytes [`Self::write_to`] writes."]
                #len_doc
                #[allow(unused_variables, clippy::identity_op)]
                pub fn encoded_len(&self) -> usize {
                    #len_body
                }

                #(#inst_methods)*
            }
            #root_api
            #reflect
            #interop
            #(#extra_items)*
        })
    }

    /// For the root type: `decode`, `decode_traced` and `encode`, and its `RootType` impl when it
    /// takes no `params` (nothing for another type).
    fn root_api(t: &TypeDef, name: &proc_macro2::Ident, is_root: bool) -> TokenStream {
        let root_params: Vec<TokenStream> = t
            .params
            .iter()
            .filter(|p| p.context.is_none())
            .map(|p| {
                let id = field_ident(&p.id);
                let (rty, _) = param_rust_ty(&p.kind);
                if p.optional {
                    quote!(#id: ::std::option::Option<#rty>)
                } else {
                    quote!(#id: #rty)
                }
            })
            .collect();
        let top_args: Vec<TokenStream> = t
            .params
            .iter()
            .map(|p| {
                if p.context.is_some() {
                    quote!(::std::option::Option::None)
                } else {
                    let id = field_ident(&p.id);
                    quote!(#id)
                }
            })
            .collect();
        let params_doc = if root_params.is_empty() {
            quote!()
        } else {
            quote!(#[doc = ""] #[doc = " The root type's `params` are the arguments after `bytes`, in schema order."])
        };
        let root_trait = if root_params.is_empty() {
            root_type::root_type_impl(&name, top_args.len())
        } else {
            quote!()
        };
        let root_api = if is_root {
            quote! {
                impl #name {
                    #[doc = " Decodes a whole file: the data must end exactly where the root type ends."]
                    #[doc = ""]
                    #[doc = " Errors: any [`DecodeError`](::statepack_runtime::io::DecodeError), naming the field path and byte offset."]
                    #params_doc
                    pub fn decode(bytes: &[u8] #(, #root_params)*) -> Result<Self, ::statepack_runtime::io::DecodeError> {
                        let mut r = ::statepack_runtime::io::ByteReader::new(bytes);
                        let v = Self::read_from(&mut r #(, #top_args)*)?;
                        r.finish()?;
                        Ok(v)
                    }
                    #[doc = " Decodes a whole file while recording its structure (every field's byte range and value)."]
                    #[doc = " The tree is returned even when decoding fails, up to the failing field."]
                    pub fn decode_traced(bytes: &[u8] #(, #root_params)*) -> (Result<Self, ::statepack_runtime::io::DecodeError>, ::statepack_runtime::io::TraceNode) {
                        let mut r = ::statepack_runtime::io::ByteReader::with_tracer(bytes, ::statepack_runtime::io::TreeTracer::new(SCHEMA_ID));
                        let v = Self::read_from(&mut r #(, #top_args)*).and_then(|v| { r.finish()?; Ok(v) });
                        let end = r.offset();
                        (v, r.tracer.finish(end))
                    }
                    #[doc = " Encodes to a new byte vector; counts, lengths and sums are derived from the data."]
                    #[doc = ""]
                    #[doc = " Errors: [`EncodeError`](::statepack_runtime::io::EncodeError) when a value does not fit its stored type or breaks a schema rule."]
                    pub fn encode(&self) -> Result<::std::vec::Vec<u8>, ::statepack_runtime::io::EncodeError> {
                        let mut w = ::statepack_runtime::io::ByteWriter::with_capacity(self.encoded_len());
                        self.write_to(&mut w)?;
                        Ok(w.into_bytes())
                    }
                }
                #root_trait
            }
        } else {
            quote!()
        };
        root_api
    }

    /// The body of `read_from` and the items beside it: with the statements of a fast reader
    /// whose fixed runs fall back to reading field by field (`slow_reads`), an inlined
    /// `read_from`, `read_push` and the out-of-line `read_fields`; else the plain reader and,
    /// for a `whole_fallback` type, `read_push`. `parts`: the reader's statements, those of
    /// `read_push`, the checks after the fields and the constructor's entries.
    #[allow(clippy::type_complexity)]
    fn reader_bodies(
        slow_reads: Option<&[TokenStream]>,
        parts: (
            &[TokenStream],
            &[TokenStream],
            &[TokenStream],
            &[TokenStream],
        ),
        whole_fallback: bool,
    ) -> (TokenStream, TokenStream, TokenStream) {
        let (reads, push_reads, post_read_checks, ctor) = parts;
        // The fast reader is small and called from the enclosing reader and its fallback:
        // inlining it keeps an element read inside its list loop (a call per element
        // returns it through memory; measured 2x slower in the SNAP decode bench).
        let read_inline = if slow_reads.is_some() {
            quote!(#[inline(always)])
        } else {
            quote!()
        };
        let (read_body, read_fields) = match slow_reads {
            Some(slow) => (
                quote! {
                    if !T::SILENT {
                        return Self::read_fields(__r);
                    }
                    let __mark = __r.mark();
                    #(#reads)*
                    #(#post_read_checks)*
                    Ok(Self { #(#ctor,)* })
                },
                quote! {
                    #[doc = " Reads one value (as [`Self::read_from`]) and appends it to `__out`."]
                    #[doc = ""]
                    #[doc = " Errors: as [`Self::read_from`]; nothing is appended then."]
                    #[inline(always)]
                    #[allow(unused_variables, clippy::let_unit_value, clippy::redundant_locals)]
                    pub fn read_push<T: ::statepack_runtime::io::Tracer>(__r: &mut ::statepack_runtime::io::ByteReader<'_, T>, __out: &mut ::std::vec::Vec<Self>) -> Result<(), ::statepack_runtime::io::DecodeError> {
                        if !T::SILENT {
                            __out.push(Self::read_fields(__r)?);
                            return Ok(());
                        }
                        let __mark = __r.mark();
                        #(#push_reads)*
                        #(#post_read_checks)*
                        __out.push(Self { #(#ctor,)* });
                        Ok(())
                    }
                    #[doc = " Reads one value field by field (the tracer's path, and the fallback of [`Self::read_from`] when a fixed run fails): every error names its field and offset."]
                    #[cold]
                    #[inline(never)]
                    #[allow(unused_variables, clippy::let_unit_value, clippy::redundant_locals)]
                    fn read_fields<T: ::statepack_runtime::io::Tracer>(__r: &mut ::statepack_runtime::io::ByteReader<'_, T>) -> Result<Self, ::statepack_runtime::io::DecodeError> {
                        #(#slow)*
                        #(#post_read_checks)*
                        Ok(Self { #(#ctor,)* })
                    }
                },
            ),
            None => (
                quote! {
                    #(#reads)*
                    #(#post_read_checks)*
                    Ok(Self { #(#ctor,)* })
                },
                if whole_fallback {
                    quote! {
                        #[doc = " Reads one value (as [`Self::read_from`]) and appends it to `__out`."]
                        #[doc = ""]
                        #[doc = " Errors: as [`Self::read_from`]; nothing is appended then."]
                        #[inline]
                        pub fn read_push<T: ::statepack_runtime::io::Tracer>(__r: &mut ::statepack_runtime::io::ByteReader<'_, T>, __out: &mut ::std::vec::Vec<Self>) -> Result<(), ::statepack_runtime::io::DecodeError> {
                            __out.push(Self::read_from(__r)?);
                            Ok(())
                        }
                    }
                } else {
                    quote!()
                },
            ),
        };
        (read_inline, read_body, read_fields)
    }

    /// The params of `t` (members, reader arguments, scope entries), its `meta.endian` switch
    /// and the values its writer derives (computed before anything is written).
    fn type_params(
        &mut self,
        t: &TypeDef,
        derived: &HashMap<String, Derived>,
        p: &mut TypeParts,
    ) -> Option<()> {
        let TypeParts {
            struct_fields,
            reads,
            write_pre,
            ctor,
            rscope,
            wscope,
            param_args,
            param_tys,
            ..
        } = p;
        // A root type with `params` (a schema for others to import, as in Kaitai) takes them
        // in `decode`; its context params (a recursive root's `_parent`/`_root` paths) are
        // `None` at the top.
        for p in &t.params {
            // A param is a member like a field or an instance: one name, one member.
            let clash = t
                .fields
                .iter()
                .map(|f| (f.id.as_str(), f.pos, "field"))
                .chain(
                    t.instances
                        .iter()
                        .map(|i| (i.id.as_str(), i.pos, "instance")),
                )
                .find(|(n, _, _)| *n == p.id);
            if let Some((n, pos, what)) = clash {
                self.err(
                    pos,
                    &t.key_path,
                    format!("{what} `{n}` has the name of a param (a duplicate)"),
                    "rename the param or the member",
                );
            }
            let id = field_ident(&p.id);
            let (rty, ty) = param_rust_ty(&p.kind);
            let (rty, ty) = if p.optional {
                (quote!(::std::option::Option<#rty>), Ty::Opt(Box::new(ty)))
            } else {
                (rty, ty)
            };
            let pdoc = if p.context.is_some() {
                self.doc_for(p.doc.as_deref(), p.pos, "")
            } else {
                self.doc_for(p.doc.as_deref(), p.pos, &format!("Parameter `{}`: given by the field that reads this type, not stored in the data.", p.id))
            };
            let pn = &p.id;
            struct_fields.push(quote! { #pdoc #[serde(rename = #pn)] pub #id: #rty });
            ctor.push(quote!(#id));
            param_args.push(quote!(#id: #rty));
            param_tys.push(rty.clone());
            rscope.vars.push((p.id.clone(), ty.clone()));
            write_pre.push(match ty {
                Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => quote!(let #id = self.#id;),
                _ => quote!(let #id = &self.#id;),
            });
            wscope.vars.push((p.id.clone(), ty));
        }
        // `meta.endian` as a switch: the byte order is decided before anything is read.
        if let Some(sw) = &t.endian_switch {
            let (r, w) = self.endian_decide(sw, &rscope, &wscope)?;
            reads.push(r);
            write_pre.push(w);
            for sc in [&mut *rscope, &mut *wscope] {
                sc.vars.push((crate::endian::IS_LE.to_owned(), Ty::Bool));
            }
        }

        // On write every derived value is computed first, so expressions anywhere may use it.
        for f in &t.fields {
            if let Some(d) = derived.get(&f.id) {
                let FieldKind::Int { bytes, signed, .. } = &f.kind else {
                    continue;
                };
                let id = field_ident(&f.id);
                let rty = int_ty(*bytes, *signed);
                let tyname = int_ty_name(*bytes, *signed);
                let fid = &f.id;
                let value = match d {
                    Derived::Count(list) => {
                        let l = field_ident(list);
                        quote!((self.#l.len() as i128))
                    }
                    Derived::Bytes(target) => {
                        let g = t.fields.iter().find(|g| &g.id == target)?;
                        let l = field_ident(target);
                        match &g.kind {
                            FieldKind::User { .. } | FieldKind::Switch { .. } => {
                                quote!((self.#l.encoded_len() as i128))
                            }
                            _ => quote!((self.#l.len() as i128)),
                        }
                    }
                    Derived::Sum(list, field) => {
                        let l = field_ident(list);
                        let fi = field_ident(field);
                        quote!(self.#l.iter().map(|__e| __e.#fi as i128).sum::<i128>())
                    }
                };
                write_pre.push(quote! {
                    let #id: #rty = ::statepack_runtime::io::fit(#value, #tyname).map_err(|e| e.in_field(#fid))?;
                });
                wscope.vars.push((f.id.clone(), Ty::Int));
            }
        }
        Some(())
    }

    /// One field of `t`: its member, its read, its write and its length.
    fn emit_field(
        &mut self,
        t: &TypeDef,
        f: &Field,
        derived: &HashMap<String, Derived>,
        p: &mut TypeParts,
    ) -> Option<()> {
        self.cur_field.replace(Some(f.id.clone()));
        self.field_align(f, p);
        let fc = self.field_cx(t, f, derived);
        self.field_member(t, f, &fc, p);
        let r = self.field_read(t, f, derived, &fc, p)?;
        if self.field_write(t, f, derived, &fc, r, p)? {
            self.field_len(f, &fc, p);
        }
        Some(())
    }

    /// Kaitai's alignment rule before field `f`: after a bit field, a field that is not one
    /// starts on the next byte (its padding bits kept under Kaitai's rules, zero under strict
    /// ones); tracks the `seq`'s bit phase.
    fn field_align(&mut self, f: &Field, p: &mut TypeParts) {
        let TypeParts {
            struct_fields,
            reads,
            writes,
            ctor,
            unaligned,
            phase,
            ..
        } = p;
        let fid = f.id.as_str();
        let bit_field = crate::bits::is_bit_field(f);
        if f.at.is_some() {
            // Read at a position of its stream: the sequence's bit state is untouched.
        } else if *unaligned && !bit_field && !f.strict {
            // Kaitai's rules: the padding bits may be anything; they are kept and put
            // back on write.
            let pad = temp_for("pad", &f.id);
            reads.push(quote!(let #pad: u8 = __r.align_to_byte_keep();));
            writes.push(quote!(__w.align_to_byte_with(self.#pad);));
            let d = format!(
                " The padding bits before `{}` (after bit fields), as read; written back.",
                f.id
            );
            struct_fields.push(quote! {
                #[doc = #d]
                #[serde(default)]
                pub #pad: u8
            });
            ctor.push(quote!(#pad));
        } else if *unaligned && !bit_field {
            reads.push(quote!(__r.align_to_byte().map_err(|e| e.in_field(#fid))?;));
            writes.push(quote!(__w.align_to_byte();));
        }
        if f.at.is_none() {
            *unaligned = bit_field;
            *phase = crate::bits::phase_after(*phase, f);
        }
    }

    /// The values the member, read, write and length code of field `f` share.
    fn field_cx(&self, t: &TypeDef, f: &Field, derived: &HashMap<String, Derived>) -> FieldCx {
        let id = field_ident(&f.id);
        let fid = f.id.clone();
        let kp = f.key_path.clone();
        let is_derived = derived.contains_key(&f.id);
        let at = temp_for("at", &f.id);
        let elem_ty = self.elem_rust_ty(t, f);
        let arr = Self::array_len(f);
        let full_ty = match (&f.repeat, arr) {
            _ if f.varint => quote!(u64),
            (Repeat::None, _) => elem_ty.clone(),
            (_, Some(n)) => {
                let n = lit_usize(n);
                quote!([#elem_ty; #n])
            }
            _ => quote!(::std::vec::Vec<#elem_ty>),
        };
        let field_ty = if f.cond.is_some() {
            quote!(::std::option::Option<#full_ty>)
        } else {
            full_ty.clone()
        };
        let is_contents = matches!(f.kind, FieldKind::Contents(_));
        let is_leaf = matches!(
            f.kind,
            FieldKind::Int { .. }
                | FieldKind::Bits { .. }
                | FieldKind::Float { .. }
                | FieldKind::Str { .. }
                | FieldKind::Bytes(_)
        );

        FieldCx {
            id,
            fid,
            kp,
            is_derived,
            at,
            elem_ty,
            arr,
            full_ty,
            field_ty,
            is_contents,
            is_leaf,
        }
    }

    /// The struct member of field `f` (none for a derived or `contents` field), with its
    /// kept bytes (terminator, padding, stored processed bytes) and, for a switch, its enum.
    fn field_member(&mut self, t: &TypeDef, f: &Field, fc: &FieldCx, p: &mut TypeParts) {
        let TypeParts {
            struct_fields,
            ctor,
            extra_items,
            ..
        } = p;
        let FieldCx {
            ref id,
            is_derived,
            ref field_ty,
            is_contents,
            ..
        } = *fc;
        if let FieldKind::Switch { .. } = &f.kind {
            extra_items.push(self.emit_switch_enum(t, f));
        }

        // --- struct member
        if !is_derived && !is_contents {
            let mut extra = String::new();
            if let Some(u) = &f.units {
                extra.push_str(&format!("Unit: {u}."));
            }
            if let Some(c) = &f.cond {
                extra.push_str(&format!(
                    "{}Present only when `{}`.",
                    if extra.is_empty() { "" } else { " " },
                    c.src
                ));
            }
            let doc = self.doc_for(f.doc.as_deref(), f.pos, &extra);
            let ser = if f.id.as_str() != id.to_string().trim_start_matches("r#") {
                let n = &f.id;
                quote!(#[serde(rename = #n)])
            } else {
                quote!()
            };
            // JSON numbers cannot hold NaN or infinities: floats use the runtime's
            // lossless form so that decode -> JSON -> encode keeps every bit.
            // Byte fields are hex strings in JSON (`bytes_json`), not one number per byte.
            let float_json = match f.kind {
                FieldKind::Float { .. } => {
                    quote!(#[serde(with = "::statepack_runtime::io::float_json")])
                }
                FieldKind::Bytes(_) => {
                    quote!(#[serde(with = "::statepack_runtime::bytes_json")])
                }
                _ => quote!(),
            };
            struct_fields.push(quote! { #doc #ser #float_json pub #id: #field_ty });
            ctor.push(quote!(#id));
            if let Some(prefix) = hidden_prefix(f) {
                let tail = temp_for(prefix, &f.id);
                if matches!(f.repeat, Repeat::None) {
                    let d = if prefix == "tail" {
                        format!(" The bytes `{}` took beyond its value when read (terminator, bytes after it, padding), written back as they were; `None` writes the terminator and padding the schema gives.", f.id)
                    } else {
                        format!(" The stored (processed) bytes of `{}` as read, written back while they still give the value; `None` (or bytes that no longer match) processes the value anew.", f.id)
                    };
                    struct_fields.push(quote! {
                        #[doc = #d]
                        #[serde(default, skip_serializing_if = "Option::is_none", with = "::statepack_runtime::bytes_json")]
                        pub #tail: ::std::option::Option<::std::vec::Vec<u8>>
                    });
                } else {
                    let d = format!(" For each element of `{}`, the bytes kept from reading (beyond the value, or as stored before `process`), written back as they were; an element without an entry is written from its value.", f.id);
                    struct_fields.push(quote! {
                        #[doc = #d]
                        #[serde(default, skip_serializing_if = "Vec::is_empty", with = "::statepack_runtime::bytes_json")]
                        pub #tail: ::std::vec::Vec<::std::vec::Vec<u8>>
                    });
                }
                ctor.push(quote!(#tail));
            }
        }
    }

    /// The reader's statement of field `f` (its condition, count, checks, trace and position),
    /// its entry in the fixed runs, and its `-sp-sum-of` check.
    fn field_read(
        &mut self,
        t: &TypeDef,
        f: &Field,
        derived: &HashMap<String, Derived>,
        fc: &FieldCx,
        p: &mut TypeParts,
    ) -> Option<ReadOut> {
        let TypeParts {
            struct_fields,
            reads,
            post_read_checks,
            write_pre,
            ctor,
            rscope,
            wscope,
            read_runs,
            ..
        } = p;
        let FieldCx {
            ref id,
            ref fid,
            ref kp,
            ref at,
            ref elem_ty,
            ref full_ty,
            ref field_ty,
            is_contents,
            is_leaf,
            ..
        } = *fc;
        // --- read
        let cond_r = match &f.cond {
            Some(c) => Some(self.expect_ty(c, &rscope, &format!("{kp}.if"), Ty::Bool)?),
            None => None,
        };
        let cond_w = match &f.cond {
            // `_io.eof` / `_io.size` are not known while writing: presence decides.
            Some(c) if crate::instances::uses_io_end(&c.expr) => Some(quote!(self.#id.is_some())),
            Some(c) => Some(self.expect_ty(c, &wscope, &format!("{kp}.if"), Ty::Bool)?),
            None => None,
        };
        let repeated = !matches!(f.repeat, Repeat::None) && !f.varint;
        if repeated {
            rscope.vars.push(("_index".into(), Ty::Int));
        }
        let elem_read = self.elem_read(t, f, &rscope, Side::Read);
        if repeated {
            rscope.vars.pop();
        }
        let elem_read = elem_read?;
        // A recursive type is read one level deeper, within the reader's bound.
        let elem_read = if f.recursive.is_empty() {
            elem_read
        } else {
            quote!(__r.enter_recursion().and_then(|()| { let __v = #elem_read; __r.leave_recursion(); __v }))
        };
        let wrap_field = quote!(.map_err(|e| e.in_field(#fid))?);
        let wrap_idx = quote!(.map_err(|e| e.in_index(__i).in_field(#fid))?);
        let valid_r = match &f.valid {
            Some(v) => Some(self.valid_check(v, f, &rscope, Side::Read)?),
            None => None,
        };
        let rule_id = temp_for("rule", &f.id);
        let rule_const = f.valid.as_ref().map(|v| {
            let d = v.describe();
            quote!(let #rule_id: &'static str = #d;)
        });
        let leave = trace_leave(f, is_leaf);
        let idx = if matches!(f.repeat, Repeat::None) {
            quote!()
        } else {
            quote!(.in_index(__i))
        };
        let one_read = |wrap: &TokenStream| -> TokenStream {
            let check = valid_r.clone().map(|c| quote! {
                {
                    let __v = &__v;
                    if !(#c) {
                        return Err(::statepack_runtime::io::DecodeError::new(__el_at, ::statepack_runtime::io::DecodeErrorKind::NotValid { value: format!("{:?}", __v), rule: #rule_id }) #idx .in_field(#fid));
                    }
                }
            }).unwrap_or_default();
            let el_at = if valid_r.is_some() {
                quote!(let __el_at = __r.offset();)
            } else {
                quote!()
            };
            quote! {{
                #el_at
                let __v: #elem_ty = { #elem_read } #wrap;
                #check
                #leave
                __v
            }}
        };
        let read_value = match &f.repeat {
            _ if f.varint => bits::varint_read(f, fid),
            Repeat::None => one_read(&wrap_field),
            _ => self.list_read(
                f,
                fc,
                rscope,
                &one_read,
                (&wrap_field, &wrap_idx),
                valid_r.is_some(),
            )?,
        };
        let rep_leave = if matches!(f.repeat, Repeat::None) || f.varint {
            quote!()
        } else {
            quote!(__r.leave::<()>(None);)
        };
        let read_value = if matches!(f.repeat, Repeat::None) || f.varint {
            read_value
        } else {
            quote! {{ let __l = #read_value; #rep_leave __l }}
        };
        let (read_value, kept_pos) = match &f.at {
            Some(at) => {
                let (rv, kept) = positional::emit_read(self, f, at, &rscope, read_value)?;
                (rv, kept)
            }
            None => (read_value, None),
        };
        if let Some((decl, member, ctor_item)) = kept_pos {
            reads.push(decl);
            struct_fields.push(member);
            ctor.push(ctor_item);
        }
        let tail_decl = match (hidden_prefix(f), matches!(f.repeat, Repeat::None)) {
            (None, _) => quote!(),
            (Some(prefix), true) => {
                let tail = temp_for(prefix, &f.id);
                quote!(let mut #tail: ::std::option::Option<::std::vec::Vec<u8>> = ::std::option::Option::None;)
            }
            (Some(prefix), false) => {
                let tail = temp_for(prefix, &f.id);
                quote!(let mut #tail: ::std::vec::Vec<::std::vec::Vec<u8>> = ::std::vec::Vec::new();)
            }
        };
        // A positional instance (not `io: value._io`) is entered at its position, inside
        // `instances::emit_read`, so its trace node starts where its bytes do.
        let enter = if f.at.as_ref().is_some_and(|a| a.io_of.is_none()) {
            quote!()
        } else {
            quote!(__r.enter(::statepack_runtime::io::PathSeg::Field(#fid));)
        };
        let read_stmt = match &cond_r {
            Some(c) => quote! {
                let #id: #field_ty = if #c { #enter Some(#read_value) } else { None };
            },
            None => quote! {
                #enter
                let #id: #field_ty = #read_value;
            },
        };
        // The field's start offset is kept only where an error after the read needs it.
        let keep_at = matches!(derived.get(&f.id), Some(Derived::Sum(..)));
        let at_stmt = if keep_at {
            quote!(let #at = __r.offset();)
        } else {
            quote!()
        };
        reads.push(quote! {
            #at_stmt
            #rule_const
            #tail_decl
            #read_stmt
        });
        let run_unit = self
            .run_unit(f)
            .filter(|_| !(is_contents && f.cond.is_some()));
        if let Some(unit) = run_unit.clone().filter(|_| !(keep_at && f.cond.is_some())) {
            read_runs.push(runs::Member {
                stmt: reads.len() - 1,
                id: id.clone(),
                ty: full_ty.clone(),
                at: keep_at.then(|| at.clone()),
                src: quote!(),
                unit,
                cond: cond_r.clone(),
            });
        }
        if let Some(Derived::Sum(list, field)) = derived.get(&f.id) {
            let l = field_ident(list);
            let fi = field_ident(field);
            let msg = format!("{{}} stored, but the {list}[].{field} values sum to {{}}");
            // Unsigned elements of at most 16 bits are summed in u64: a list would need
            // more than 2^48 elements (more than the address space holds) to overflow it.
            // Wider or signed elements keep i128. The value printed is the same.
            let narrow = t
                .fields
                .iter()
                .find(|g| &g.id == list)
                .and_then(|g| match &g.kind {
                    FieldKind::User { name, .. } => self.s.type_def(name),
                    _ => None,
                })
                .and_then(|et| et.fields.iter().find(|x| &x.id == field))
                .is_some_and(|x| {
                    matches!(
                        x.kind,
                        FieldKind::Int {
                            bytes: 1 | 2,
                            signed: false,
                            ..
                        }
                    )
                });
            let (acc, sum_wide) = if narrow {
                (quote!(u64), quote!((__sum as i128)))
            } else {
                (quote!(i128), quote!(__sum))
            };
            post_read_checks.push(quote! {
                let __sum: #acc = #l.iter().map(|__e| __e.#fi as #acc).sum();
                if #sum_wide != #id as i128 {
                    return Err(::statepack_runtime::io::DecodeError::new(#at, ::statepack_runtime::io::DecodeErrorKind::Semantic(format!(#msg, #id, __sum))).in_field(#fid));
                }
            });
        }
        rscope.vars.push((f.id.clone(), self.field_ty(f)));
        // Fixed contents named by an expression (`if: magic.size == 4`) are their bytes,
        // on read and on write.
        if let FieldKind::Contents(c) = &f.kind {
            if f.cond.is_none()
                && matches!(f.repeat, Repeat::None)
                && crate::instances::type_names(t).contains(&f.id)
            {
                let b = Literal::byte_string(c);
                reads.push(quote!(let #id: ::std::vec::Vec<u8> = ::std::vec::Vec::from(#b);));
                write_pre.push(quote!(let #id: &::std::vec::Vec<u8> = &::std::vec::Vec::from(#b);));
                wscope.vars.push((f.id.clone(), Ty::Bytes));
            }
        }

        Some(ReadOut {
            cond_w,
            repeated,
            rule_const,
            rule_id,
            run_unit,
        })
    }

    /// The reader of list field `f` (`repeat: expr`, `eos` or `until`): a fixed array, a list
    /// read in place with its element type's `read_push`, or elements read by `one_read`
    /// (given the error wrapping of a field and of an element, `wraps`). `has_valid`: the
    /// elements are checked against a `valid` rule.
    fn list_read(
        &mut self,
        f: &Field,
        fc: &FieldCx,
        rscope: &Scope,
        one_read: &dyn Fn(&TokenStream) -> TokenStream,
        wraps: (&TokenStream, &TokenStream),
        has_valid: bool,
    ) -> Option<TokenStream> {
        let (wrap_field, wrap_idx) = wraps;
        let FieldCx {
            ref fid,
            ref kp,
            ref elem_ty,
            arr,
            ..
        } = *fc;
        Some(match &f.repeat {
            Repeat::Expr(e) => {
                let count = self.expect_ty(e, &rscope, &format!("{kp}.repeat-expr"), Ty::Int)?;
                let body = one_read(&wrap_idx);
                let min = self.elem_min_len(f);
                let check = match &f.kind {
                    FieldKind::Bits { width, .. } => {
                        let w = u32::from(*width);
                        quote!(__r.check_count_bits(#count, #w))
                    }
                    _ => quote!(__r.check_count(#count, #min)),
                };
                if let Some(n) = arr {
                    let n = lit_usize(n);
                    quote! {{
                        let mut __a: [#elem_ty; #n] = Default::default();
                        for (__i, __slot) in __a.iter_mut().enumerate() {
                            __r.enter(::statepack_runtime::io::PathSeg::Index(__i));
                            *__slot = #body;
                        }
                        __a
                    }}
                } else {
                    match self.in_place_elem(f, has_valid) {
                        Some(ti) => quote! {{
                            let __n = #check #wrap_field;
                            let mut __list = ::std::vec::Vec::with_capacity(__n);
                            // The list's length is the element index: one counter.
                            while __list.len() < __n {
                                let __i = __list.len();
                                __r.enter(::statepack_runtime::io::PathSeg::Index(__i));
                                #ti::read_push(__r, &mut __list) #wrap_idx;
                                __r.leave::<()>(None);
                            }
                            __list
                        }},
                        None => quote! {{
                            let __n = #check #wrap_field;
                            let mut __list = ::std::vec::Vec::with_capacity(__n);
                            // The list's length is the element index: one counter.
                            while __list.len() < __n {
                                let __i = __list.len();
                                __r.enter(::statepack_runtime::io::PathSeg::Index(__i));
                                __list.push(#body);
                            }
                            __list
                        }},
                    }
                }
            }
            Repeat::Eos | Repeat::Until(_) => {
                let body = one_read(&wrap_idx);
                let stop = match &f.repeat {
                    Repeat::Until(u) => {
                        let (ety, c) = self.until_cond(f, u, &rscope)?;
                        let bind = bind_elem(&ety, quote!((&__list[__list.len() - 1])));
                        quote! { { #bind if #c { break; } } }
                    }
                    _ => quote!(),
                };
                let head = match &f.repeat {
                    Repeat::Eos => quote!(while !__r.is_eof()),
                    _ => quote!(loop),
                };
                let open = self.open_list(f);
                // A plain user type without size, args or checks is read straight into
                // the list, as for a counted list.
                let push = match self.in_place_elem(f, has_valid) {
                    Some(ti) => quote! {
                        #ti::read_push(__r, &mut __list) #wrap_idx;
                        __r.leave::<()>(None);
                    },
                    None => quote!(__list.push(#body);),
                };
                quote! {{
                    let mut __list = #open;
                    #head {
                        let __i = __list.len();
                        let __before = __r.bit_offset();
                        __r.enter(::statepack_runtime::io::PathSeg::Index(__i));
                        #push
                        // An empty element that ends the list is fine; one that does
                        // not would repeat forever.
                        #stop
                        if __r.bit_offset() == __before {
                            return Err(::statepack_runtime::io::DecodeError::new(__r.offset(), ::statepack_runtime::io::DecodeErrorKind::Semantic("a repeated element took no bytes, so the list would never end".into())).in_index(__i).in_field(#fid));
                        }
                    }
                    __list
                }}
            }
            _ => unreachable!("a list field"),
        })
    }

    /// The writer's statement of field `f`; `false` for a positional instance (queued for its
    /// position, with no length term in the `seq`).
    fn field_write(
        &mut self,
        t: &TypeDef,
        f: &Field,
        derived: &HashMap<String, Derived>,
        fc: &FieldCx,
        r: ReadOut,
        p: &mut TypeParts,
    ) -> Option<bool> {
        let TypeParts {
            write_pre,
            writes,
            wscope,
            pos_writes,
            write_runs,
            ..
        } = p;
        let FieldCx {
            ref id,
            ref fid,
            ref kp,
            is_derived,
            arr,
            ref full_ty,
            is_contents,
            ..
        } = *fc;
        let ReadOut {
            cond_w,
            repeated,
            rule_const,
            rule_id,
            run_unit,
        } = r;
        // --- write
        let src = if is_derived {
            quote!(#id)
        } else {
            quote!(self.#id)
        };
        if !is_derived && !is_contents {
            let ty = self.field_ty(f);
            let bind = match (&ty, &f.kind) {
                (Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool, _) => {
                    quote!(let #id = self.#id;)
                }
                _ => quote!(let #id = &self.#id;),
            };
            write_pre.push(bind);
            wscope.vars.push((f.id.clone(), ty));
        }
        if repeated {
            wscope.vars.push(("_index".into(), Ty::Int));
        }
        let elem_write = self.elem_write(t, f, &wscope);
        if repeated {
            wscope.vars.pop();
        }
        let elem_write = elem_write?;
        let valid_w = match &f.valid {
            Some(v) => Some(self.valid_check(v, f, &wscope, Side::Write)?),
            None => None,
        };
        let wcheck = valid_w.map(|c| quote! {
            if !(#c) {
                return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::NotValid { value: format!("{:?}", __v), rule: #rule_id }));
            }
        }).unwrap_or_default();
        let one_write = quote! { #wcheck #elem_write; Ok(()) };
        let wrap_w_field =
            quote!(.map_err(|e: ::statepack_runtime::io::EncodeError| e.in_field(#fid))?);
        let wrap_w_idx = quote!(.map_err(|e: ::statepack_runtime::io::EncodeError| e.in_index(__i).in_field(#fid))?);
        let body_write = match &f.repeat {
            _ if f.varint => {
                let put = bits::varint_write(f);
                quote! {
                    (|| -> Result<(), ::statepack_runtime::io::EncodeError> { #put; Ok(()) })() #wrap_w_field;
                }
            }
            Repeat::None => quote! {
                let __v = __val;
                (|| -> Result<(), ::statepack_runtime::io::EncodeError> { #one_write })() #wrap_w_field;
            },
            rep => {
                let count_check = match rep {
                    Repeat::Expr(e)
                        if arr.is_none()
                            && !matches!(e.expr, Expr::Name(ref n) if derived.get(n).map(|d| matches!(d, Derived::Count(l) if l == &f.id)).unwrap_or(false)) =>
                    {
                        let c =
                            self.expect_ty(e, &wscope, &format!("{kp}.repeat-expr"), Ty::Int)?;
                        quote! {
                            if (__val.len() as i128) != #c {
                                return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::CountMismatch { expected: u64::try_from(#c).unwrap_or(u64::MAX), found: __val.len() }).in_field(#fid));
                            }
                        }
                    }
                    _ => quote!(),
                };
                let until_check = match rep {
                    // `_io.eof` / `_io.size` are not known while writing: the list's
                    // length decides.
                    Repeat::Until(u) if crate::instances::uses_io_end(&u.expr) => quote!(),
                    Repeat::Until(u) => {
                        let (ety, c) = self.until_cond(f, u, &wscope)?;
                        let bind = bind_elem(&ety, quote!(__e));
                        let src_u = &u.src;
                        quote! {
                            for (__j, __e) in __val.iter().enumerate() {
                                #bind
                                if (#c) != (__j + 1 == __val.len()) {
                                    return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::UntilMismatch { condition: #src_u }).in_index(__j).in_field(#fid));
                                }
                            }
                            if __val.is_empty() {
                                return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::UntilMismatch { condition: #src_u }).in_field(#fid));
                            }
                        }
                    }
                    _ => quote!(),
                };
                // A reader stops a `repeat: eos` list at an element that takes no bytes, so
                // such an element could not be read back: refuse it.
                let empty_check = if matches!(rep, Repeat::Eos) {
                    quote! {
                        if __w.bit_len() == __before {
                            return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::Semantic("an element of a `repeat: eos` list encodes to no bytes, so it could not be read back".into())).in_index(__i).in_field(#fid));
                        }
                    }
                } else {
                    quote! { let _ = __before; }
                };
                quote! {
                    #count_check
                    #until_check
                    for (__i, __v) in __val.iter().enumerate() {
                        let __before = __w.bit_len();
                        (|| -> Result<(), ::statepack_runtime::io::EncodeError> { #one_write })() #wrap_w_idx;
                        #empty_check
                    }
                }
            }
        };
        let cond_src = f.cond.as_ref().map(|c| c.src.clone()).unwrap_or_default();
        let write_stmt = match (&cond_w, is_contents) {
            (_, true) => {
                let FieldKind::Contents(bytes) = &f.kind else {
                    unreachable!()
                };
                let b = Literal::byte_string(bytes);
                quote!(__w.write_bytes(#b);)
            }
            (Some(c), _) => quote! {
                match (#c, &#src) {
                    (true, Some(__val)) => { #body_write }
                    (false, None) => {}
                    (__holds, __opt) => return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::PresenceMismatch { state: if __opt.is_some() { "present" } else { "absent" }, condition: #cond_src, holds: __holds }).in_field(#fid)),
                }
            },
            (None, _) => quote! {
                { let __val = &#src; #body_write }
            },
        };
        if let Some(at) = &f.at {
            pos_writes.push(positional::emit_write(
                self,
                f,
                at,
                &wscope,
                quote! { #rule_const #write_stmt },
            )?);
            return Some(false);
        }
        writes.push(quote! { #rule_const #write_stmt });
        if let Some(unit) = run_unit {
            write_runs.push(runs::Member {
                stmt: writes.len() - 1,
                id: id.clone(),
                ty: full_ty.clone(),
                at: None,
                src: src.clone(),
                unit,
                cond: cond_w.clone(),
            });
        }

        Some(true)
    }

    /// The term of field `f` in `encoded_len`, and its part of the exact bit count.
    fn field_len(&mut self, f: &Field, fc: &FieldCx, p: &mut TypeParts) {
        let TypeParts { lens, exact, .. } = p;
        let FieldCx {
            ref id, is_derived, ..
        } = *fc;
        // --- encoded length
        if is_derived {
            let FieldKind::Int { bytes, .. } = &f.kind else {
                exact.field(self.s, &self.whole_types, f, &id, true, None);
                return;
            };
            lens.push(lit_usize(*bytes as usize).into_token_stream_usize());
        } else if let FieldKind::Contents(c) = &f.kind {
            lens.push(lit_usize(c.len()).into_token_stream_usize());
        } else {
            let one = self.elem_len(f);
            let list_len = match (&f.repeat, self.fixed_elem_len(f)) {
                _ if f.varint => quote!(::statepack_runtime::bits::leb128_len(*__val)),
                (Repeat::None, _) => quote!({ let __v = __val; #one }),
                (_, Some(n)) => {
                    let n = lit_usize(n);
                    quote!(__val.len() * #n)
                }
                _ => quote!(__val.iter().map(|__v| #one).sum::<usize>()),
            };
            lens.push(match &f.cond {
                Some(_) => quote!(self.#id.as_ref().map_or(0, |__val| #list_len)),
                None => quote!({ let __val = &self.#id; #list_len }),
            });
        }
        exact.field(self.s, &self.whole_types, f, &id, is_derived, lens.last());
    }

    /// The `repeat-until` condition of `f`, checked with `_` bound to one element: the
    /// element's type and the condition's code.
    fn until_cond(&mut self, f: &Field, u: &SrcExpr, scope: &Scope) -> Option<(Ty, TokenStream)> {
        let ety = self.field_ty(&Field {
            cond: None,
            repeat: Repeat::None,
            ..f.clone()
        });
        let mut with_elem = Scope {
            vars: scope.vars.clone(),
            ctx: scope.ctx,
        };
        with_elem.vars.push(("_".into(), ety.clone()));
        let c = self.expect_ty(
            u,
            &with_elem,
            &format!("{}.repeat-until", f.key_path),
            Ty::Bool,
        )?;
        Some((ety, c))
    }

    fn elem_min_len(&self, f: &Field) -> TokenStream {
        match &f.kind {
            FieldKind::User { name, .. } => {
                let i = type_ident(name);
                quote!(#i::MIN_LEN)
            }
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => {
                lit_usize(*bytes as usize).into_token_stream_usize()
            }
            FieldKind::Str { size: None, .. } => quote!(1),
            _ => quote!(0),
        }
    }

    fn size_value(&mut self, size: &Size, scope: &Scope, kp: &str) -> Option<Option<TokenStream>> {
        match size {
            Size::Eos | Size::Terminator => Some(None),
            Size::Expr(e) => Some(Some(self.expect_ty(
                e,
                scope,
                &format!("{kp}.size"),
                Ty::Int,
            )?)),
        }
    }

    fn elem_read(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        match &f.kind {
            FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. } => {
                self.elem_read_number(f)
            }
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() || f.process.is_some() =>
            {
                self.elem_read_transformed(_t, f, scope, _side)
            }
            FieldKind::Str { .. } if f.term.is_some() => {
                self.elem_read_transformed(_t, f, scope, _side)
            }
            FieldKind::Bytes(_)
            | FieldKind::Str { .. }
            | FieldKind::Contents(_)
            | FieldKind::User { .. } => self.elem_read_plain(_t, f, scope, _side),
            FieldKind::Switch { .. } => self.elem_read_switch(_t, f, scope, _side),
        }
    }

    /// Reads one element of an integer, float or bit field.
    fn elem_read_number(&mut self, f: &Field) -> Option<TokenStream> {
        Some(match &f.kind {
            FieldKind::Int {
                bytes,
                signed,
                endian,
                enum_name,
            } => {
                let m = endian_code::num_read(*bytes, *signed, false, *endian);
                match enum_name {
                    None => m,
                    Some(e) if self.open_enums.contains(e) && !f.strict => {
                        // Kaitai Struct's enums are open: an unknown integer is kept.
                        let ei = type_ident(e);
                        quote!(#m.map(|__raw| #ei::from_i_open(__raw as i128)))
                    }
                    Some(e) => {
                        let ei = type_ident(e);
                        quote! {{
                            let __at = __r.offset();
                            match #m {
                                Ok(__raw) => #ei::from_i(__raw as i128).ok_or_else(|| ::statepack_runtime::io::DecodeError::new(__at, ::statepack_runtime::io::DecodeErrorKind::UnknownEnum { enum_name: #e, value: __raw as i128 })),
                                Err(e) => Err(e),
                            }
                        }}
                    }
                }
            }
            FieldKind::Float { bytes, endian } => {
                endian_code::num_read(*bytes, true, true, *endian)
            }
            FieldKind::Bits {
                width,
                le,
                enum_name: Some(e),
                ..
            } => {
                let ei = type_ident(e);
                let m = if *le {
                    quote!(read_bits_le)
                } else {
                    quote!(read_bits_be)
                };
                let w = u32::from(*width);
                if self.open_enums.contains(e) && !f.strict {
                    quote!(__r.#m(#w).map(|__raw| #ei::from_i_open(__raw as i128)))
                } else {
                    quote! {{
                        let __at = __r.offset();
                        match __r.#m(#w) {
                            Ok(__raw) => #ei::from_i(__raw as i128).ok_or_else(|| ::statepack_runtime::io::DecodeError::new(__at, ::statepack_runtime::io::DecodeErrorKind::UnknownEnum { enum_name: #e, value: __raw as i128 })),
                            Err(e) => Err(e),
                        }
                    }}
                }
            }
            FieldKind::Bits {
                width,
                offset_binary,
                le,
                ..
            } => bits::bits_read(*width, *offset_binary, *le),
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Reads one element of a processed or terminated field (bytes, string or user type).
    fn elem_read_transformed(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() && f.process.is_some() =>
            {
                self.proc_term_read(f, scope)?
            }
            FieldKind::User { name, size } if f.term.is_some() => {
                let n = match size {
                    Some(s @ Size::Expr(_)) => {
                        let v = self.size_value(s, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    Some(Size::Eos) => quote!(::std::option::Option::Some(__r.remaining() as i128)),
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let keep = if matches!(f.repeat, Repeat::None) {
                    quote!(#tail = ::std::option::Option::Some(__tl.to_vec());)
                } else {
                    quote!(#tail.push(__tl.to_vec());)
                };
                let ti = type_ident(name);
                let finish = if !f.strict {
                    quote!({
                        __v.__unread_pad = __sub.align_to_byte_keep();
                        __v.__unread = __sub.take_rest().to_vec();
                        Ok(__v)
                    })
                } else {
                    quote!(__sub.finish().map(|_| __v))
                };
                let args = self.param_args(f, name, scope, &kp)?;
                let read = quote! {
                    __r.read_terminated(#n, #term).and_then(|(__val, __tl)| {
                        #keep
                        let mut __sub = ::statepack_runtime::io::ByteReader::new(__val);
                        #[allow(unused_mut)]
                        let mut __v = #ti::read_from(&mut __sub #(, #args)*)?;
                        #finish
                    })
                };
                if f.boxed {
                    quote!(#read.map(::std::boxed::Box::new))
                } else {
                    read
                }
            }
            FieldKind::Bytes(_) | FieldKind::Str { .. } if f.term.is_some() => {
                let (size, str_enc) = match &f.kind {
                    FieldKind::Bytes(s) => (Some(s), None),
                    FieldKind::Str { size, encoding } => (size.as_ref(), Some(*encoding)),
                    _ => (None, None),
                };
                let n = match size {
                    Some(Size::Expr(_)) => {
                        let v = self.size_value(size?, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    Some(Size::Eos) => quote!(::std::option::Option::Some(__r.remaining() as i128)),
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let keep = if matches!(f.repeat, Repeat::None) {
                    quote!(#tail = ::std::option::Option::Some(__tl.to_vec());)
                } else {
                    quote!(#tail.push(__tl.to_vec());)
                };
                let value = match str_enc {
                    Some(enc) => quote!(::statepack_runtime::io::decode_str(__val, #enc, __at)),
                    None => quote!(Ok::<_, ::statepack_runtime::io::DecodeError>(
                        __val.to_vec()
                    )),
                };
                quote! {{
                    let __at = __r.offset();
                    match __r.read_terminated(#n, #term) {
                        Ok((__val, __tl)) => { #keep #value }
                        Err(e) => Err(e),
                    }
                }}
            }
            FieldKind::Bytes(_) | FieldKind::User { .. } if f.process.is_some() => {
                let size = match &f.kind {
                    FieldKind::Bytes(s) => s.clone(),
                    FieldKind::User { size: Some(s), .. } => s.clone(),
                    _ => return None,
                };
                let take = match self.size_value(&size, scope, &kp)? {
                    Some(n) => quote!(__r.take_sized(#n)),
                    None => quote!(Ok::<_, ::statepack_runtime::io::DecodeError>(
                        __r.take_rest()
                    )),
                };
                let (setup, proc_) = self.processor(f, scope)?;
                let (_, _, custom) = Self::process_fns(f);
                let unfn_within = if custom {
                    quote!(::statepack_runtime::process::unprocess_custom_within)
                } else {
                    quote!(::statepack_runtime::io::unprocess_within)
                };
                let stored = temp_for("stored", &f.id);
                let keep = if matches!(f.repeat, Repeat::None) {
                    quote!(#stored = ::std::option::Option::Some(__s.to_vec());)
                } else {
                    quote!(#stored.push(__s.to_vec());)
                };
                let value = match &f.kind {
                    FieldKind::User { name, .. } => {
                        let ti = type_ident(name);
                        let finish = if !f.strict {
                            quote!({
                                __v.__unread_pad = __sub.align_to_byte_keep();
                                __v.__unread = __sub.take_rest().to_vec();
                                Ok(__v)
                            })
                        } else {
                            quote!(__sub.finish().map(|_| __v))
                        };
                        let args = self.param_args(f, name, scope, &kp)?;
                        // Traced reads go on into the processed bytes (offsets there count
                        // from their start); plain reads keep the silent reader's fast paths.
                        // The reader of the processed bytes shares the file's processed-bytes
                        // budget, so nested processed fields cannot multiply it.
                        let read = quote! {
                            #unfn_within(#proc_, __s, __at, __r.processed_room()).and_then(|__d| {
                                __r.charge_processed(__d.len(), __at)?;
                                let __share = __r.processed_share();
                                if <T as ::statepack_runtime::io::Tracer>::SILENT {
                                    let mut __sub = ::statepack_runtime::io::ByteReader::new(&__d).sharing(__share);
                                    #[allow(unused_mut)]
                                    let mut __v = #ti::read_from(&mut __sub #(, #args)*)?;
                                    let __res = #finish;
                                    __r.add_processed(__sub.processed_used());
                                    __res
                                } else {
                                    let mut __sub = ::statepack_runtime::io::ByteReader::with_tracer(&__d, __r.relay()).sharing(__share);
                                    #[allow(unused_mut)]
                                    let mut __v = #ti::read_from(&mut __sub #(, #args)*)?;
                                    let __res = #finish;
                                    let __used = __sub.processed_used();
                                    ::std::mem::drop(__sub);
                                    __r.add_processed(__used);
                                    __res
                                }
                            })
                        };
                        if f.boxed {
                            quote!(#read.map(::std::boxed::Box::new))
                        } else {
                            read
                        }
                    }
                    _ => {
                        quote!(#unfn_within(#proc_, __s, __at, __r.processed_room()).and_then(|__d| {
                            __r.charge_processed(__d.len(), __at)?;
                            Ok(__d)
                        }))
                    }
                };
                // As in Kaitai Struct, the processor's arguments are evaluated once the stored
                // bytes are taken (`_io.pos` in them is the position after those bytes).
                quote! {{
                    let __at = __r.offset();
                    match #take {
                        Ok(__s) => { #setup #keep #value }
                        Err(e) => Err(e),
                    }
                }}
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Reads one element of a byte, string, `contents` or user-type field.
    fn elem_read_plain(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(size) => match self.size_value(size, scope, &kp)? {
                Some(n) => quote!(__r.take_sized(#n).map(|b| b.to_vec())),
                None => quote!(Ok::<_, ::statepack_runtime::io::DecodeError>(
                    __r.take_rest().to_vec()
                )),
            },
            FieldKind::Str { size, encoding } => {
                let take = match size {
                    None => quote!(__r.take_until(0)),
                    Some(s) => match self.size_value(s, scope, &kp)? {
                        Some(n) => quote!(__r.take_sized(#n)),
                        None => {
                            quote!(Ok::<_, ::statepack_runtime::io::DecodeError>(
                                __r.take_rest()
                            ))
                        }
                    },
                };
                quote! {{
                    let __at = __r.offset();
                    #take.and_then(|b| ::statepack_runtime::io::decode_str(b, #encoding, __at))
                }}
            }
            FieldKind::Contents(c) => {
                let b = Literal::byte_string(c);
                quote!(__r.expect(#b))
            }
            FieldKind::User { name, size } => {
                let ti = type_ident(name);
                let args = self.param_args(f, name, scope, &kp)?;
                let read = match size {
                    None => quote!(#ti::read_from(__r #(, #args)*)),
                    Some(s) if !f.strict => {
                        // Kaitai Struct skips what the type leaves unread; it is kept so that
                        // the writer puts it back.
                        let n = match self.size_value(s, scope, &kp)? {
                            Some(n) => n,
                            None => quote!((__r.remaining() as i128)),
                        };
                        quote! {
                            __r.push_limit(#n).and_then(|__old| { let mut __v = #ti::read_from(__r #(, #args)*)?; let (__pad, __rest) = __r.pop_limit_skip(__old)?; __v.__unread_pad = __pad; __v.__unread = __rest.to_vec(); Ok(__v) })
                        }
                    }
                    Some(s) => match self.size_value(s, scope, &kp)? {
                        Some(n) => quote! {
                            __r.push_limit(#n).and_then(|__old| { let __v = #ti::read_from(__r #(, #args)*)?; __r.pop_limit(__old)?; Ok(__v) })
                        },
                        None => quote!(#ti::read_from(__r #(, #args)*)),
                    },
                };
                if f.boxed {
                    quote!(#read.map(::std::boxed::Box::new))
                } else {
                    read
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Reads one element of a switch field: the case the switch value selects.
    fn elem_read_switch(
        &mut self,
        _t: &TypeDef,
        f: &Field,
        scope: &Scope,
        _side: Side,
    ) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        let at = temp_for("at", &f.id);
        Some(match &f.kind {
            FieldKind::Switch { on, .. } => {
                let (sw, sty) = self.expr(on, scope, &format!("{kp}.type.switch-on"))?;
                let sw_decl = match sty.clone() {
                    Ty::Int => quote!(let __sw: i128 = #sw;),
                    Ty::Enum(_) => quote!(let __sw: i128 = #sw.to_i();),
                    Ty::Str => quote! {
                        let __sw_text = ::std::string::String::from(AsRef::<str>::as_ref(&#sw));
                        let __sw: &str = __sw_text.as_str();
                    },
                    Ty::Bool => quote!(let __sw: bool = #sw;),
                    Ty::Bytes => quote! {
                        let __sw_bytes = AsRef::<[u8]>::as_ref(&#sw).to_vec();
                        let __sw: &[u8] = &__sw_bytes[..];
                    },
                    other => {
                        self.err(
                            on.pos,
                            &format!("{kp}.type.switch-on"),
                            format!(
                                "`{}` is {}, not an integer, enum, string, bytes or condition",
                                on.src,
                                ty_name(&other)
                            ),
                            "switch on an integer, enum, string or condition",
                        );
                        return None;
                    }
                };
                self.check_case_keys(f, &sty);
                let shown = if sty == Ty::Bytes {
                    quote!(::std::format!("{:?}", __sw))
                } else {
                    quote!(__sw.to_string())
                };
                let en = Self::switch_enum_name(_t, f);
                let mut arms = Vec::new();
                let mut default = if has_no_case(f) {
                    // Kaitai Struct: no case and no `_` reads nothing; the member holds no value.
                    if switch_sized(f) {
                        quote!(Ok::<_, ::statepack_runtime::io::DecodeError>(#en::NoCase(__r.take_rest().to_vec())))
                    } else {
                        quote!(Ok::<_, ::statepack_runtime::io::DecodeError>(#en::NoCase))
                    }
                } else {
                    quote! {
                        Err(::statepack_runtime::io::DecodeError::new(__r.offset(), ::statepack_runtime::io::DecodeErrorKind::NotValid { value: #shown, rule: "must select one of the switch cases" }))
                    }
                };
                for (vi, tn, keys) in self.switch_variants(f) {
                    let read_case = if case_number(&tn).is_some() {
                        self.case_read(&tn, &en, &vi)
                    } else {
                        let ti = type_ident(&tn);
                        let args = self.param_args(f, &tn, scope, &kp)?;
                        let wrap = if f.recursive.contains(&tn) {
                            quote!(.map(::std::boxed::Box::new))
                        } else {
                            quote!()
                        };
                        quote!(#ti::read_from(__r #(, #args)*) #wrap .map(#en::#vi))
                    };
                    if keys.is_empty() {
                        default = read_case;
                        continue;
                    }
                    let mut tests = Vec::new();
                    for k in &keys {
                        let (kt, kty) = self.expr(k, scope, &format!("{kp}.type.cases"))?;
                        let fits = match (&sty, &kty) {
                            (Ty::Enum(_), Ty::Enum(_)) => true,
                            (a, b) => a == b,
                        };
                        if !fits {
                            self.err(
                                k.pos,
                                &format!("{kp}.type.cases"),
                                format!(
                                    "case key `{}` is {} but the switch value is {}",
                                    k.src,
                                    ty_name(&kty),
                                    ty_name(&sty)
                                ),
                                "give case keys of the switch value's type",
                            );
                            return None;
                        }
                        tests.push(match kty {
                            Ty::Enum(_) => quote!(__sw == #kt.to_i()),
                            Ty::Bytes => quote!(__sw == &(#kt)[..]),
                            _ => quote!(__sw == #kt),
                        });
                    }
                    arms.push(quote!(if #(#tests)||* { #read_case }));
                }
                if let FieldKind::Switch {
                    default: Some(d), ..
                } = &f.kind
                {
                    let vi = type_ident(d);
                    default = if case_number(d).is_some() {
                        self.case_read(d, &en, &vi)
                    } else {
                        let ti = type_ident(d);
                        let args = self.param_args(f, d, scope, &kp)?;
                        let wrap = if f.recursive.contains(d) {
                            quote!(.map(::std::boxed::Box::new))
                        } else {
                            quote!()
                        };
                        quote!(#ti::read_from(__r #(, #args)*) #wrap .map(#en::#vi))
                    };
                }
                let _ = at;
                // A switch with only `_` reads its one case (no `if`, so no braces around it).
                let inner = if arms.is_empty() {
                    quote! {{
                        #sw_decl
                        #default
                    }}
                } else {
                    quote! {{
                        #sw_decl
                        #(#arms else)* { #default }
                    }}
                };
                let FieldKind::Switch { size, .. } = &f.kind else {
                    return None;
                };
                match size {
                    None => inner,
                    Some(sz) => {
                        let n = match self.size_value(sz, scope, &kp)? {
                            Some(n) => n,
                            None => quote!((__r.remaining() as i128)),
                        };
                        if f.strict {
                            quote! {
                                __r.push_limit(#n).and_then(|__old| { let __v = #inner?; __r.pop_limit(__old)?; Ok(__v) })
                            }
                        } else {
                            // Kaitai's rules: what the case leaves unread is kept in it.
                            let stores = self.switch_variants(f).into_iter().map(|(vi, _, _)| {
                                quote!(#en::#vi(__x) => { __x.__unread_pad = __pad; __x.__unread = __rest.to_vec(); })
                            });
                            let no_case = if has_no_case(f) {
                                quote!(#en::NoCase(_) => {})
                            } else {
                                quote!()
                            };
                            quote! {
                                __r.push_limit(#n).and_then(|__old| {
                                    let mut __v = #inner?;
                                    let (__pad, __rest) = __r.pop_limit_skip(__old)?;
                                    match &mut __v { #(#stores)* #no_case }
                                    Ok(__v)
                                })
                            }
                        }
                    }
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Case keys of a switch on an enum must be values of that enum, and no value may
    /// select two cases (`1` and `0x1` are the same key).
    fn check_case_keys(&mut self, f: &Field, switch_ty: &Ty) {
        let FieldKind::Switch { cases, .. } = &f.kind else {
            return;
        };
        let kp = format!("{}.type.cases", f.key_path);
        let mut seen: Vec<(i128, &str)> = Vec::new();
        for (k, _) in cases {
            let value = match &k.expr {
                Expr::Int(v) => Some(*v),
                Expr::EnumRef(e, v) => {
                    if let Ty::Enum(se) = switch_ty {
                        if se != e {
                            self.err(
                                k.pos,
                                &kp,
                                format!(
                                    "case key `{}` is a `{e}` value but the switch is on a `{se}`",
                                    k.src
                                ),
                                format!("use values of `{se}` as case keys"),
                            );
                        }
                    }
                    self.s
                        .enum_def(e)
                        .and_then(|d| d.values.iter().find(|x| &x.name == v))
                        .map(|x| x.value)
                }
                _ => None,
            };
            if let Some(v) = value {
                match seen.iter().find(|(x, _)| *x == v) {
                    Some((_, first)) => self.err(
                        k.pos,
                        &kp,
                        format!(
                            "case key `{}` selects the same value ({v}) as `{first}`",
                            k.src
                        ),
                        "give each case a different value",
                    ),
                    None => seen.push((v, &k.src)),
                }
            }
        }
    }

    fn elem_write(&mut self, t: &TypeDef, f: &Field, scope: &Scope) -> Option<TokenStream> {
        match &f.kind {
            FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. } => {
                self.elem_write_number(f)
            }
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() || f.process.is_some() =>
            {
                self.elem_write_transformed(f, scope)
            }
            FieldKind::Str { .. } if f.term.is_some() => self.elem_write_transformed(f, scope),
            FieldKind::Bytes(_)
            | FieldKind::Str { .. }
            | FieldKind::Contents(_)
            | FieldKind::User { .. } => self.elem_write_plain(f, scope),
            FieldKind::Switch { .. } => self.elem_write_switch(t, f, scope),
        }
    }

    /// Writes one element `__v` of an integer, float or bit field.
    fn elem_write_number(&mut self, f: &Field) -> Option<TokenStream> {
        Some(match &f.kind {
            FieldKind::Int {
                bytes,
                signed,
                endian,
                enum_name,
            } => {
                let w = |v| endian_code::num_write(*bytes, *signed, false, *endian, v);
                let ty = int_ty(*bytes, *signed);
                match enum_name {
                    None => w(quote!(*__v)),
                    Some(e) if self.open_enums.contains(e) => {
                        // An unlisted value may not fit the stored type: refuse, never wrap.
                        let tn = int_ty_name(*bytes, *signed);
                        w(quote!(::statepack_runtime::io::fit::<#ty>(__v.to_i(), #tn)?))
                    }
                    Some(_) => w(quote!(__v.to_i() as #ty)),
                }
            }
            FieldKind::Float { bytes, endian } => {
                endian_code::num_write(*bytes, true, true, *endian, quote!(*__v))
            }
            FieldKind::Bits {
                width,
                le,
                enum_name: Some(_),
                ..
            } => {
                let m = if *le {
                    quote!(write_bits_le)
                } else {
                    quote!(write_bits_be)
                };
                let w = u32::from(*width);
                quote!(__w.#m(::statepack_runtime::io::fit::<u64>(__v.to_i(), "this bit field")?, #w)?)
            }
            FieldKind::Bits {
                width,
                offset_binary,
                le,
                ..
            } => bits::bits_write(*width, *offset_binary, *le),
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Writes one element of a processed or terminated field (bytes, string or user type).
    fn elem_write_transformed(&mut self, f: &Field, scope: &Scope) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() && f.process.is_some() =>
            {
                self.proc_term_write(f, scope)?
            }
            FieldKind::Bytes(_) | FieldKind::User { .. } if f.process.is_some() => {
                let size = match &f.kind {
                    FieldKind::Bytes(s) => s.clone(),
                    FieldKind::User { size: Some(s), .. } => s.clone(),
                    _ => return None,
                };
                let (setup, proc_) = self.processor(f, scope)?;
                let (_, refn, re_fallible) = Self::process_fns(f);
                let re_q = if re_fallible { quote!(?) } else { quote!() };
                let stored = temp_for("stored", &f.id);
                let kept = if matches!(f.repeat, Repeat::None) {
                    quote!(self.#stored.as_deref())
                } else {
                    quote!(self.#stored.get(__i).map(|__t| __t.as_slice()))
                };
                let check = self.size_check(f, &size, scope, &kp, quote!(__s.len()))?;
                let value = match &f.kind {
                    FieldKind::User { .. } => quote! {
                        let mut __sw = ::statepack_runtime::io::ByteWriter::new();
                        __v.write_to(&mut __sw)?;
                        let __d = __sw.into_stream_bytes(__w)?;
                    },
                    _ => quote!(let __d: &[u8] = &__v[..];),
                };
                let process = quote! {
                    #setup
                    #refn(#proc_, &__d, #kept)#re_q
                };
                let process = self.proc_args_after(f, &size, scope, &kp, process)?;
                quote!({
                    #value
                    let __s = { #process };
                    #check
                    __w.write_bytes(&__s);
                })
            }
            FieldKind::User { size, .. } if f.term.is_some() => {
                let n = match size {
                    Some(s @ Size::Expr(_)) => {
                        let v = self.size_value(s, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let tail = if matches!(f.repeat, Repeat::None) {
                    quote!(self.#tail.as_deref())
                } else {
                    quote!(self.#tail.get(__i).map(|__t| __t.as_slice()))
                };
                quote!({
                    let mut __sw = ::statepack_runtime::io::ByteWriter::new();
                    __v.write_to(&mut __sw)?;
                    let __d = __sw.into_stream_bytes(__w)?;
                    __w.write_terminated(&__d, #tail, #n, #term)?;
                })
            }
            FieldKind::Bytes(_) | FieldKind::Str { .. } if f.term.is_some() => {
                let (size, is_str) = match &f.kind {
                    FieldKind::Bytes(s) => (Some(s), false),
                    FieldKind::Str { size, .. } => (size.as_ref(), true),
                    _ => (None, false),
                };
                let n = match size {
                    Some(Size::Expr(_)) => {
                        let v = self.size_value(size?, scope, &kp)??;
                        quote!(::std::option::Option::Some(#v))
                    }
                    _ => quote!(::std::option::Option::None),
                };
                let term = term_tokens(f.term.as_ref()?);
                let tail = temp_for("tail", &f.id);
                let tail = if matches!(f.repeat, Repeat::None) {
                    quote!(self.#tail.as_deref())
                } else {
                    quote!(self.#tail.get(__i).map(|__t| __t.as_slice()))
                };
                let bytes = match &f.kind {
                    FieldKind::Str { encoding, .. } if !plain_encoding(encoding) => {
                        quote!(&::statepack_runtime::io::encode_str(__v, #encoding)?)
                    }
                    _ if is_str => quote!(__v.as_bytes()),
                    _ => quote!(&__v[..]),
                };
                let enc_check = match &f.kind {
                    FieldKind::Str {
                        encoding: "ASCII", ..
                    } => quote! {
                        if !__v.is_ascii() {
                            return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::NotValid { value: format!("{:?}", __v), rule: "must be ASCII" }));
                        }
                    },
                    _ => quote!(),
                };
                quote!({ #enc_check __w.write_terminated(#bytes, #tail, #n, #term)?; })
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Writes one element of a byte, string, `contents` or user-type field.
    fn elem_write_plain(&mut self, f: &Field, scope: &Scope) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Bytes(size) => {
                let check = self.size_check(f, size, scope, &kp, quote!(__v.len()))?;
                quote!({ #check __w.write_bytes(__v); })
            }
            FieldKind::Str { size, encoding } => {
                let enc_check = if *encoding == "ASCII" {
                    quote! {
                        if !__v.is_ascii() {
                            return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::NotValid { value: format!("{:?}", __v), rule: "must be ASCII" }));
                        }
                    }
                } else {
                    quote!()
                };
                if !plain_encoding(encoding) {
                    // Other character sets: the encoded bytes are measured and written.
                    let enc = *encoding;
                    return Some(match size {
                        None => quote!({
                            let __b = ::statepack_runtime::io::encode_str(__v, #enc)?;
                            if __b.contains(&0) {
                                return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::NotValid { value: format!("{:?}", __v), rule: "a zero-terminated string cannot contain a zero byte" }));
                            }
                            __w.write_bytes(&__b);
                            __w.write_u8(0);
                        }),
                        Some(s) => {
                            let check = self.size_check(f, s, scope, &kp, quote!(__b.len()))?;
                            quote!({ let __b = ::statepack_runtime::io::encode_str(__v, #enc)?; #check __w.write_bytes(&__b); })
                        }
                    });
                }
                match size {
                    None => quote!({
                        #enc_check
                        if __v.as_bytes().contains(&0) {
                            return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::NotValid { value: format!("{:?}", __v), rule: "a zero-terminated string cannot contain a zero byte" }));
                        }
                        __w.write_bytes(__v.as_bytes());
                        __w.write_u8(0);
                    }),
                    Some(s) => {
                        let check = self.size_check(f, s, scope, &kp, quote!(__v.len()))?;
                        quote!({ #enc_check #check __w.write_bytes(__v.as_bytes()); })
                    }
                }
            }
            FieldKind::Contents(_) => quote!(()),
            FieldKind::User { size, name } => {
                let check = match size {
                    Some(s) => self.size_check(f, s, scope, &kp, quote!(__v.encoded_len()))?,
                    None => quote!(),
                };
                let pchecks = self.param_checks(f, name, scope, &kp, quote!(__v))?;
                if size.is_some() && self.type_needs_io(name) {
                    // The value's positional instances are placed in its own substream.
                    quote!({ #check #pchecks let __io = __w.push_io(); __v.write_to(__w)?; __w.pop_io(__io); })
                } else {
                    quote!({ #check #pchecks __v.write_to(__w)?; })
                }
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    /// Writes one element of a switch field: the case its value holds, checked against the
    /// switch value.
    fn elem_write_switch(&mut self, t: &TypeDef, f: &Field, scope: &Scope) -> Option<TokenStream> {
        let kp = f.key_path.clone();
        Some(match &f.kind {
            FieldKind::Switch { on, .. } => {
                let (sw, sty) = self.expr(on, scope, &format!("{kp}.type.switch-on"))?;
                let sw_decl = match sty.clone() {
                    Ty::Enum(_) => quote!(let __sw: i128 = #sw.to_i();),
                    Ty::Str => quote! {
                        let __sw_text = ::std::string::String::from(AsRef::<str>::as_ref(&#sw));
                        let __sw: &str = __sw_text.as_str();
                    },
                    Ty::Bool => quote!(let __sw: bool = #sw;),
                    Ty::Bytes => quote! {
                        let __sw_bytes = AsRef::<[u8]>::as_ref(&#sw).to_vec();
                        let __sw: &[u8] = &__sw_bytes[..];
                    },
                    _ => quote!(let __sw: i128 = #sw;),
                };
                let shown = if sty == Ty::Bytes {
                    quote!(::std::format!("{:?}", __sw))
                } else {
                    quote!(__sw.to_string())
                };
                let en = Self::switch_enum_name(t, f);
                let variants = self.switch_variants(f);
                let default = match &f.kind {
                    FieldKind::Switch { default, .. } => default.clone(),
                    _ => None,
                };
                let mut all_tests = Vec::new();
                let mut arms = Vec::new();
                for (vi, tn, keys) in &variants {
                    // The `_` type may also be a case type: that variant is right for its own
                    // keys and for every value no case names.
                    let is_default = default.as_deref() == Some(tn.as_str());
                    let mut tests = Vec::new();
                    for k in keys {
                        let (kt, kty) = self.expr(k, scope, &format!("{kp}.type.cases"))?;
                        tests.push(match kty {
                            Ty::Enum(_) => quote!(__sw == #kt.to_i()),
                            Ty::Bytes => quote!(__sw == &(#kt)[..]),
                            _ => quote!(__sw == #kt),
                        });
                    }
                    all_tests.extend(tests.clone());
                    let pchecks = if case_number(tn).is_some() {
                        quote!()
                    } else {
                        self.param_checks(f, tn, scope, &kp, quote!(__x))?
                    };
                    arms.push((vi.clone(), tests, is_default, pchecks, self.case_write(tn)));
                }
                // A case type with positional instances or `_io` gets its own stream start.
                let own_io = match &f.kind {
                    FieldKind::Switch {
                        cases,
                        default,
                        size: Some(_),
                        ..
                    } => cases
                        .iter()
                        .map(|(_, n)| n)
                        .chain(default.iter())
                        .any(|n| self.type_needs_io(n)),
                    _ => false,
                };
                let arms: Vec<TokenStream> = arms
                    .into_iter()
                    .map(|(vi, tests, is_default, pchecks, put)| {
                        let name = vi.to_string();
                        let put = if own_io {
                            quote!({
                                let __io = __w.push_io();
                                #put
                                __w.pop_io(__io);
                            })
                        } else {
                            put
                        };
                        let all = &all_tests;
                        let selects = if tests.is_empty() {
                            if all.is_empty() { quote!(true) } else { quote!(!(#(#all)||*)) }
                        } else if is_default {
                            quote!((#(#tests)||*) || !(#(#all)||*))
                        } else {
                            quote!(#(#tests)||*)
                        };
                        quote! {
                            #en::#vi(__x) => {
                                if !(#selects) {
                                    return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::SwitchMismatch { selected: #shown, found: #name }));
                                }
                                #pchecks
                                #put
                            }
                        }
                    })
                    .collect();
                let no_case_arm = if has_no_case(f) {
                    let all = &all_tests;
                    let (pat, put) = if switch_sized(f) {
                        (quote!(#en::NoCase(__b)), quote!(__w.write_bytes(__b);))
                    } else {
                        (quote!(#en::NoCase), quote!())
                    };
                    quote! {
                        #pat => {
                            if #(#all)||* {
                                return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::SwitchMismatch { selected: #shown, found: "no case" }));
                            }
                            #put
                        }
                    }
                } else {
                    quote!()
                };
                let size_check = match &f.kind {
                    FieldKind::Switch { size: Some(sz), .. } => {
                        let sz = sz.clone();
                        self.size_check(f, &sz, scope, &kp, quote!(__v.encoded_len()))?
                    }
                    _ => quote!(),
                };
                quote! {{
                    #size_check
                    #sw_decl
                    match __v { #(#arms)* #no_case_arm }
                }}
            }
            _ => unreachable!("dispatched by the caller"),
        })
    }

    fn size_check(
        &mut self,
        f: &Field,
        size: &Size,
        scope: &Scope,
        kp: &str,
        actual: TokenStream,
    ) -> Option<TokenStream> {
        let derived_here = matches!(
            size,
            Size::Expr(SrcExpr {
                expr: Expr::Name(_),
                ..
            })
        ) && matches!(f.repeat, Repeat::None);
        if matches!(size, Size::Expr(e) if crate::instances::uses_io_end(&e.expr)) {
            // `_io.size` is not known while writing: the value's own length is written.
            return Some(quote!());
        }
        match self.size_value(size, scope, kp)? {
            None => Some(quote!()),
            Some(n) => {
                // A size given by a derived field always matches; check anything else.
                let _ = derived_here;
                let probe = exact_len::probe_on_mismatch(&f.kind);
                Some(quote! {
                    if (#actual as i128) != #n {
                        #probe
                        return Err(::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::SizeMismatch { expected: u64::try_from(#n).unwrap_or(u64::MAX), found: #actual }));
                    }
                })
            }
        }
    }

    fn elem_len(&self, f: &Field) -> TokenStream {
        match &f.kind {
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => {
                lit_usize(*bytes as usize).into_token_stream_usize()
            }
            // Never used: a type with bit fields measures itself by writing (see emit_type).
            FieldKind::Bits { .. } => quote!(0usize),
            FieldKind::Bytes(_) => quote!(__v.len()),
            FieldKind::Str { size: None, .. } => quote!(__v.len() + 1),
            FieldKind::Str { .. } => quote!(__v.len()),
            FieldKind::Contents(c) => lit_usize(c.len()).into_token_stream_usize(),
            FieldKind::User { .. } | FieldKind::Switch { .. } => quote!(__v.encoded_len()),
        }
    }

    fn valid_check(
        &mut self,
        v: &Valid,
        f: &Field,
        scope: &Scope,
        side: Side,
    ) -> Option<TokenStream> {
        let bare = Field {
            cond: None,
            repeat: Repeat::None,
            ..f.clone()
        };
        // A switch of number types is checked on its number (a switch that selected no case
        // fails the check).
        let number_switch = self.number_switch_ty(&self.field_ty(&bare));
        if f.varint
            || !matches!(
                f.kind,
                FieldKind::Int { .. }
                    | FieldKind::Float { .. }
                    | FieldKind::Str { .. }
                    | FieldKind::Bytes(_)
            ) && number_switch.is_none()
        {
            if side == Side::Read {
                self.err(
                    f.pos_of("valid"),
                    &format!("{}.valid", f.key_path),
                    "`valid` is supported on integer, float, enum, string and byte fields (and their lists)",
                    "move the rule to the element type's field, or drop it",
                );
            }
            return None;
        }
        let kp = format!("{}.valid", f.key_path);
        let mut s2 = Scope {
            vars: scope.vars.clone(),
            ctx: scope.ctx,
        };
        let ty = number_switch
            .clone()
            .unwrap_or_else(|| self.field_ty(&bare));
        s2.vars.push(("_".into(), ty.clone()));
        let val = match &ty {
            _ if number_switch.is_some() => quote!(__nv),
            Ty::Int => quote!((*__v as i128)),
            Ty::Float => quote!((*__v as f64)),
            _ => quote!((*__v)),
        };
        let want = match &ty {
            Ty::Enum(_) | Ty::Str | Ty::Bytes => ty.clone(),
            Ty::Float => Ty::Float,
            _ => Ty::Int,
        };
        let cmp = |me: &mut Self, e: &SrcExpr, op: TokenStream| -> Option<TokenStream> {
            let x = me.expect_ty(e, &s2, &kp, want.clone())?;
            Some(match want {
                Ty::Str => quote!((AsRef::<str>::as_ref(&#val) #op AsRef::<str>::as_ref(&#x))),
                // Bytes compare as unsigned bytes, element by element, as in Kaitai.
                Ty::Bytes => quote!((AsRef::<[u8]>::as_ref(&#val) #op AsRef::<[u8]>::as_ref(&#x))),
                _ => quote!((#val #op #x)),
            })
        };
        let body = match v {
            Valid::Eq(e) => cmp(self, e, quote!(==))?,
            Valid::InEnum => match &ty {
                // A closed enum refuses unlisted values while reading already.
                Ty::Enum(e) if self.open_enums.contains(e) => quote!(#val.listed_name().is_some()),
                Ty::Enum(_) => quote!(true),
                _ => {
                    if side == Side::Read {
                        self.err(
                            f.pos_of("valid"),
                            &kp,
                            "`valid: {in-enum: true}` needs a field with `enum`",
                            "add `enum: <name>` to the field, or drop the rule",
                        );
                    }
                    return None;
                }
            },
            Valid::Range(a, b) => {
                if matches!(want, Ty::Enum(_)) {
                    self.err(
                        f.pos_of("valid"),
                        &kp,
                        "`min`/`max` need a number, string or byte field",
                        "use `eq` or `any-of` for enums",
                    );
                    return None;
                }
                let lo = match a {
                    Some(a) => cmp(self, a, quote!(>=))?,
                    None => quote!(true),
                };
                let hi = match b {
                    Some(b) => cmp(self, b, quote!(<=))?,
                    None => quote!(true),
                };
                quote!((#lo && #hi))
            }
            Valid::AnyOf(list) => {
                let mut parts = Vec::new();
                for e in list {
                    parts.push(cmp(self, e, quote!(==))?);
                }
                quote!((#(#parts)||*))
            }
            Valid::Expr(e) => {
                let c = self.expect_ty(e, &s2, &kp, Ty::Bool)?;
                let bind = if number_switch.is_some() {
                    bind_elem(&ty, quote!((&__nv)))
                } else {
                    bind_elem(&ty, quote!(__v))
                };
                quote!({ #bind #c })
            }
        };
        if number_switch.is_some() {
            return Some(quote!(match __v.value() {
                ::std::result::Result::Ok(__nv) => #body,
                ::std::result::Result::Err(_) => false,
            }));
        }
        Some(body)
    }

    fn emit_switch_enum(&self, t: &TypeDef, f: &Field) -> TokenStream {
        let en = Self::switch_enum_name(t, f);
        let FieldKind::Switch { on, default, .. } = &f.kind else {
            return quote!();
        };
        let doc = self.doc_for(
            None,
            f.pos,
            &format!(
                "The body of `{}.{}`, selected by `{}`.",
                t.name, f.id, on.src
            ),
        );
        let vs = self.switch_variants(f);
        let variants = vs.iter().map(|(vi, tn, keys)| {
            let ti = type_ident(tn);
            let d = if keys.is_empty() {
                " The default case (`_`).".to_string()
            } else {
                format!(
                    " Selected when the switch value is {}{}.",
                    keys.iter()
                        .map(|k| format!("`{}`", k.src))
                        .collect::<Vec<_>>()
                        .join(" or "),
                    if default.as_deref() == Some(tn.as_str()) {
                        ", or by the default case (`_`)"
                    } else {
                        ""
                    }
                )
            };
            let ren = tn.as_str();
            if f.recursive.contains(tn) {
                quote!(#[doc = #d] #[serde(rename = #ren)] #vi(::std::boxed::Box<#ti>))
            } else {
                let held = Self::case_rust_ty(tn);
                quote!(#[doc = #d] #[serde(rename = #ren)] #vi(#held))
            }
        });
        let len_arms = vs.iter().map(|(vi, tn, _)| {
            let len = Self::case_len(tn);
            quote!(#en::#vi(__x) => #len)
        });
        let value_fn = self.number_switch_methods(f, &en);
        let vis: Vec<proc_macro2::Ident> = vs.iter().map(|(vi, _, _)| vi.clone()).collect();
        let no_case = has_no_case(f);
        let sized = switch_sized(f);
        let to_value = reflect::switch_impl(&en, &vis, no_case.then_some(sized));
        let (no_case_variant, no_case_len) = match (no_case, sized) {
            (true, false) => (
                quote!(
                    #[doc = " No case matched the switch value (and there is no `_` case): nothing was read."]
                    NoCase,
                ),
                quote!(#en::NoCase => 0,),
            ),
            (true, true) => (
                quote!(#[doc = " No case matched the switch value (and there is no `_` case): the sized field's bytes, raw."] NoCase(::std::vec::Vec<u8>),),
                quote!(#en::NoCase(__b) => __b.len(),),
            ),
            _ => (quote!(), quote!()),
        };
        // `Default`: the first case with its own default value (or no case).
        let default_value = match (vis.first(), no_case, sized) {
            (Some(v), ..) => quote!(Self::#v(::core::default::Default::default())),
            (None, true, false) => quote!(Self::NoCase),
            (None, true, true) => quote!(Self::NoCase(::std::vec::Vec::new())),
            (None, false, _) => quote!(),
        };
        let default_impl = if default_value.is_empty() || self.default_derive().is_empty() {
            quote!()
        } else {
            quote! {
                impl ::core::default::Default for #en {
                    #[doc = " The first case, holding its own default value."]
                    fn default() -> Self { #default_value }
                }
            }
        };
        quote! {
            #doc
            #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
            pub enum #en { #(#variants,)* #no_case_variant }
            #default_impl
            impl #en {
                #[doc = " The number of bytes the selected case writes."]
                pub fn encoded_len(&self) -> usize { match self { #(#len_arms,)* #no_case_len } }
                #value_fn
            }
            #to_value
        }
    }
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
fn param_rust_ty(k: &ParamKind) -> (TokenStream, Ty) {
    match k {
        ParamKind::Int => (quote!(i128), Ty::Int),
        ParamKind::Bool => (quote!(bool), Ty::Bool),
        ParamKind::Float => (quote!(f64), Ty::Float),
        ParamKind::Str => (quote!(::std::string::String), Ty::Str),
        ParamKind::Bytes => (quote!(::std::vec::Vec<u8>), Ty::Bytes),
        ParamKind::Enum(e) => {
            let i = type_ident(e);
            (quote!(#i), Ty::Enum(e.clone()))
        }
        // `crate::context` has given every `struct` param a user type; one that is left
        // has been reported there.
        ParamKind::User(t) => {
            let i = type_ident(t);
            (quote!(#i), Ty::User(t.clone()))
        }
        ParamKind::Struct => (quote!(()), Ty::Bool),
        ParamKind::List(inner) => {
            let (r, t) = param_rust_ty(inner);
            (quote!(::std::vec::Vec<#r>), Ty::List(Box::new(t)))
        }
    }
}

/// How the tracer leaves one element of field `f` (`is_leaf`: a number, string or bytes, traced
/// with its value): enums with their name and stored integer, offset-binary bit fields with
/// their code, `contents` with the bytes matched, other leaves with their value.
fn trace_leave(f: &Field, is_leaf: bool) -> TokenStream {
    if matches!(
        f.kind,
        FieldKind::Int {
            enum_name: Some(_),
            ..
        } | FieldKind::Bits {
            enum_name: Some(_),
            ..
        }
    ) {
        // Enum values are traced by their schema name and stored integer.
        quote!(__r.leave(Some(&::statepack_runtime::io::TraceValue::Enum { name: __v.name(), value: __v.to_i() }));)
    } else if let FieldKind::Bits {
        width,
        offset_binary,
        ..
    } = &f.kind
    {
        bits::bits_leave(*width, *offset_binary)
    } else if let FieldKind::Contents(c) = &f.kind {
        // Fixed contents are traced with the bytes they matched.
        let b = Literal::byte_string(c);
        quote!(__r.leave(Some(#b));)
    } else if is_leaf {
        quote!(__r.leave(Some(&__v));)
    } else {
        quote!(__r.leave::<()>(None);)
    }
}

/// An argument `ts` (an expression value of type `want`) as the member type of a param of
/// that type: numbers widened, strings and bytes owned, user values and lists copied.
fn convert_arg(ts: TokenStream, want: &Ty) -> TokenStream {
    match want {
        Ty::Float => quote!(((#ts) as f64)),
        Ty::Str => quote!(::std::string::String::from(AsRef::<str>::as_ref(&#ts))),
        Ty::Bytes => quote!(AsRef::<[u8]>::as_ref(&#ts).to_vec()),
        Ty::User(_) => quote!((#ts).clone()),
        Ty::List(e) => match &**e {
            Ty::Int => {
                quote!((#ts).iter().map(|__x| (*__x) as i128).collect::<::std::vec::Vec<i128>>())
            }
            Ty::Float => {
                quote!((#ts).iter().map(|__x| (*__x) as f64).collect::<::std::vec::Vec<f64>>())
            }
            Ty::Bool | Ty::Enum(_) => quote!((#ts).iter().copied().collect::<::std::vec::Vec<_>>()),
            Ty::Str => {
                quote!((#ts).iter().map(|__x| ::std::string::String::from(AsRef::<str>::as_ref(__x))).collect::<::std::vec::Vec<_>>())
            }
            Ty::Bytes => {
                quote!((#ts).iter().map(|__x| AsRef::<[u8]>::as_ref(__x).to_vec()).collect::<::std::vec::Vec<_>>())
            }
            _ => quote!((#ts).to_vec()),
        },
        _ => ts,
    }
}

/// A list element given by `reference` (a `&T` expression) as an expression value of type
/// `elem`: numbers widened, conditions and enums copied, everything else borrowed.
fn elem_value(reference: TokenStream, elem: Ty) -> (TokenStream, Ty) {
    match elem {
        Ty::Int => (quote!((*#reference as i128)), Ty::Int),
        Ty::Float => (quote!((*#reference as f64)), Ty::Float),
        Ty::Bool | Ty::Enum(_) => (quote!((*#reference)), elem),
        other => (reference, other),
    }
}

fn bind_elem(ty: &Ty, reference: TokenStream) -> TokenStream {
    let el = temp("elem");
    match ty {
        Ty::Int | Ty::Float | Ty::Enum(_) | Ty::Bool => {
            quote! { let #el = *#reference; let _ = #el; }
        }
        _ => quote! { let #el = #reference; let _ = #el; },
    }
}

pub(crate) fn ty_name(t: &Ty) -> String {
    match t {
        Ty::Int => "an integer".into(),
        Ty::Float => "a float".into(),
        Ty::Bool => "a condition".into(),
        Ty::Str => "a string".into(),
        Ty::Bytes => "bytes".into(),
        Ty::Enum(e) => format!("a `{e}` value"),
        Ty::List(_) => "a list".into(),
        Ty::User(u) => format!("a `{u}`"),
        Ty::Switch(..) => "a switch value".into(),
        Ty::Opt(_) => "a conditional field".into(),
    }
}

/// The prefix of a field's hidden member of kept bytes: `tail` (terminator and padding),
/// `stored` (the bytes before `process`), or none.
fn hidden_prefix(f: &Field) -> Option<&'static str> {
    if f.term.is_some() {
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
        ::statepack_runtime::io::Term { terminator: #terminator, include: #include, consume: #consume, eos_error: #eos_error, pad_right: #pad, width: #width }
    }
}

/// A switch with `size`: its case is read in a substream.
fn switch_sized(f: &Field) -> bool {
    matches!(f.kind, FieldKind::Switch { size: Some(_), .. })
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
