//! Fixed runs: consecutive fields whose size is known at generation time, read and written
//! in one step.
//!
//! A run is a sequence of byte-aligned fields without conditions (numbers, closed or open
//! enums over numbers, fixed `contents`, fixed-count arrays of numbers), or one such field
//! with an `if`, or a sequence of big-endian bit fields without conditions. Per field, the
//! field-by-field code checks that its bytes are left, reads them, advances the reader and
//! tests a `Result`. A run instead
//!
//! - on read, takes the run's bytes from the reader at once ([`ByteReader::take_run`]; for
//!   bits, [`ByteReader::has_run_bits`]), decodes every field from that one array at
//!   constant offsets and checks the enum values and `contents`. When the bytes are not all
//!   there, a check fails (the bytes are given back first), or a tracer is recording the
//!   structure, it falls back to the field-by-field code, which reports the error with the
//!   exact field path and byte offset it always did (or traces every field);
//! - on write, encodes every field into one array at constant offsets and appends it once
//!   (for bits: checks every value against its width first, then appends them without
//!   further checks, or falls back to the field-by-field code that names the failing field).
//!
//! [`ByteReader::take_run`]: statepack_runtime::io::ByteReader::take_run
//! [`ByteReader::has_run_bits`]: statepack_runtime::io::ByteReader::has_run_bits

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
        enum_ty: Option<(Ident, bool)>,
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
                            crate::names::type_ident(e),
                            self.open_enums.contains(e) && !f.strict,
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
            (Repeat::Eos, FieldKind::User { name, size: None }) if f.term.is_none() => {
                self.min_len.get(name).copied().unwrap_or(0)
            }
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
/// kind; a conditional member is a run of its own.
fn runs(members: &[Member]) -> Vec<&[Member]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=members.len() {
        let split = i == members.len() || {
            let (a, b) = (&members[i - 1], &members[i]);
            b.stmt != a.stmt + 1
                || a.cond.is_some()
                || b.cond.is_some()
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

/// True when fusing `run` saves work: more than one bounds check (several fields, or an
/// array), and for bits more than one field.
fn worth_it(run: &[Member]) -> bool {
    match run {
        [] => false,
        [one] => matches!(one.unit, Unit::Bytes(ByteVal::Array(..)) | Unit::Varint),
        [first, ..] => match first.unit {
            Unit::Bytes(_) => true,
            Unit::Bits(_) => run.len() > 1,
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

/// The statements decoding member `m` at `off` into `m.id` inside the fast block, breaking
/// out of `'fast` when a check fails.
fn fast_read(m: &Member, v: &ByteVal, off: usize, fail: &TokenStream) -> TokenStream {
    let id = &m.id;
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
            enum_ty: Some((e, open)),
            ..
        } => {
            let raw = number_from(v, off);
            if *open {
                quote!(let #id = #e::from_i_open(#raw as i128);)
            } else {
                quote! {
                    let ::std::option::Option::Some(#id) = #e::from_i(#raw as i128) else { #fail };
                }
            }
        }
        ByteVal::Int { .. } | ByteVal::Float { .. } => {
            let raw = number_from(v, off);
            quote!(let #id = #raw;)
        }
        ByteVal::Array(n, e) => {
            let step = e.len();
            let items = (0..*n).map(|i| number_from(e, off + i * step));
            quote!(let #id = [#(#items),*];)
        }
    }
}

/// How a fused run falls back when its fast read does not apply or fails.
pub(super) struct RunFallback {
    /// When the fast read is tried (`T::SILENT`: never while a tracer records each field).
    pub guard: TokenStream,
    /// Statements run when the fast read fails, before the run's field-by-field code: empty
    /// (the run's fields are read one by one in place) or diverging (the whole value is read
    /// again from its start by the type's out-of-line reader).
    pub on_fail: TokenStream,
}

/// Replaces the statements of every worthwhile run in `reads` by one that reads the run in
/// one step where `fb.guard` holds, and keeps the field-by-field statements after it: the
/// tracer's path, and the path of a failed fast read unless `fb.on_fail` diverges. Returns
/// the number of runs fused.
pub(super) fn fuse_reads(reads: &mut [TokenStream], members: &[Member], fb: &RunFallback) -> usize {
    let mut fused = 0;
    for run in runs(members) {
        if !worth_it(run) {
            continue;
        }
        fused += 1;
        let first = run[0].stmt;
        let slow: Vec<TokenStream> = run
            .iter()
            .map(|m| std::mem::take(&mut reads[m.stmt]))
            .collect();
        let (names, _) = bound(run);
        let names = tuple(&names);
        let tail = quote!(#(#slow)* #names);
        reads[first] = match &run[0].unit {
            Unit::Bytes(_) => byte_run_read(run, &tail, fb),
            Unit::Bits(_) => bit_run_read(run, &tail, fb),
            Unit::Varint => {
                let id = &run[0].id;
                let RunFallback { guard, on_fail } = fb;
                quote! {
                    let #id: u64 = 'run: {
                        if #guard {
                            if let ::std::option::Option::Some(__v) = __r.take_varint() {
                                break 'run __v;
                            }
                            __io::unlikely();
                            #on_fail
                        }
                        #tail
                    };
                }
            }
        };
    }
    fused
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

fn byte_run_read(run: &[Member], tail: &TokenStream, fb: &RunFallback) -> TokenStream {
    let RunFallback { guard, on_fail } = fb;
    let total: usize = run
        .iter()
        .map(|m| match &m.unit {
            Unit::Bytes(v) => v.len(),
            _ => unreachable!("a byte run holds byte fields"),
        })
        .sum();
    let n = lit(total);
    // A check that fails gives the run's bytes back and reads field by field.
    let fail = quote!({ __r.rewind_run(#n); break 'fast; });
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
    let (names, tys) = bound(run);
    let (names, tys) = (tuple(&names), tuple(&tys));
    if let [m] = run {
        if let Some(c) = &m.cond {
            // One conditional field: the condition decides first, as field by field.
            let id = &m.id;
            return quote! {
                let #names: #tys = 'run: {
                    if #c {
                        if #guard {
                            'fast: {
                                let ::std::option::Option::Some(__b) = __r.take_run::<#n>() else { break 'fast; };
                                #(#body)*
                                #(#ats)*
                                break 'run Some(#id);
                            }
                            __io::unlikely();
                            #on_fail
                        }
                    } else {
                        break 'run None;
                    }
                    #tail
                };
            };
        }
    }
    // A run of many members leaves their types to their reads (a tuple type of that many
    // members is one long annotation).
    let ann = if run.len() > 8 {
        quote!()
    } else {
        quote!(: #tys)
    };
    quote! {
        let #names #ann = 'run: {
            if #guard {
                'fast: {
                    let ::std::option::Option::Some(__b) = __r.take_run::<#n>() else { break 'fast; };
                    #(#body)*
                    #(#ats)*
                    break 'run #names;
                }
                __io::unlikely();
                #on_fail
            }
            #tail
        };
    }
}

fn bit_read_value(b: &BitVal) -> TokenStream {
    let w = u32::from(b.width);
    let ty = super::bits::bits_rust_ty(b.width, b.offset_binary);
    match (b.width, b.offset_binary) {
        (1, false) => quote!(__r.take_run_bits_be(1) != 0),
        (_, false) => quote!(__r.take_run_bits_be(#w) as #ty),
        (_, true) => {
            quote!(::statepack_runtime::bits::from_offset_binary(__r.take_run_bits_be(#w), #w) as #ty)
        }
    }
}

fn bit_run_read(run: &[Member], tail: &TokenStream, fb: &RunFallback) -> TokenStream {
    let RunFallback { guard, on_fail } = fb;
    let mut total: u64 = 0;
    let mut body = Vec::new();
    for m in run {
        let Unit::Bits(b) = &m.unit else {
            unreachable!("a bit run holds bit fields")
        };
        total += u64::from(b.width);
        let id = &m.id;
        let at = m.at.as_ref().map(|at| quote!(let #at = __r.offset();));
        let v = bit_read_value(b);
        body.push(quote!(#at let #id = #v;));
    }
    let (names, tys) = bound(run);
    let (names, tys) = (tuple(&names), tuple(&tys));
    quote! {
        let #names: #tys = 'run: {
            if #guard {
                if __r.has_run_bits(#total) {
                    #(#body)*
                    break 'run #names;
                }
                __io::unlikely();
                #on_fail
            }
            #tail
        };
    }
}

/// Replaces the statements of every worthwhile run in `writes` by one that writes the run
/// in one step, keeping the field-by-field statements as the fallback of bit runs.
pub(super) fn fuse_writes(writes: &mut [TokenStream], members: &[Member]) {
    for run in runs(members) {
        if !worth_it(run) {
            continue;
        }
        // A run that may fail on write (an open enum's value may not fit) stays as it is.
        let fallible = run.iter().any(|m| {
            matches!(
                &m.unit,
                Unit::Bytes(ByteVal::Int {
                    enum_ty: Some((_, true)),
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
