//! The binrw, deku and bitvec impls of a generated type (generator options
//! [`crate::Options::binrw`], [`crate::Options::deku`], [`crate::Options::bitvec`]).
//!
//! Every impl is a call into `statepack_runtime::interop`, which runs the type's native
//! `read_from` / `write_to` on the library's stream; the traits are named through the
//! runtime's re-exports (`::statepack_runtime::binrw`, `::statepack_runtime::deku`,
//! `::statepack_runtime::bitvec`), so the user's crate turns on the runtime's features of the
//! same names and needs no direct dependency. Which types get what:
//!
//! - `BinRead`/`BinWrite` (+ `ReadEndian`/`WriteEndian`, so `T::read(&mut stream)` works;
//!   through the runtime's `binrw_impls!` for a type without `params`): every type that ends
//!   on a byte boundary (all of them, except a type under Kaitai's rules
//!   whose bit fields may end inside a byte). `Args` are the type's `params` as a tuple, `()`
//!   without params. binrw's endian argument is not used: the schema fixes the byte order.
//! - `DekuReader`/`DekuWriter` for the context `()` and for `deku::ctx::Endian` (which a
//!   `#[deku(endian = ...)]` container hands to its fields; also unused): every type with
//!   bit fields. With `params`, the context is their tuple instead.
//! - `read_bits(&BitSlice<u8, Msb0>)` and `to_bits()`: every type with bit fields.

use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// What the impls need to know about one generated type.
pub(crate) struct TypeShape<'a> {
    /// The Rust type.
    pub name: &'a Ident,
    /// The Rust types of its `params`, in order.
    pub params: Vec<TokenStream>,
    /// It has bit fields.
    pub has_bits: bool,
    /// Its first field is a bit field (it may start inside a byte).
    pub bits_first: bool,
    /// It always ends on a byte boundary.
    pub aligned_end: bool,
}

/// The impls `opts` asks for, for one type.
pub(crate) fn impls(opts: &crate::Options, t: &TypeShape<'_>) -> TokenStream {
    let mut out = TokenStream::new();
    if opts.binrw && t.aligned_end {
        out.extend(binrw_impls(t));
    }
    if opts.deku && t.has_bits {
        out.extend(deku_impls(t));
    }
    if opts.bitvec && t.has_bits {
        out.extend(bitvec_impls(t));
    }
    out
}

/// `(a0, a1, ...)` bindings and types for the params.
fn param_tuple(t: &TypeShape<'_>) -> (TokenStream, TokenStream, Vec<Ident>) {
    let names: Vec<Ident> = (0..t.params.len())
        .map(|i| quote::format_ident!("__a{}", i))
        .collect();
    let tys = &t.params;
    (quote!((#(#tys,)*)), quote!((#(#names,)*)), names)
}

/// The native reader as the argument of an interop call: `Self::read_from` itself, or a
/// closure passing the params.
fn reader_fn(names: &[Ident]) -> TokenStream {
    if names.is_empty() {
        quote!(Self::read_from)
    } else {
        quote!(|__r| Self::read_from(__r #(, #names)*))
    }
}

fn binrw_impls(t: &TypeShape<'_>) -> TokenStream {
    let name = t.name;
    if t.params.is_empty() {
        // The runtime's macro writes the same four impls for a type without params.
        return if t.has_bits {
            quote!(::statepack_runtime::binrw_impls!(#name, bits);)
        } else {
            quote!(::statepack_runtime::binrw_impls!(#name);)
        };
    }
    let (args_ty, args_pat, names) = param_tuple(t);
    let rf = reader_fn(&names);
    let args_name = if t.params.is_empty() {
        quote!(_args)
    } else {
        quote!(#args_pat)
    };
    let capacity = if t.has_bits {
        quote!(0)
    } else {
        quote!(self.encoded_len())
    };
    quote! {
        #[doc = " Reads through the native reader: the rest of the stream is parsed by [`Self::read_from`] and the stream is left after the value. The byte order is the schema's (binrw's `endian` is not used)."]
        #[doc = ""]
        #[doc = " Errors: `binrw::Error::Custom` holding the [`DecodeError`](::statepack_runtime::io::DecodeError) (field path; offset and `pos` are stream positions); see `statepack_runtime::interop::binrw`."]
        impl ::statepack_runtime::binrw::BinRead for #name {
            type Args<'__a> = #args_ty;
            fn read_options<__R: ::std::io::Read + ::std::io::Seek>(
                reader: &mut __R,
                _endian: ::statepack_runtime::binrw::Endian,
                #args_name: Self::Args<'_>,
            ) -> ::statepack_runtime::binrw::BinResult<Self> {
                ::statepack_runtime::interop::binrw::read(reader, #rf)
            }
        }
        #[doc = " The schema fixes the byte order of every number."]
        impl ::statepack_runtime::binrw::meta::ReadEndian for #name {
            const ENDIAN: ::statepack_runtime::binrw::meta::EndianKind = ::statepack_runtime::binrw::meta::EndianKind::None;
        }
        #[doc = " Writes through the native writer ([`Self::write_to`]); the byte order is the schema's."]
        #[doc = ""]
        #[doc = " Errors: `binrw::Error::Custom` holding the [`EncodeError`](::statepack_runtime::io::EncodeError) when a value does not fit; nothing is written then."]
        impl ::statepack_runtime::binrw::BinWrite for #name {
            type Args<'__a> = ();
            fn write_options<__W: ::std::io::Write + ::std::io::Seek>(
                &self,
                writer: &mut __W,
                _endian: ::statepack_runtime::binrw::Endian,
                _args: Self::Args<'_>,
            ) -> ::statepack_runtime::binrw::BinResult<()> {
                ::statepack_runtime::interop::binrw::write(writer, #capacity, |__w| self.write_to(__w))
            }
        }
        #[doc = " The schema fixes the byte order of every number."]
        impl ::statepack_runtime::binrw::meta::WriteEndian for #name {
            const ENDIAN: ::statepack_runtime::binrw::meta::EndianKind = ::statepack_runtime::binrw::meta::EndianKind::None;
        }
    }
}

fn deku_impls(t: &TypeShape<'_>) -> TokenStream {
    let name = t.name;
    let bits_first = t.bits_first;
    let (args_ty, args_pat, names) = param_tuple(t);
    let rf = reader_fn(&names);
    let read_doc = quote! {
        #[doc = " Reads through the native reader at the deku reader's bit position (most significant bit first); the reader is left after the value."]
        #[doc = ""]
        #[doc = " Errors: `DekuError::Parse` with the field path and the byte offset in the stream; see `statepack_runtime::interop::deku`."]
    };
    let write_doc = quote! {
        #[doc = " Writes exactly the value's bits through the native writer ([`Self::write_to`]), most significant bit first."]
        #[doc = ""]
        #[doc = " Errors: `DekuError::InvalidParam` naming the field when a value does not fit; nothing is written then."]
    };
    let write_body = quote! {
        ::statepack_runtime::interop::deku::write(writer, #bits_first, |__w| self.write_to(__w))
    };
    let mut ctxs: Vec<(TokenStream, TokenStream, TokenStream)> = Vec::new();
    if t.params.is_empty() {
        ctxs.push((quote!(()), quote!(_ctx), quote!(_ctx)));
        ctxs.push((
            quote!(::statepack_runtime::deku::ctx::Endian),
            quote!(_ctx),
            quote!(_ctx),
        ));
    } else {
        ctxs.push((args_ty, args_pat, quote!(_ctx)));
    }
    let mut out = TokenStream::new();
    for (ctx, rpat, wpat) in ctxs {
        out.extend(quote! {
            #read_doc
            impl<'__a> ::statepack_runtime::deku::DekuReader<'__a, #ctx> for #name {
                fn from_reader_with_ctx<__R: ::std::io::Read + ::std::io::Seek>(
                    reader: &mut ::statepack_runtime::deku::reader::Reader<__R>,
                    #rpat: #ctx,
                ) -> ::std::result::Result<Self, ::statepack_runtime::deku::DekuError> {
                    ::statepack_runtime::interop::deku::read(reader, #bits_first, #rf)
                }
            }
            #write_doc
            impl ::statepack_runtime::deku::DekuWriter<#ctx> for #name {
                fn to_writer<__W: ::std::io::Write + ::std::io::Seek>(
                    &self,
                    writer: &mut ::statepack_runtime::deku::writer::Writer<__W>,
                    #wpat: #ctx,
                ) -> ::std::result::Result<(), ::statepack_runtime::deku::DekuError> {
                    #write_body
                }
            }
        });
    }
    out
}

fn bitvec_impls(t: &TypeShape<'_>) -> TokenStream {
    let name = t.name;
    let params: Vec<TokenStream> = t
        .params
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            let a = quote::format_ident!("__a{}", i);
            quote!(#a: #ty)
        })
        .collect();
    let (_, _, names) = param_tuple(t);
    let rf = reader_fn(&names);
    quote! {
        impl #name {
            #[doc = " Reads one value from the start of a bit slice (most significant bit first); returns it with the number of bits it took."]
            #[doc = ""]
            #[doc = " Errors: [`DecodeError`](::statepack_runtime::io::DecodeError) with the field path and the byte offset from the slice's first bit; reading past the slice's last bit is `UnexpectedEof`. See `statepack_runtime::interop::bits`."]
            pub fn read_bits(
                bits: &::statepack_runtime::bitvec::slice::BitSlice<u8, ::statepack_runtime::bitvec::order::Msb0>
                #(, #params)*
            ) -> ::std::result::Result<(Self, usize), __io::DecodeError> {
                ::statepack_runtime::interop::bits::read(bits, #rf)
            }
            #[doc = " Writes this value as exactly its bits (most significant bit first, no padding after a value that ends inside a byte)."]
            #[doc = ""]
            #[doc = " Errors: [`EncodeError`](::statepack_runtime::io::EncodeError) naming the field when a value does not fit."]
            pub fn to_bits(
                &self,
            ) -> ::std::result::Result<::statepack_runtime::bitvec::vec::BitVec<u8, ::statepack_runtime::bitvec::order::Msb0>, __io::EncodeError> {
                ::statepack_runtime::interop::bits::write(|__w| self.write_to(__w))
            }
        }
    }
}
