//! The code of bit-level fields: bit fields of either bit order, offset binary and LEB128
//! varints (see `crate::bits` for their layout rules).

use crate::ir::{Field, FieldKind};
use proc_macro2::TokenStream;
use quote::quote;

/// The Rust type of one element of a bit field.
pub(crate) fn bits_rust_ty(width: u8, offset_binary: bool) -> TokenStream {
    match (width, offset_binary) {
        (1, false) => quote!(bool),
        (2..=8, false) => quote!(u8),
        (9..=16, false) => quote!(u16),
        (17..=32, false) => quote!(u32),
        (_, false) => quote!(u64),
        (..=8, true) => quote!(i8),
        (9..=16, true) => quote!(i16),
        (17..=32, true) => quote!(i32),
        (_, true) => quote!(i64),
    }
}

/// Reads one element of a bit field (an expression giving `Result<T, DecodeError>`).
pub(crate) fn bits_read(width: u8, offset_binary: bool, le: bool) -> TokenStream {
    let w = u32::from(width);
    let ty = bits_rust_ty(width, offset_binary);
    let m = if le {
        quote!(read_bits_le)
    } else {
        quote!(read_bits_be)
    };
    match (width, offset_binary) {
        (1, false) => quote!(__r.#m(1).map(|__b| __b != 0)),
        // The reader's `u64` is the field's type.
        (33.., false) => quote!(__r.#m(#w)),
        (_, false) => quote!(__r.#m(#w).map(|__b| __b as #ty)),
        (_, true) => {
            quote!(__r.#m(#w).map(|__b| ::statepack_runtime::bits::from_offset_binary(__b, #w) as #ty))
        }
    }
}

/// Writes one element `__v: &T` of a bit field (a statement-like expression with `?`).
pub(crate) fn bits_write(width: u8, offset_binary: bool, le: bool) -> TokenStream {
    let w = u32::from(width);
    let m = if le {
        quote!(write_bits_le)
    } else {
        quote!(write_bits_be)
    };
    match (width, offset_binary) {
        (1, false) => quote!(__w.#m(u64::from(*__v), 1)?),
        (33.., false) => quote!(__w.#m(*__v, #w)?),
        (_, false) => quote!(__w.#m(u64::from(*__v), #w)?),
        (_, true) => quote! {{
            let __code = ::statepack_runtime::bits::to_offset_binary(*__v as i64, #w).map_err(|_| __io::EncodeError::new(__io::EncodeErrorKind::OutOfRange { value: __v.to_string(), ty: "this offset-binary bit field" }))?;
            __w.#m(__code, #w)?
        }},
    }
}

/// How a bit field's element is traced: offset-binary fields are traced with their value and
/// their stored code (what the bytes hold, and what Kaitai Struct reads), labelled.
pub(crate) fn bits_leave(width: u8, offset_binary: bool) -> TokenStream {
    let w = u32::from(width);
    if offset_binary {
        quote!(__r.leave(Some(&__io::TraceValue::Coded {
            value: __v as i128,
            code: ::statepack_runtime::bits::to_offset_binary(__v as i64, #w).unwrap_or(0),
            encoding: "offset binary",
        }));)
    } else {
        quote!(__r.leave(Some(&__v));)
    }
}

/// Reads a `-sp-varint: leb128` field: the groups are traced one by one as list elements (as
/// Kaitai Struct sees them) and combined into one `u64`. Refuses more than 64 value bits and a
/// trailing zero group (not the shortest form), so decoding then encoding is the identity.
pub(crate) fn varint_read(f: &Field, fid: &str) -> TokenStream {
    let bit_groups = matches!(f.kind, FieldKind::Bits { .. });
    quote!(__r.varint_groups(#fid, #bit_groups)?)
}

/// Writes a `-sp-varint: leb128` field from `__val: &u64`, shortest form, with the runtime's
/// LEB128 encoder.
pub(crate) fn varint_write(f: &Field) -> TokenStream {
    let put = match f.kind {
        FieldKind::Bits { .. } => quote!(__w.write_bits_be(u64::from(__g), 8)?),
        _ => quote!(__w.write_u8(__g)),
    };
    quote! {
        for __g in ::statepack_runtime::bits::leb128_groups(*__val) {
            #put;
        }
    }
}
