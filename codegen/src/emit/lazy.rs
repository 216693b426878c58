//! Positional instances read on first use (`statepack_runtime::lazy::Lazy`): the member's
//! type, the reader's statement that keeps the stream and the read for later, and the
//! writer's binding that reads the instance before writing it.
//!
//! Which instances are read this way is decided by `crate::lazy::lazy_instances`; the
//! read itself is the code of an instance read by its type's reader, moved into a closure
//! that captures copies of the fields and params it uses (the reader's locals of the same
//! names), so the same statements run at `__r`, a reader of the kept stream.

use super::{group, Emitter};
use crate::ir::{Field, TypeDef};
use crate::names::field_ident;
use proc_macro2::TokenStream;
use quote::quote;

impl Emitter<'_> {
    /// Whether field `f` of the type being emitted is a lazy positional instance.
    pub(super) fn is_lazy(&self, f: &Field) -> bool {
        f.at.is_some() && self.cur_lazy.contains(&f.id)
    }

    /// The reader's statement `stmt` of field `f` (binding `id: field_ty`), kept for the
    /// first use when `f` is a lazy instance (see [`read_stmt`]).
    pub(super) fn lazy_read(
        &self,
        t: &TypeDef,
        f: &Field,
        id: &proc_macro2::Ident,
        field_ty: &TokenStream,
        stmt: TokenStream,
    ) -> TokenStream {
        if self.is_lazy(f) {
            read_stmt(t, f, id, field_ty, stmt)
        } else {
            stmt
        }
    }

    /// The writer's test that optional member `id` of field `f` is present (the writer's
    /// binding of a lazy instance, [`write_bind`], else the member).
    pub(super) fn presence(&self, f: &Field, id: &proc_macro2::Ident) -> TokenStream {
        if self.is_lazy(f) {
            quote!(#id.is_some())
        } else {
            quote!(self.#id.is_some())
        }
    }

    /// The reader's method taking the root type's bytes after its `seq` (`__beyond`): with
    /// instances read on first use, how far they reach is not known yet, so the root read
    /// at the top keeps every byte after its `seq` (`ByteReader::take_lazy_tail`).
    pub(super) fn beyond_read(&self) -> TokenStream {
        if self.any_lazy {
            quote!(take_lazy_tail)
        } else {
            quote!(take_positional_tail)
        }
    }
}

/// The member type of a lazy instance whose value has type `field_ty`.
pub(super) fn member_ty(field_ty: &TokenStream) -> TokenStream {
    quote!(::statepack_runtime::lazy::Lazy<#field_ty>)
}

/// The reader's statement binding lazy instance `f` of `t` as `id`: the stream as it is now
/// and `read` (the statements binding `id: field_ty` as the type's reader would), run on
/// first use with copies of the fields and params the read uses.
fn read_stmt(
    t: &TypeDef,
    f: &Field,
    id: &proc_macro2::Ident,
    field_ty: &TokenStream,
    read: TokenStream,
) -> TokenStream {
    let caps: Vec<proc_macro2::Ident> = crate::lazy::read_captures(t, f)
        .iter()
        .map(|n| field_ident(n))
        .collect();
    let lazy = member_ty(field_ty);
    quote! {
        let #id: #lazy = {
            let __lazy_at = __r.lazy_at();
            #(let #caps = ::std::clone::Clone::clone(&#caps);)*
            ::statepack_runtime::lazy::Lazy::pending(
                __lazy_at,
                move |__r: &mut ::statepack_runtime::io::ByteReader<'_>| -> ::std::result::Result<#field_ty, ::statepack_runtime::io::DecodeError> {
                    #read
                    ::std::result::Result::Ok(#id)
                },
            )
        };
    }
}

/// The writer's binding of lazy instance `f` (read now if it has not been): `Some` of the
/// value, `None` when its read fails. Returns the binding (for the writer's first
/// statements), the value's expression for the field's write (`src`), and the wrapper of the
/// instance's write statement, which writes it only when it could be read: an instance the
/// data does not have (a view that fails on these bytes) is left out, and its bytes, if any,
/// are those the value kept from its input.
pub(super) fn write_bind(
    id: &proc_macro2::Ident,
    by_value: bool,
) -> (
    TokenStream,
    TokenStream,
    impl Fn(TokenStream) -> TokenStream,
) {
    let bind = quote!(let #id = self.#id.get().ok(););
    let id2 = id.clone();
    let (src, rebind) = if by_value {
        (quote!(#id), quote!(let #id2 = *#id2;))
    } else {
        (group(quote!(*#id)), quote!())
    };
    let wrap = move |stmt: TokenStream| {
        quote! {
            if let ::std::option::Option::Some(#id2) = #id2 {
                #rebind
                #stmt
            }
        }
    };
    (bind, src, wrap)
}
