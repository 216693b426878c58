//! The modular-bitfield view of a generated type (generator option
//! [`crate::Options::modular_bitfield`]).
//!
//! A type whose `seq` is nothing but a run of least-significant-bit-first bit fields
//! (`bit-endian: le`) that adds up to whole bytes is exactly the layout modular-bitfield's
//! `#[bitfield]` describes: the first field in the lowest bits of the first byte, each next
//! field in the bits above it, carrying on into the following bytes. For such a type the
//! generated module gets a submodule `bitfield` holding a `#[bitfield]` struct of the same
//! name, with one member per field (`bool` for a one-bit field, `B<n>` otherwise, the stored
//! code of an enum or offset-binary field), plus conversions both ways:
//!
//! - `TryFrom<&T> for bitfield::T` (error: the writer's [`EncodeError`], e.g. a value too
//!   wide for its bits), through `T::write_to`;
//! - `TryFrom<bitfield::T> for T` (error: the reader's `DecodeError`, e.g. a `valid` rule or a
//!   strict enum), through `T::read_from`.
//!
//! Both go through the native reader and writer, so the view and the type cannot disagree
//! on a bit. modular-bitfield's macro names its own crate by absolute path
//! (`::modular_bitfield::...`), so the crate that compiles the generated code depends on
//! `modular-bitfield` itself (the runtime cannot re-export it for a proc macro).
//!
//! Types that get no view: types with `params` (or `_parent`/`_root` paths), an `if`, a
//! `repeat`, a positional instance, a processed field, any field that is not a
//! least-significant-bit-first bit field, or bit fields that end inside a byte.

use crate::ir::{FieldKind, Repeat, Schema, TypeDef};
use crate::names::field_ident;
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// The bits of `t`'s `seq` when `t` can be viewed as a modular-bitfield struct, else `None`.
pub(crate) fn view_bits(t: &TypeDef) -> Option<u32> {
    if !t.params.is_empty() || t.fields.is_empty() {
        return None;
    }
    let mut bits = 0u32;
    for f in &t.fields {
        let plain = f.at.is_none()
            && f.cond.is_none()
            && matches!(f.repeat, Repeat::None)
            && f.process.is_none();
        match f.kind {
            FieldKind::Bits {
                width, le: true, ..
            } if plain => bits += u32::from(width),
            _ => return None,
        }
    }
    (bits % 8 == 0).then_some(bits)
}

/// A member name modular-bitfield can prefix (`set_`, `with_`): a keyword gets a trailing
/// `_` instead of the raw identifier the generated struct uses.
fn view_member(snake: &str) -> Ident {
    let id = field_ident(snake).to_string();
    match id.strip_prefix("r#") {
        Some(kw) => format_ident!("{}_", kw),
        None => format_ident!("{}", id),
    }
}

/// The view of `t` (named `name` in the generated module), when it has one: the
/// `#[bitfield]` struct for the `bitfield` submodule, and the conversions beside the type.
pub(crate) fn view(s: &Schema, t: &TypeDef, name: &Ident) -> Option<(TokenStream, TokenStream)> {
    let bits = view_bits(t)?;
    let bytes = (bits / 8) as usize;
    let members = t.fields.iter().map(|f| {
        let width = match f.kind {
            FieldKind::Bits { width, .. } => width,
            _ => unreachable!("view_bits accepted only bit fields"),
        };
        let m = view_member(&f.id);
        let ty = if width == 1 {
            quote!(bool)
        } else {
            let b = format_ident!("B{}", width);
            quote!(::modular_bitfield::specifiers::#b)
        };
        let doc = format!(
            " `{}`: {} bit{}{}.",
            f.id,
            width,
            if width == 1 { "" } else { "s" },
            match &f.kind {
                FieldKind::Bits {
                    enum_name: Some(e), ..
                } => format!(", the stored code of enum `{}`", s.enum_name(e)),
                FieldKind::Bits {
                    offset_binary: true,
                    ..
                } => ", the stored code (offset binary)".to_owned(),
                _ => String::new(),
            }
        );
        quote!(#[doc = #doc] pub #m: #ty)
    });
    let doc = format!(
        " `{}` as a modular-bitfield struct: {} byte{}, the first field in the lowest bits of the first byte. Convert with `TryFrom` both ways.",
        t.name,
        bytes,
        if bytes == 1 { "" } else { "s" }
    );
    let decl = quote! {
        #[doc = #doc]
        #[::modular_bitfield::bitfield]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct #name { #(#members,)* }
    };
    let conv = quote! {
        impl ::core::convert::TryFrom<&#name> for bitfield::#name {
            type Error = ::statepack_runtime::io::EncodeError;
            #[doc = " The value's bits, written by its own writer. Errors: the writer's, naming the field (a value too wide for its bits)."]
            fn try_from(v: &#name) -> ::std::result::Result<Self, Self::Error> {
                let mut __w = ::statepack_runtime::io::ByteWriter::new();
                v.write_to(&mut __w)?;
                let mut __a = [0u8; #bytes];
                for (__d, __s) in __a.iter_mut().zip(__w.into_bytes()) {
                    *__d = __s;
                }
                Ok(Self::from_bytes(__a))
            }
        }
        impl ::core::convert::TryFrom<bitfield::#name> for #name {
            type Error = ::statepack_runtime::io::DecodeError;
            #[doc = " The value the bits hold, read by the type's own reader. Errors: the reader's, with the field path and byte offset (a `valid` rule, a strict enum)."]
            fn try_from(v: bitfield::#name) -> ::std::result::Result<Self, Self::Error> {
                let __b = v.into_bytes();
                let mut __r = ::statepack_runtime::io::ByteReader::new(&__b);
                Self::read_from(&mut __r)
            }
        }
    };
    Some((decl, conv))
}

/// The `bitfield` submodule holding every view of the schema (nothing when there is none).
pub(crate) fn module(decls: &[TokenStream]) -> TokenStream {
    if decls.is_empty() {
        return TokenStream::new();
    }
    quote! {
        #[doc = " The types whose `seq` is a run of least-significant-bit-first bit fields filling whole bytes, as modular-bitfield structs (getters, `set_`/`with_` setters, `from_bytes`/`into_bytes`). The crate compiling this module depends on `modular-bitfield`."]
        pub mod bitfield {
            #(#decls)*
        }
    }
}
