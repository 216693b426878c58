//! Fixed runs: consecutive fields whose size is known at generation time, read and written
//! in one step.
//!
//! A run is a sequence of byte-aligned fields without conditions (numbers, closed or open
//! enums over numbers, fixed `contents`, fixed-count arrays of numbers), or one such field
//! with an `if`, or a sequence of big-endian bit fields without conditions. Per field, the
//! field-by-field code checks that its bytes are left, reads them, advances the reader and
//! tests a `Result`. A run instead
//!
//! - on read, takes the run's bytes from the reader at once ([`ByteReader::run`]; for
//!   bits, [`ByteReader::bit_run_cursor`], whose cursor holds the run's position in locals
//!   until [`ByteReader::bit_run_done`]), decodes every field from that one array at
//!   constant offsets and checks the enum values and `contents`. The run's layout is written once
//!   as code: beside it, the run's table (a constant of `RunField`s: each field's name and
//!   kind) lets the runtime read the run field by field when the bytes are not all there
//!   or a tracer records the structure, and, when a check fails, read it again
//!   ([`ByteReader::run_fault`]) to report the error with the exact field path and byte
//!   offset that field-by-field code reports;
//! - on write, encodes every field into one array at constant offsets and appends it once
//!   (for bits: checks every value against its width first, then appends them without
//!   further checks, or falls back to the field-by-field code that names the failing field).
//!
//! [`ByteReader::run`]: statepack_runtime::io::ByteReader::run
//! [`ByteReader::bit_run_cursor`]: statepack_runtime::io::ByteReader::bit_run_cursor
//! [`ByteReader::bit_run_done`]: statepack_runtime::io::ByteReader::bit_run_done
//! [`ByteReader::run_fault`]: statepack_runtime::io::ByteReader::run_fault

use super::{group, int_ty, Emitter};
use crate::ir::*;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::quote;

/// What one field of a byte run holds.
#[derive(Debug, Clone)]
pub(super) enum ByteVal {
    /// An integer of `bytes` bytes; with an enum (`open`: unknown values are kept).
    Int {
        bytes: u8,
        signed: bool,
        endian: Endian,
        enum_ty: Option<(Ident, bool, String)>,
    },
    /// An `f4` / `f8`.
    Float { bytes: u8, endian: Endian },
    /// Fixed contents.
    Contents(Vec<u8>),
    /// `n` numbers (a fixed-count array).
    Array(usize, Box<ByteVal>),
}

impl ByteVal {
    fn len(&self) -> usize {
        match self {
            ByteVal::Int { bytes, .. } | ByteVal::Float { bytes, .. } => *bytes as usize,
            ByteVal::Contents(c) => c.len(),
            ByteVal::Array(n, e) => n * e.len(),
        }
    }
}

/// A bit field of a bit run (big-endian bits, no enum).
#[derive(Debug, Clone, Copy)]
pub(super) struct BitVal {
    pub width: u8,
    pub offset_binary: bool,
}

/// The unit of a run member.
#[derive(Debug, Clone)]
pub(super) enum Unit {
    Bytes(ByteVal),
    Bits(BitVal),
    /// A byte-aligned `-sp-varint: leb128` field without a condition: a run of its own,
    /// decoded in one loop over the bytes left ([`ByteReader::take_varint`]).
    ///
    /// [`ByteReader::take_varint`]: statepack_runtime::io::ByteReader::take_varint
    Varint,
}

/// One field that can be part of a run, noted while its field-by-field code is emitted.
#[derive(Debug, Clone)]
pub(super) struct Member {
    /// The field's name in the schema (`dt_ms`), as its errors and traces name it.
    pub name: String,
    /// Index of the field's statement in the reader's (or writer's) statement list.
    pub stmt: usize,
    /// The local the reader binds (`kind`).
    pub id: Ident,
    /// Its Rust type (without the `Option` of a condition).
    pub ty: TokenStream,
    /// The local holding the field's start offset, when code after the read needs it.
    pub at: Option<Ident>,
    /// The value written: `self.kind` or a derived local.
    pub src: TokenStream,
    pub unit: Unit,
    /// The `if` condition, already in Rust (read side or write side); a conditional field
    /// is a run of its own.
    pub cond: Option<TokenStream>,
    /// On the write side, the field's name and its condition's text, the arguments of
    /// `present` after the value and whether the condition holds.
    pub presence: TokenStream,
}

impl Member {
    /// The byte value of a member of a byte run.
    fn unit_bytes(&self) -> ByteVal {
        match &self.unit {
            Unit::Bytes(v) => v.clone(),
            _ => unreachable!("a byte run holds byte fields"),
        }
    }
}

impl Emitter<'_> {
    /// The run unit of `f` if it can be part of a fixed run: a number, enum, `contents` or
    /// fixed-count array of numbers, or a big-endian bit field of at most 32 bits, read and
    /// written without hidden state (no `valid`, `process`, terminator, position, varint or
    /// recursion). Byte fields read and write whole bytes whatever the bit state (an
    /// alignment the schema needs is a statement of its own, which ends a run).
    pub(super) fn run_unit(&self, f: &Field) -> Option<Unit> {
        if f.varint
            && f.at.is_none()
            && f.cond.is_none()
            && f.valid.is_none()
            && matches!(f.kind, FieldKind::Int { bytes: 1, .. })
        {
            return Some(Unit::Varint);
        }
        if f.at.is_some()
            || f.varint
            || f.process.is_some()
            || f.term.is_some()
            || f.valid.is_some()
            || !f.recursive.is_empty()
        {
            return None;
        }
        let scalar = |k: &FieldKind| -> Option<ByteVal> {
            match k {
                // A byte order decided while reading (`meta.endian` switch) stays field by
                // field.
                FieldKind::Int {
                    endian: Endian::Computed,
                    ..
                }
                | FieldKind::Float {
                    endian: Endian::Computed,
                    ..
                } => None,
                FieldKind::Int {
                    bytes,
                    signed,
                    endian,
                    enum_name,
                } => Some(ByteVal::Int {
                    bytes: *bytes,
                    signed: *signed,
                    endian: *endian,
                    enum_ty: enum_name.as_ref().map(|e| {
                        (
                            crate::names::type_ident(self.s.enum_name(e)),
                            self.is_open(e) && !f.strict,
                            self.s.enum_name(e).to_owned(),
                        )
                    }),
                }),
                FieldKind::Float { bytes, endian } => Some(ByteVal::Float {
                    bytes: *bytes,
                    endian: *endian,
                }),
                _ => None,
            }
        };
        match (&f.kind, &f.repeat) {
            (
                FieldKind::Bits {
                    width,
                    offset_binary,
                    le: false,
                    enum_name: None,
                },
                Repeat::None,
            ) if *width <= 32 => Some(Unit::Bits(BitVal {
                width: *width,
                offset_binary: *offset_binary,
            })),
            (FieldKind::Contents(c), Repeat::None) if !c.is_empty() => {
                Some(Unit::Bytes(ByteVal::Contents(c.clone())))
            }
            (k, Repeat::None) => scalar(k).map(Unit::Bytes),
            (k, Repeat::Expr(_)) => {
                let n = Self::array_len(f)?;
                Some(Unit::Bytes(ByteVal::Array(n, Box::new(scalar(k)?))))
            }
            _ => None,
        }
    }
}

impl Emitter<'_> {
    /// The empty list a `repeat: eos` or `repeat-until` reader starts from. For `eos` over
    /// byte-aligned elements of at least one byte (user types with a non-zero `MIN_LEN`,
    /// numbers), room for as many elements as the bytes left can hold: the most the list
    /// can get, so it is allocated once instead of growing by doubling, and never more than
    /// a `repeat-expr` count checked against the same bytes would allocate.
    pub(super) fn open_list(&self, f: &Field) -> TokenStream {
        let min = match (&f.repeat, &f.kind) {
            (
                Repeat::Eos,
                FieldKind::User {
                    ty: name,
                    size: None,
                },
            ) if f.term.is_none() => name
                .id()
                .and_then(|i| self.min_len.get(&i).copied())
                .unwrap_or(0),
            (Repeat::Eos, FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. }) => {
                *bytes as usize
            }
            _ => 0,
        };
        if min == 0 {
            return quote!(::std::vec::Vec::new());
        }
        if min == 1 {
            return quote!(::std::vec::Vec::with_capacity(__r.remaining()));
        }
        let m = lit(min);
        quote!(::std::vec::Vec::with_capacity(__r.remaining() / #m))
    }
}

/// Groups `members` (in statement order) into runs of consecutive statements of the same
/// kind. On the write side (`same_cond` false) a conditional member is a run of its own; on
/// the read side consecutive members under the same condition make one run, read when the
/// condition holds (unless the condition reads the reader's state, which each field moves).
fn runs(members: &[Member], same_cond: bool) -> Vec<&[Member]> {
    let cond_text = |m: &Member| m.cond.as_ref().map(ToString::to_string);
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=members.len() {
        let split = i == members.len() || {
            let (a, b) = (&members[i - 1], &members[i]);
            // A condition that reads the reader's state (`_io.pos`, `_io.eof`) may change
            // from one field to the next: such fields stay runs of their own.
            let reads_io = |m: &Member| {
                m.cond
                    .as_ref()
                    .is_some_and(|c| c.clone().into_iter().any(|t| mentions_reader(&t)))
            };
            let conds_split = if same_cond {
                cond_text(a) != cond_text(b) || reads_io(a)
            } else {
                a.cond.is_some() || b.cond.is_some()
            };
            b.stmt != a.stmt + 1
                || conds_split
                || std::mem::discriminant(&a.unit) != std::mem::discriminant(&b.unit)
                || matches!(a.unit, Unit::Varint)
        };
        if split {
            out.push(&members[start..i]);
            start = i;
        }
    }
    out
}

/// True when the token `t` is or holds the reader `__r`.
fn mentions_reader(t: &proc_macro2::TokenTree) -> bool {
    match t {
        proc_macro2::TokenTree::Ident(i) => i == "__r",
        proc_macro2::TokenTree::Group(g) => g.stream().into_iter().any(|t| mentions_reader(&t)),
        _ => false,
    }
}

/// True when fusing `run` saves work or code: more than one bounds check (several fields,
/// or an array), for bits more than one field or, on the read side (`read`), one under a
/// condition (read from the run's table rather than written out field by field).
fn worth_it(run: &[Member], read: bool) -> bool {
    match run {
        [] => false,
        [one] => match one.unit {
            Unit::Bytes(ByteVal::Array(..)) | Unit::Varint => true,
            Unit::Bits(_) => read && one.cond.is_some(),
            Unit::Bytes(_) => false,
        },
        [first, ..] => match first.unit {
            Unit::Bytes(_) | Unit::Bits(_) => true,
            Unit::Varint => false,
        },
    }
}

fn lit(n: usize) -> Literal {
    Literal::usize_unsuffixed(n)
}

/// The expression decoding one number at `off` of the run array `__b`.
fn number_from(v: &ByteVal, off: usize) -> TokenStream {
    let (bytes, ty, endian) = match v {
        ByteVal::Int {
            bytes,
            signed,
            endian,
            ..
        } => (*bytes, int_ty(*bytes, *signed), *endian),
        ByteVal::Float { bytes: 4, endian } => (4, quote!(f32), *endian),
        ByteVal::Float { bytes, endian } => (*bytes, quote!(f64), *endian),
        _ => unreachable!("only numbers are decoded by number_from"),
    };
    let idx = (off..off + bytes as usize).map(lit);
    let from = if endian == Endian::Le {
        quote!(from_le_bytes)
    } else {
        quote!(from_be_bytes)
    };
    quote!(#ty::#from([#(__b[#idx]),*]))
}

/// The statements decoding member `m` at `off` of the run array `__b` into `m.id`;
/// `fail` returns the run's error (a value that fails its check).
fn fast_read(m: &Member, v: &ByteVal, off: usize, fail: &TokenStream) -> TokenStream {
    let id = &m.id;
    if let Some(value) = plain_value(v, off) {
        return quote!(let #id = #value;);
    }
    match v {
        ByteVal::Contents(c) => {
            let end = lit(off + c.len());
            let o = lit(off);
            let b = Literal::byte_string(c);
            quote! {
                if __b[#o..#end] != #b[..] { #fail }
                let #id = ();
            }
        }
        ByteVal::Int {
            enum_ty: Some((e, _, _)),
            ..
        } => {
            let raw = number_from(v, off);
            quote! {
                let ::std::option::Option::Some(#id) = #e::from_i(#raw as i128) else { #fail };
            }
        }
        _ => unreachable!("numbers and arrays are plain values"),
    }
}

/// The expression of a value at `off` of `__b` that needs no check: a number, an open
/// enum, an array of numbers. `None` for a closed enum or `contents`.
fn plain_value(v: &ByteVal, off: usize) -> Option<TokenStream> {
    Some(match v {
        ByteVal::Contents(_)
        | ByteVal::Int {
            enum_ty: Some((_, false, _)),
            ..
        } => return None,
        ByteVal::Int {
            enum_ty: Some((e, true, _)),
            ..
        } => {
            let raw = number_from(v, off);
            quote!(#e::from_i_open(#raw as i128))
        }
        ByteVal::Int { .. } | ByteVal::Float { .. } => number_from(v, off),
        ByteVal::Array(n, e) => {
            let step = e.len();
            let items = (0..*n).map(|i| number_from(e, off + i * step));
            quote!([#(#items),*])
        }
    })
}

/// The entry of a byte field `name` of kind `v` in its run's table
/// (`statepack_runtime::io::RunField`): what the field-by-field reading of the run needs.
fn table_entry(name: &str, v: &ByteVal) -> TokenStream {
    match v {
        ByteVal::Int {
            bytes,
            signed,
            endian,
            enum_ty,
        } => {
            let be = *endian == Endian::Be;
            let b = Literal::u8_unsuffixed(*bytes);
            match enum_ty {
                None => quote!(__io::RunField::int(#name, #b, #signed, #be)),
                Some((e, open, ename)) => quote! {
                    __io::RunField::enumerated(#name, (#b, #signed, #be), #ename, |__v| #e::from_i(__v).map(#e::name), #open)
                },
            }
        }
        ByteVal::Float { bytes, endian } => {
            let be = *endian == Endian::Be;
            let b = Literal::u8_unsuffixed(*bytes);
            quote!(__io::RunField::float(#name, #b, #be))
        }
        ByteVal::Contents(c) => {
            let b = Literal::byte_string(c);
            quote!(__io::RunField::contents(#name, #b))
        }
        ByteVal::Array(n, e) => {
            let one = table_entry(name, e);
            let n = lit(*n);
            quote!(#one.times(#n))
        }
    }
}

/// The table of `run` (one entry per member), as the constant `__RUN`.
fn table(run: &[Member]) -> TokenStream {
    let entries = run.iter().map(|m| match &m.unit {
        Unit::Bytes(v) => table_entry(&m.name, v),
        Unit::Bits(b) => {
            let name = &m.name;
            let w = Literal::u8_unsuffixed(b.width);
            let ob = b.offset_binary;
            quote!(__io::RunField::bits(#name, #w, #ob))
        }
        Unit::Varint => unreachable!("a varint is not read from a table"),
    });
    quote!(const __RUN: &[__io::RunField] = &[#(#entries),*];)
}

/// Replaces the statements of every worthwhile run in `reads` by one that reads the run in
/// one step: a byte run takes its bytes with `ByteReader::run`, a bit run checks its bits
/// with `ByteReader::bit_run_cursor` and reads them from its cursor, both given the run's
/// table, which read the run field by field out of line (for a tracer, or to report the
/// failing field), so the field-by-field statements are dropped; a byte-aligned varint
/// likewise reads in one loop or group by group through `ByteReader::varint`.
pub(super) fn fuse_reads(reads: &mut [TokenStream], members: &[Member]) {
    for run in runs(members, true) {
        if !worth_it(run, true) {
            continue;
        }
        let first = run[0].stmt;
        for m in run {
            reads[m.stmt] = TokenStream::new();
        }
        reads[first] = match &run[0].unit {
            Unit::Bytes(_) => byte_run_read(run),
            Unit::Bits(_) => bit_run_read(run),
            Unit::Varint => {
                let id = &run[0].id;
                let name = &run[0].name;
                quote!(let #id: u64 = __r.varint(#name)?;)
            }
        };
    }
}

/// `(a, b)` for several items, `a` for one (no parentheses a lint would flag).
fn tuple(items: &[TokenStream]) -> TokenStream {
    match items {
        [one] => one.clone(),
        _ => quote!((#(#items),*)),
    }
}

/// The names a run binds (values, then kept offsets) and their types.
fn bound(run: &[Member]) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let mut names = Vec::new();
    let mut tys = Vec::new();
    for m in run {
        let id = &m.id;
        let ty = &m.ty;
        names.push(quote!(#id));
        tys.push(match &m.cond {
            Some(_) => quote!(::std::option::Option<#ty>),
            None => ty.clone(),
        });
        if let Some(at) = &m.at {
            names.push(quote!(#at));
            tys.push(quote!(u64));
        }
    }
    (names, tys)
}

fn byte_run_read(run: &[Member]) -> TokenStream {
    let total: usize = run
        .iter()
        .map(|m| match &m.unit {
            Unit::Bytes(v) => v.len(),
            _ => unreachable!("a byte run holds byte fields"),
        })
        .sum();
    let n = lit(total);
    // A check that fails reads the run again field by field for its error.
    let fail = quote!(return Err(__r.run_fault(#n, __RUN)););
    let mut off = 0;
    let mut body = Vec::new();
    let mut ats = Vec::new();
    for m in run {
        let Unit::Bytes(v) = &m.unit else {
            unreachable!("a byte run holds byte fields")
        };
        body.push(fast_read(m, v, off, &fail));
        if let Some(at) = &m.at {
            let back = lit(total - off);
            ats.push(quote!(let #at = __r.offset() - #back;));
        }
        off += v.len();
    }
    let table = table(run);
    let (names, tys) = bound(run);
    let (names, tys) = (tuple(&names), tuple(&tys));
    let take = quote! {
        #table
        let __b = __r.run::<#n>(__RUN)?;
    };
    if let [m @ Member { at: None, .. }] = run {
        // One value without a check: the block's value (no binding returned at once).
        if let Some(value) = plain_value(&m.unit_bytes(), 0) {
            let value = match &m.cond {
                Some(_) => quote!(Some(#value)),
                None => value,
            };
            let read = quote!({ #take #value });
            return match &m.cond {
                Some(c) => quote!(let #names: #tys = if #c #read else { None };),
                None => quote!(let #names: #tys = #read;),
            };
        }
    }
    let read = quote! {
        #take
        #(#body)*
        #(#ats)*
    };
    bind_run(run, read)
}

/// The statement binding the members of `run` (and their kept offsets) from `read`, the
/// statements that bind each: under the run's condition, if it has one, each member an
/// `Option` (the condition decides first, as field by field).
fn bind_run(run: &[Member], read: TokenStream) -> TokenStream {
    let (names, tys) = bound(run);
    let (names, tys) = (tuple(&names), tuple(&tys));
    // A run of many members leaves their types to their reads (a tuple type of that many
    // members is one long annotation).
    let ann = if run.len() > 8 {
        quote!()
    } else {
        quote!(: #tys)
    };
    match &run[0].cond {
        Some(c) => {
            let somes: Vec<TokenStream> = run
                .iter()
                .map(|m| {
                    let id = &m.id;
                    quote!(Some(#id))
                })
                .collect();
            let nones: Vec<TokenStream> = run.iter().map(|_| quote!(None)).collect();
            let (somes, nones) = (tuple(&somes), tuple(&nones));
            quote!(let #names #ann = if #c { #read #somes } else { #nones };)
        }
        None => quote!(let #names #ann = { #read #names };),
    }
}

fn bit_read_value(b: &BitVal) -> TokenStream {
    let w = u32::from(b.width);
    let ty = super::bits::bits_rust_ty(b.width, b.offset_binary);
    match (b.width, b.offset_binary) {
        (1, false) => quote!(__c.take(1) != 0),
        (_, false) => quote!(__c.take(#w) as #ty),
        (_, true) => {
            quote!(::statepack_runtime::bits::from_offset_binary(__c.take(#w), #w) as #ty)
        }
    }
}

fn bit_run_read(run: &[Member]) -> TokenStream {
    let mut total: u64 = 0;
    let mut body = Vec::new();
    for m in run {
        let Unit::Bits(b) = &m.unit else {
            unreachable!("a bit run holds bit fields")
        };
        total += u64::from(b.width);
        let id = &m.id;
        let at = m.at.as_ref().map(|at| quote!(let #at = __c.offset();));
        let v = bit_read_value(b);
        body.push(quote!(#at let #id = #v;));
    }
    let table = table(run);
    bind_run(
        run,
        quote! {
            #table
            let mut __c = __r.bit_run_cursor(#total, __RUN)?;
            #(#body)*
            __r.bit_run_done(__c);
        },
    )
}

/// Replaces the statements of every worthwhile run in `writes` by one that writes the run
/// in one step, keeping the field-by-field statements as the fallback of bit runs.
pub(super) fn fuse_writes(writes: &mut [TokenStream], members: &[Member]) {
    for run in runs(members, false) {
        if !worth_it(run, false) {
            continue;
        }
        // A run that may fail on write (an open enum's value may not fit) stays as it is.
        let fallible = run.iter().any(|m| {
            matches!(
                &m.unit,
                Unit::Bytes(ByteVal::Int {
                    enum_ty: Some((_, true, _)),
                    ..
                })
            )
        });
        if fallible {
            continue;
        }
        let first = run[0].stmt;
        let slow: Vec<TokenStream> = run
            .iter()
            .map(|m| std::mem::take(&mut writes[m.stmt]))
            .collect();
        writes[first] = match &run[0].unit {
            Unit::Bytes(_) => byte_run_write(run),
            Unit::Bits(_) => bit_run_write(run, &slow),
            Unit::Varint => {
                // The same groups as one byte each, appended at once.
                let src = &run[0].src;
                quote!(__w.write_varint(#src);)
            }
        };
    }
}

/// The bytes of one number `value` (an expression of its Rust type) at `off` of `__b`.
fn number_into(v: &ByteVal, value: TokenStream, off: usize) -> TokenStream {
    let (bytes, endian) = match v {
        ByteVal::Int { bytes, endian, .. } | ByteVal::Float { bytes, endian } => (*bytes, *endian),
        _ => unreachable!("only numbers are encoded by number_into"),
    };
    let to = if endian == Endian::Le {
        quote!(to_le_bytes)
    } else {
        quote!(to_be_bytes)
    };
    let o = lit(off);
    let end = lit(off + bytes as usize);
    let value = group(value);
    quote!(__b[#o..#end].copy_from_slice(&#value.#to());)
}

fn byte_run_write(run: &[Member]) -> TokenStream {
    let cond = match run {
        [m] => m.cond.as_ref(),
        _ => None,
    };
    let mut off = 0;
    let mut body = Vec::new();
    for m in run {
        let Unit::Bytes(v) = &m.unit else {
            unreachable!("a byte run holds byte fields")
        };
        // A conditional field is written from the value its `Option` holds.
        let src = match cond {
            Some(_) => group(quote!(*__val)),
            None => m.src.clone(),
        };
        body.push(match v {
            ByteVal::Contents(c) => {
                let o = lit(off);
                let end = lit(off + c.len());
                let b = Literal::byte_string(c);
                quote!(__b[#o..#end].copy_from_slice(#b);)
            }
            ByteVal::Int {
                bytes,
                signed,
                enum_ty: Some(_),
                ..
            } => {
                let ty = int_ty(*bytes, *signed);
                number_into(v, quote!(#src.to_i() as #ty), off)
            }
            ByteVal::Int { .. } | ByteVal::Float { .. } => number_into(v, quote!(#src), off),
            ByteVal::Array(n, e) => {
                let step = e.len();
                let items = (0..*n).map(|i| {
                    let i_lit = lit(i);
                    number_into(e, quote!(#src[#i_lit]), off + i * step)
                });
                quote!(#(#items)*)
            }
        });
        off += v.len();
    }
    let n = lit(off);
    let write = quote! {
        let mut __b = [0u8; #n];
        #(#body)*
        __w.write_bytes(&__b);
    };
    match (cond, run) {
        (Some(c), [m]) => {
            // Present where the condition holds: written in one step; absent where it does
            // not; a presence that does not match is refused as field by field.
            let src = &m.src;
            let presence = &m.presence;
            quote! {
                if let ::std::option::Option::Some(__val) = __io::present(&#src, #c, #presence)? {
                    #write
                }
            }
        }
        _ => quote!({ #write }),
    }
}

fn bit_run_write(run: &[Member], slow: &[TokenStream]) -> TokenStream {
    let mut checks = Vec::new();
    let mut puts = Vec::new();
    for (i, m) in run.iter().enumerate() {
        let Unit::Bits(b) = &m.unit else {
            unreachable!("a bit run holds bit fields")
        };
        let src = &m.src;
        let w = u32::from(b.width);
        let code = quote::format_ident!("__c{}", i);
        match (b.width, b.offset_binary) {
            (1, false) => puts.push(quote!(__w.bit_run_put(&mut __run, u64::from(#src), 1);)),
            (_, false) => {
                checks.push(quote!(let #code = #src as u64; if #code >> #w != 0 { break 'fast; }));
                puts.push(quote!(__w.bit_run_put(&mut __run, #code, #w);));
            }
            (_, true) => {
                checks.push(quote! {
                    let ::std::result::Result::Ok(#code) = ::statepack_runtime::bits::to_offset_binary(#src as i64, #w) else { break 'fast; };
                });
                puts.push(quote!(__w.bit_run_put(&mut __run, #code, #w);));
            }
        }
    }
    // Every value checked: the run is appended through a local accumulator of its pending
    // bits, one straight-line step per field.
    let put = quote! {
        let mut __run = __w.begin_bit_run();
        #(#puts)*
        __w.end_bit_run(__run);
    };
    if checks.is_empty() {
        // Only one-bit flags: every value fits, nothing can fail.
        let _ = slow;
        return quote!({ #put });
    }
    quote! {
        'run: {
            'fast: {
                #(#checks)*
                #put
                break 'run;
            }
            __io::unlikely();
                        #(#slow)*
        }
    }
}
