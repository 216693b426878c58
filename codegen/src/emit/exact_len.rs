//! `encoded_len` of a type with bit fields, computed from the values without encoding.
//!
//! A running bit count follows what the writer does, field by field, in `seq` order:
//!
//! - a bit field adds its width (once, or once per element of a list; nothing when its `if`
//!   leaves it absent); a `-sp-varint: leb128` field over `b8` groups adds 8 bits per group
//!   ([`leb128_len`](statepack_runtime::bits::leb128_len) groups);
//! - any other field (number, bytes, string, `contents`, a user type that always fills whole
//!   bytes) first rounds the count up to a byte, as the writer pads an unfinished byte there,
//!   then adds 8 bits per byte of its length (the same length the byte-level `encoded_len`
//!   adds);
//! - at the end the count is rounded up to a byte, as the writer completes its last byte.
//!
//! So the length is exact: equal to the bytes `write_to` writes, for every value that
//! `write_to` accepts, and for a value it refuses (a bit field out of its range) the length
//! the value would take, so a size check before writing lets the writer report the field.
//!
//! Where the length cannot be known without writing, the type keeps measuring itself by
//! writing into a scratch writer ([`Exact::Fallback`]): a switch field (its case may be a
//! bit type that starts or ends inside a byte), a user type that may end inside a byte
//! (Kaitai's rules, a type from another schema or an opaque type), a bit field whose value is
//! derived at write time but sits under a condition or in a list, and a root type with
//! positional instances. For those, the size checks of enclosing types write the value once
//! more when the sizes disagree, so that the writer's own error is what the caller sees
//! ([`probe_on_mismatch`]).

use crate::ir::{Field, FieldKind, Repeat, Schema, TypeId};
use proc_macro2::{Ident, TokenStream};
use quote::quote;
use std::collections::HashSet;

/// The `encoded_len` body of one type, built field by field.
pub(super) enum Exact {
    /// Statements updating `__bits` (a `usize` count of bits written so far), and the
    /// widths of plain bit fields since the last statement, added as one constant.
    Steps(Vec<TokenStream>, usize),
    /// The length cannot be computed without writing; the reason is kept for the comment.
    Fallback(&'static str),
}

impl Exact {
    /// An empty type: no bits yet.
    pub(super) fn new() -> Self {
        Exact::Steps(Vec::new(), 0)
    }

    fn push(&mut self, step: TokenStream) {
        if let Exact::Steps(s, pending) = self {
            if *pending > 0 {
                let n = *pending;
                s.push(quote! { __bits += #n; });
                *pending = 0;
            }
            s.push(step);
        }
    }

    /// A bit field of a fixed width that is always present.
    fn constant(&mut self, bits: usize) {
        if let Exact::Steps(_, pending) = self {
            *pending += bits;
        }
    }

    /// Gives up on exact computation for `why`.
    pub(super) fn fallback(&mut self, why: &'static str) {
        if let Exact::Steps(..) = self {
            *self = Exact::Fallback(why);
        }
    }

    /// A byte-aligned stretch of `bytes` (a `usize` expression), after the writer pads to
    /// the next byte.
    pub(super) fn aligned_bytes(&mut self, bytes: TokenStream) {
        let bits =
            match syn::parse2::<syn::LitInt>(bytes.clone()).map(|n| n.base10_parse::<usize>()) {
                Ok(Ok(n)) => {
                    let b = proc_macro2::Literal::usize_unsuffixed(8 * n);
                    quote!(#b)
                }
                _ => {
                    let bytes = super::group(bytes.clone());
                    quote!(8 * #bytes)
                }
            };
        self.push(quote! { __bits = __bits.div_ceil(8) * 8 + #bits; });
    }

    /// One field of the `seq` (not positional), with `bytes`, the byte-level length
    /// expression of the field when it has one (conditions and lists handled in it).
    pub(super) fn field(
        &mut self,
        s: &Schema,
        whole_types: &HashSet<TypeId>,
        f: &Field,
        id: &Ident,
        derived: bool,
        bytes: Option<&TokenStream>,
    ) {
        match &f.kind {
            FieldKind::Bits { width, .. } => {
                let w = usize::from(*width);
                if f.varint {
                    // `bytes` is the number of LEB128 groups; each group is 8 bits here.
                    match bytes {
                        Some(b) => {
                            let b = super::group(b.clone());
                            self.push(quote! { __bits += 8 * #b; })
                        }
                        None => self.fallback("a derived varint bit field"),
                    }
                    return;
                }
                if derived {
                    // The value is computed while writing; only a plain field has a fixed
                    // width without it.
                    if f.cond.is_none() && matches!(f.repeat, Repeat::None) {
                        self.constant(w);
                    } else {
                        self.fallback("a derived bit field under a condition or in a list");
                    }
                    return;
                }
                if f.cond.is_none() && matches!(f.repeat, Repeat::None) {
                    self.constant(w);
                    return;
                }
                let one = match f.repeat {
                    Repeat::None => quote!(#w),
                    _ if w == 1 => quote!(__val.len()),
                    _ => quote!(__val.len() * #w),
                };
                let step = match &f.cond {
                    Some(_) => quote! { __bits += self.#id.as_ref().map_or(0, |__val| #one); },
                    None => quote! { __bits += { let __val = &self.#id; #one }; },
                };
                self.push(step);
            }
            FieldKind::Switch { .. } => {
                self.fallback("a switch field (its case may start or end inside a byte)")
            }
            FieldKind::User { ty: name, .. }
                if !(s.strict || name.id().is_some_and(|i| whole_types.contains(&i))) =>
            {
                self.fallback("a user type that may end inside a byte")
            }
            _ => match bytes {
                Some(b) => self.aligned_bytes(b.clone()),
                None => self.fallback("a field without a byte-level length"),
            },
        }
    }

    /// The body of `encoded_len` (the exact computation, or the writing fallback) and a
    /// doc line saying which it is.
    pub(super) fn body(self) -> (TokenStream, TokenStream) {
        match self {
            Exact::Steps(mut steps, pending) => (
                quote!(#[doc = " Computed from the values without writing (bit widths, conditions, list and varint lengths), rounded up to a byte as the writer does."]),
                {
                    if pending > 0 {
                        steps.push(quote! { __bits += #pending; });
                    }
                    quote! {
                        let mut __bits: usize = 0;
                        #(#steps)*
                        __bits.div_ceil(8)
                    }
                },
            ),
            Exact::Fallback(why) => fallback_body(why),
        }
    }
}

/// Measures a value by writing it into a scratch writer (the fallback). A value that the
/// writer refuses measures what was written before the error; size checks that use this
/// length write the value again on a mismatch and report the writer's error
/// ([`probe_on_mismatch`]).
pub(super) fn fallback_body(why: &str) -> (TokenStream, TokenStream) {
    let note = format!(
        " Measured by writing into a scratch writer: not computable without writing ({why})."
    );
    (
        quote!(#[doc = #note]),
        quote! {
            let mut __w = __io::ByteWriter::new();
            let _ = self.write_to(&mut __w);
            __w.len()
        },
    )
}

/// The statement a size check runs when the value's `encoded_len` is not the size the
/// schema gives: for a user-type value `__v`, it writes `__v` into a scratch writer first,
/// so that a value the writer refuses reports the writer's error (naming the field) rather
/// than a size mismatch. (A switch's cases are written by the enclosing type, whose own
/// writer reports them.)
pub(super) fn probe_on_mismatch(kind: &FieldKind) -> TokenStream {
    match kind {
        FieldKind::User { .. } => quote! {
            {
                let mut __probe = __io::ByteWriter::new();
                __v.write_to(&mut __probe)?;
            }
        },
        _ => quote!(),
    }
}
