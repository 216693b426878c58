//! The write-back members of a generated struct kept out of the user's way: `PartialEq`
//! and `Debug` over the schema's members only, and the `__` members hidden from the
//! documentation.
//!
//! A struct may carry members a user never names, which its reader fills so that writing
//! the value back gives the same bytes (`__`-prefixed: the padding bits after a run of bit
//! fields, bytes after the last field that nothing read, the stored bytes of a processed
//! field, copies of `_parent`/`_root` values the type's expressions use). A value built by
//! hand leaves them at their `Default` (empty), and the writer then derives what they would
//! hold. Equality ignores them, so `decode(encode(x)) == x` for such a value, and two
//! values with the same schema members are equal whatever bytes they were read from.

use proc_macro2::TokenStream;
use quote::quote;

/// For a struct named `name` with `fields` (each `... pub ident: Type`): the `PartialEq`
/// to put in its derive list (`PartialEq,`), or nothing and a written impl comparing the
/// members whose names do not start with `__`, when it has such members.
pub(crate) fn partial_eq(name: &syn::Ident, fields: &[TokenStream]) -> (TokenStream, TokenStream) {
    let names: Vec<syn::Ident> = fields
        .iter()
        .filter_map(|f| {
            syn::parse::Parser::parse2(syn::Field::parse_named, f.clone())
                .ok()
                .and_then(|f| f.ident)
        })
        .collect();
    if names.len() != fields.len() || !names.iter().any(|n| n.to_string().starts_with("__")) {
        return (quote!(PartialEq,), quote!());
    }
    let shown: Vec<&syn::Ident> = names
        .iter()
        .filter(|n| !n.to_string().starts_with("__"))
        .collect();
    let body = if shown.is_empty() {
        quote!(let _ = other; true)
    } else {
        quote!(#(self.#shown == other.#shown)&&*)
    };
    let doc = " Equal when every schema member is equal; the members that only keep bytes for writing back (`__`-prefixed) are not compared.";
    (
        quote!(),
        quote! {
            impl ::core::cmp::PartialEq for #name {
                #[doc = #doc]
                fn eq(&self, other: &Self) -> bool {
                    #body
                }
            }
        },
    )
}

/// Marks every `__`-prefixed member of `fields` (each `... pub ident: Type`)
/// `#[doc(hidden)]`: they stay public (a decoded value carries them, and serde names them),
/// but the generated documentation shows the schema's members only.
pub(crate) fn hide_kept_members(fields: &mut [TokenStream]) {
    for f in fields.iter_mut() {
        let kept = syn::parse::Parser::parse2(syn::Field::parse_named, f.clone())
            .ok()
            .and_then(|f| f.ident)
            .is_some_and(|n| n.to_string().starts_with("__"));
        if kept {
            *f = quote!(#[doc(hidden)] #f);
        }
    }
}

/// For a struct named `name` with `fields`: the `Debug` to put in its derive list (`Debug,`),
/// or nothing and a written impl showing the members whose names do not start with `__`
/// (and `..` for the others, as `finish_non_exhaustive` writes), when it has such members.
pub(crate) fn debug(name: &syn::Ident, fields: &[TokenStream]) -> (TokenStream, TokenStream) {
    let names: Vec<syn::Ident> = fields
        .iter()
        .filter_map(|f| {
            syn::parse::Parser::parse2(syn::Field::parse_named, f.clone())
                .ok()
                .and_then(|f| f.ident)
        })
        .collect();
    if names.len() != fields.len() || !names.iter().any(|n| n.to_string().starts_with("__")) {
        return (quote!(Debug,), quote!());
    }
    let shown: Vec<&syn::Ident> = names
        .iter()
        .filter(|n| !n.to_string().starts_with("__"))
        .collect();
    let labels: Vec<String> = shown
        .iter()
        .map(|n| {
            let t = n.to_string();
            t.strip_prefix("r#").map_or(t.clone(), str::to_owned)
        })
        .collect();
    let text = name.to_string();
    let doc = " The schema members; the members that only keep bytes for writing back (`__`-prefixed) show as `..`.";
    (
        quote!(),
        quote! {
            impl ::core::fmt::Debug for #name {
                #[doc = #doc]
                fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    __f.debug_struct(#text)
                        #(.field(#labels, &self.#shown))*
                        .finish_non_exhaustive()
                }
            }
        },
    )
}

/// The `PartialEq` and `Debug` of a struct named `name` with `fields` (see [`partial_eq`],
/// [`debug`]), then its `__` members marked hidden ([`hide_kept_members`]).
#[allow(clippy::type_complexity)]
pub(crate) fn kept_out(
    name: &syn::Ident,
    fields: &mut [TokenStream],
) -> ((TokenStream, TokenStream), (TokenStream, TokenStream)) {
    let eq = partial_eq(name, fields);
    let dbg = debug(name, fields);
    hide_kept_members(fields);
    (eq, dbg)
}
