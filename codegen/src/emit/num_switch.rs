//! Switches whose cases are number types (`cases: {1: u1, 2: u2le}`), as Kaitai Struct
//! allows: the field holds an integer (or a float) whose width and byte order the switch
//! value selects. The Rust member is the switch enum with one variant per number type
//! (`U1(u8)`, `U2le(u16)`, ...), so the writer knows which width to write and checks that
//! it is the one the switch value selects; in expressions and in the dynamic view the field
//! is the number itself. A switch mixing number and user types has the same variants for
//! its number cases, and is not a number in expressions. A `str` or `strz` case holds a
//! `String` in the switch's `encoding`.

use super::{int_ty, plain_encoding, read_method, write_method, Emitter, Ty};
use crate::ir::*;
use crate::num_type::{case_number, case_string, strz_width};
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    /// Reads case type `tn` into variant `vi` of switch enum `en` (`Result<enum, _>`);
    /// `enc` is the switch's character set for a `str` or `strz` case.
    pub(super) fn case_read(
        &self,
        tn: &str,
        enc: Option<&'static str>,
        en: &proc_macro2::Ident,
        vi: &proc_macro2::Ident,
    ) -> TokenStream {
        if let Some(z) = case_string(tn) {
            let enc = enc.unwrap_or("UTF-8");
            let read = if z {
                let term = strz_term(enc);
                quote!(__r.read_terminated(::std::option::Option::None, #term).and_then(|(__val, _)| __io::decode_str(__val, #enc, __at)))
            } else {
                quote!(__io::decode_str(__r.take_rest(), #enc, __at))
            };
            return quote!({
                let __at = __r.offset();
                #read.map(#en::#vi)
            });
        }
        match case_number(tn) {
            Some((bytes, signed, float, endian)) => {
                let m = read_method(bytes, signed, float, endian);
                quote!(__r.#m().map(#en::#vi))
            }
            None => {
                let ti = crate::names::type_ident(tn);
                quote!(#ti::read_from(__r).map(#en::#vi))
            }
        }
    }

    /// Writes the value `__x` of case type `tn` (`enc`: as for [`Self::case_read`]).
    pub(super) fn case_write(&self, tn: &str, enc: Option<&'static str>) -> TokenStream {
        if let Some(z) = case_string(tn) {
            let enc = enc.unwrap_or("UTF-8");
            let bytes = if plain_encoding(enc) {
                quote!(__x.as_bytes())
            } else {
                quote!(&__io::encode_str(__x, #enc)?)
            };
            let check = if enc == "ASCII" {
                quote! {
                    if !__x.is_ascii() {
                        return Err(__io::EncodeError::not_valid(format!("{:?}", __x), "must be ASCII"));
                    }
                }
            } else {
                quote!()
            };
            let put = if z {
                let term = strz_term(enc);
                quote!(__w.write_terminated(#bytes, ::std::option::Option::None, ::std::option::Option::None, #term)?;)
            } else {
                quote!(__w.write_bytes(#bytes);)
            };
            return quote!(#check #put);
        }
        match case_number(tn) {
            Some((bytes, signed, float, endian)) => {
                let m = write_method(bytes, signed, float, endian);
                quote!(__w.#m(*__x);)
            }
            None => quote!(__x.write_to(__w)?;),
        }
    }

    /// The encoded length of the value `__x` of case type `tn` (`enc`: as for
    /// [`Self::case_read`]).
    pub(super) fn case_len(tn: &str, enc: Option<&'static str>) -> TokenStream {
        if let Some(z) = case_string(tn) {
            let enc = enc.unwrap_or("UTF-8");
            let text = if plain_encoding(enc) {
                quote!(__x.len())
            } else {
                // A text the set cannot hold is refused by the writer; it measures 0 here.
                quote!(__io::encode_str(__x, #enc).map_or(0, |__b| __b.len()))
            };
            let w = proc_macro2::Literal::usize_unsuffixed(usize::from(strz_width(enc)));
            return if z { quote!(#text + #w) } else { text };
        }
        match case_number(tn) {
            Some((bytes, ..)) => {
                let n = proc_macro2::Literal::usize_unsuffixed(bytes as usize);
                quote!(#n)
            }
            None => quote!(__x.encoded_len()),
        }
    }

    /// The Rust type a variant of case type `tn` holds.
    pub(super) fn case_rust_ty(tn: &str) -> TokenStream {
        if case_string(tn).is_some() {
            return quote!(::std::string::String);
        }
        match case_number(tn) {
            Some((4, _, true, _)) => quote!(f32),
            Some((_, _, true, _)) => quote!(f64),
            Some((bytes, signed, false, _)) => int_ty(bytes, signed),
            None => {
                let ti = crate::names::type_ident(tn);
                quote!(#ti)
            }
        }
    }

    /// For a switch field whose cases are number types: the type its value has in
    /// expressions (an integer, or a float when any case is one).
    pub(super) fn number_switch_ty(&self, ty: &Ty) -> Option<Ty> {
        crate::typed::number_switch_ty(self.s, ty)
    }

    /// The methods of a number switch's enum: `value()`, the number as `i128` (or `f64`),
    /// failing with an `ExprError` when no case matched.
    pub(super) fn number_switch_methods(&self, f: &Field, en: &proc_macro2::Ident) -> TokenStream {
        let FieldKind::Switch { .. } = &f.kind else {
            return quote!();
        };
        let vs = self.switch_variants(f);
        if vs
            .iter()
            .any(|(_, tn, _)| case_number(self.s.type_name(tn)).is_none())
        {
            return quote!();
        }
        let float = vs
            .iter()
            .any(|(_, tn, _)| case_number(self.s.type_name(tn)).is_some_and(|c| c.2));
        let out = if float { quote!(f64) } else { quote!(i128) };
        let arms = vs
            .iter()
            .map(|(vi, _, _)| quote!(#en::#vi(__x) => ::std::result::Result::Ok(*__x as #out)));
        let none = if crate::shape::has_no_case(f) {
            quote!(#en::NoCase => ::std::result::Result::Err(__io::ExprError(::std::string::String::from("no switch case matched, so the field has no value"))),)
        } else {
            quote!()
        };
        quote! {
            #[doc = " The number read, whichever case was selected. Errors: no case matched."]
            pub fn value(&self) -> ::std::result::Result<#out, __io::ExprError> {
                match self { #(#arms,)* #none }
            }
        }
    }
}

/// The runtime's `Term` of a `strz` case in character set `enc`: a zero terminator (two zero
/// bytes in UTF-16), consumed, not part of the value, required.
fn strz_term(enc: &str) -> TokenStream {
    let w = strz_width(enc);
    quote! {
        __io::Term { terminator: ::std::option::Option::Some(0u8), include: false, consume: true, eos_error: true, pad_right: ::std::option::Option::None, width: #w }
    }
}
