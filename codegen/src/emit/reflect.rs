//! Emits the dynamic view (`statepack_runtime::reflect`) of generated types: for every user
//! type an `impl Reflect` answering by schema member name, `impl ToValue` for user types,
//! enums and switch bodies, and for the root the module functions `reflect_decode` and
//! `reflect_roundtrip` that tools (the conformance runner, `inspect`) call uniformly.
//!
//! Members answered: every `seq` field in schema order (stored fields from the struct,
//! `contents` fields as their fixed bytes, derived counts, lengths and sums computed from the
//! data exactly as the writer derives them). `docs/schema-language.md` ("Dynamic view") is
//! the reference.

use super::group;
use crate::derive::Derived;
use crate::ir::*;
use crate::names::{field_ident, type_ident};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use std::collections::HashMap;

/// The arguments the top level gives the root type `t`: nothing for each of its context
/// params (those of a recursive root type, all optional).
pub(crate) fn top_args(t: &TypeDef) -> Vec<TokenStream> {
    t.params
        .iter()
        .filter(|p| p.context.is_some())
        .map(|_| quote!(::std::option::Option::None))
        .collect()
}

/// `impl Reflect` and `impl ToValue` for one user type. `derived` maps each derived field of
/// `t` (not a struct member) to what it is derived from.
///
/// `instances` are the value instances' names and the expressions giving their `Value`
/// (built by the emitter, which knows their types). `lazy` names the positional instances
/// read on first use: asking for one reads it, and a failed read is `Value::Error`. With
/// `io_end` (the type keeps `__io_end`), the hidden member `_io` is the value's stream (a
/// `statepack_runtime::positional::Stream`), not listed among the member names.
pub(crate) fn type_impls(
    t: &TypeDef,
    derived: &HashMap<String, Derived>,
    (instances, io_end): (&[(String, TokenStream)], bool),
    lazy: &std::collections::HashSet<String>,
) -> TokenStream {
    let name = type_ident(&t.name);
    let schema_name = &t.schema_name;
    let mut names = Vec::new();
    let mut arms = Vec::new();
    for f in &t.fields {
        let key = f.id.as_str();
        names.push(key.to_owned());
        let value = if lazy.contains(&f.id) {
            lazy_value(f)
        } else {
            member_value(t, f, derived)
        };
        arms.push(quote!(#key => #value));
    }
    // Params written in the schema are members too (Kaitai Struct exposes them); context
    // params (`_parent`/`_root` paths) are not.
    for p in t.params.iter().filter(|p| p.context.is_none()) {
        let key = p.id.as_str();
        names.push(key.to_owned());
        let id = field_ident(&p.id);
        let value = match &p.kind {
            ParamKind::List(_) => quote!(__rf::list(&self.#id)),
            _ => quote!(self.#id.to_value()),
        };
        arms.push(quote!(#key => #value));
    }
    for (n, v) in instances {
        let key = n.as_str();
        names.push(n.clone());
        arms.push(quote!(#key => #v));
    }
    if io_end {
        arms.push(quote!("_io" => __rf::Value::Owned(::std::rc::Rc::new(::statepack_runtime::positional::Stream::of(self.__io_end)))));
    }

    let names_lit = names.iter();
    let body = if arms.is_empty() {
        quote! {
            let _ = name;
            ::std::option::Option::None
        }
    } else {
        // The trait of `x.to_value()`, where a member is written so.
        let arms_ts = quote!(#(#arms)*);
        let to_value = super::has_ident(arms_ts, "to_value").then(|| {
            quote!(
                use ::statepack_runtime::reflect::ToValue as _;
            )
        });
        quote! {
            #to_value
            let __v = match name {
                #(#arms,)*
                _ => return ::std::option::Option::None,
            };
            ::std::option::Option::Some(__v)
        }
    };
    quote! {
        impl __rf::Reflect for #name {
            fn schema_type(&self) -> &'static str { #schema_name }
            fn member(&self, name: &str) -> ::std::option::Option<__rf::Value<'_>> {
                #body
            }
            fn member_names(&self) -> &'static [&'static str] {
                &[#(#names_lit),*]
            }
        }
        ::statepack_runtime::struct_to_value!(#name);
    }
}

/// The expression giving member `f` of `self` as a `Value<'_>`.
fn member_value(t: &TypeDef, f: &Field, derived: &HashMap<String, Derived>) -> TokenStream {
    if let FieldKind::Contents(c) = &f.kind {
        let b = Literal::byte_string(c);
        return quote!(__rf::fixed_bytes(#b));
    }
    if let Some(d) = derived.get(&f.id) {
        let v = derived_value(t, d);
        return quote!(__rf::Value::Int(#v));
    }
    let id = field_ident(&f.id);
    let repeated = !matches!(f.repeat, Repeat::None) && !f.varint;
    match (repeated, f.cond.is_some()) {
        (false, _) => quote!(self.#id.to_value()),
        (true, false) => quote!(__rf::list(&self.#id)),
        (true, true) => quote!(__rf::opt_list(&self.#id)),
    }
}

/// The `Value` of lazy positional instance `f` of `self` (read now if needed).
fn lazy_value(f: &Field) -> TokenStream {
    let id = field_ident(&f.id);
    let repeated = !matches!(f.repeat, Repeat::None) && !f.varint;
    let of_value = match (repeated, f.cond.is_some()) {
        (false, _) => quote!(__x.to_value()),
        (true, false) => quote!(__rf::list(__x)),
        (true, true) => quote!(__rf::opt_list(__x)),
    };
    quote!(match self.#id.get() {
        ::std::result::Result::Ok(__x) => #of_value,
        ::std::result::Result::Err(__e) => __rf::Value::Error(__e),
    })
}

/// A derived field's value (`i128`) computed from `self`, as the writer derives it.
pub(crate) fn derived_value(t: &TypeDef, d: &Derived) -> TokenStream {
    match d {
        Derived::Count(list) => {
            let l = field_ident(list);
            group(quote!(self.#l.len() as i128))
        }
        Derived::Bytes(target) => {
            let l = field_ident(target);
            let user = t.fields.iter().find(|g| &g.id == target).is_some_and(|g| {
                matches!(g.kind, FieldKind::User { .. } | FieldKind::Switch { .. })
            });
            if user {
                group(quote!(self.#l.encoded_len() as i128))
            } else {
                group(quote!(self.#l.len() as i128))
            }
        }
        Derived::Sum(list, field) => {
            let l = field_ident(list);
            let fi = field_ident(field);
            quote!(self.#l.iter().map(|__e| __e.#fi as i128).sum::<i128>())
        }
        Derived::Stored(target, _) => {
            let m = crate::names::temp_for("produced_len", target);
            quote!(self.#m())
        }
    }
}

/// `impl ToValue` for a generated enum: its schema names and stored integer.
pub(crate) fn enum_impl(e: &EnumDef, open: bool) -> TokenStream {
    let name = type_ident(&e.name);
    let listed = if open {
        quote!(self.listed_name())
    } else {
        quote!(::std::option::Option::Some(self.name()))
    };
    quote! {
        impl __rf::ToValue for #name {
            fn to_value(&self) -> __rf::Value<'_> {
                __rf::Value::Enum(__rf::EnumValue {
                    enum_name: Self::SCHEMA_NAME,
                    name: #listed,
                    value: self.to_i(),
                })
            }
        }
    }
}

/// `impl ToValue` for the enum holding a switch's cases: the selected case's struct.
///
/// `no_case`: `None` without a `NoCase` variant, `Some(false)` for a unit `NoCase` (nothing
/// read: `Null`), `Some(true)` for `NoCase(bytes)` of a sized switch (the bytes).
pub(crate) fn switch_impl(
    en: &proc_macro2::Ident,
    variants: &[proc_macro2::Ident],
    no_case: Option<bool>,
) -> TokenStream {
    let none = match no_case {
        None => quote!(),
        Some(false) => quote!(#en::NoCase => __rf::Value::Null,),
        Some(true) => {
            quote!(#en::NoCase(__b) => __rf::Value::Bytes(::std::borrow::Cow::Borrowed(__b.as_slice())),)
        }
    };
    quote! {
        impl __rf::ToValue for #en {
            fn to_value(&self) -> __rf::Value<'_> {
                match self { #(#en::#variants(__x) => __x.to_value(),)* #none }
            }
        }
    }
}

/// The module functions every generated schema module has, for tools that handle any schema.
pub(crate) fn root_fns(root: &TypeDef) -> TokenStream {
    let name = type_ident(&root.name);
    if root.params.iter().any(|p| p.context.is_none()) {
        // A root type with `params` is read by the schemas that import it, with arguments.
        let msg = format!(
            "the root type `{}` takes params ({}), which a plain decode cannot give",
            root.name,
            root.params
                .iter()
                .filter(|p| p.context.is_none())
                .map(|p| p.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return quote! {
            #[doc = " Would decode the root type through the dynamic view, but the root type has `params`."]
            #[doc = ""]
            #[doc = " Errors: always a `Semantic` [`DecodeError`](::statepack_runtime::io::DecodeError) saying so; use the root type's `decode`."]
            pub fn reflect_decode(bytes: &[u8]) -> Result<::std::boxed::Box<dyn __rf::Reflect>, __io::DecodeError> {
                let _ = bytes;
                Err(__io::DecodeError::new(0, __io::DecodeErrorKind::Semantic(::std::string::String::from(#msg))))
            }
            #[doc = " Would decode and encode again, but the root type has `params`."]
            #[doc = ""]
            #[doc = " Errors: always, saying so."]
            pub fn reflect_roundtrip(bytes: &[u8]) -> Result<::std::vec::Vec<u8>, ::std::string::String> {
                let _ = bytes;
                Err(::std::string::String::from(#msg))
            }
        };
    }
    let top = top_args(root);
    quote! {
        #[doc = " Decodes the root type at the start of `bytes` as Kaitai Struct reads a file: bytes after"]
        #[doc = " the end of the root type are allowed (and ignored). The result is seen through the"]
        #[doc = " dynamic view ([`Reflect`](::statepack_runtime::reflect::Reflect)), member by schema name."]
        #[doc = ""]
        #[doc = " Errors: any [`DecodeError`](::statepack_runtime::io::DecodeError) of the root type's reader."]
        pub fn reflect_decode(bytes: &[u8]) -> Result<::std::boxed::Box<dyn __rf::Reflect>, __io::DecodeError> {
            let mut r = __io::ByteReader::new(bytes);
            let v = #name::read_from(&mut r #(, #top)*)?;
            Ok(::std::boxed::Box::new(v))
        }
        #[doc = " Decodes the root type at the start of `bytes` (trailing bytes allowed, as in"]
        #[doc = " [`reflect_decode`]) and encodes the value again. The result should equal the bytes the"]
        #[doc = " reader consumed (a prefix of `bytes`)."]
        #[doc = ""]
        #[doc = " Errors: the decode or encode error, rendered as text."]
        pub fn reflect_roundtrip(bytes: &[u8]) -> Result<::std::vec::Vec<u8>, ::std::string::String> {
            let mut r = __io::ByteReader::new(bytes);
            let v = #name::read_from(&mut r #(, #top)*).map_err(|e| format!("decode: {e}"))?;
            v.encode().map_err(|e| format!("encode: {e}"))
        }
    }
}
