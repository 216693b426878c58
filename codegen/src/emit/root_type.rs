//! The implementation of `statepack_runtime::format::RootType` for a root type, so tools
//! written once (the format registry, the CLI, sweeps, fuzzing) reach every generated format
//! through one trait. Only a root type without written params gets one: a file alone does
//! not give a param's value.

use proc_macro2::TokenStream;
use quote::quote;

/// `impl RootType for <name>`, forwarding to the type's generated `read_from` (with every
/// context param absent, as at the top level) and `encode`.
///
/// `context_params` is the number of the type's context params (`_parent`/`_root` paths of a
/// recursive root type), which the top level gives as `None`.
pub(super) fn root_type_impl(name: &proc_macro2::Ident, context_params: usize) -> TokenStream {
    let nones = (0..context_params).map(|_| quote!(::std::option::Option::None));
    quote! {
        impl ::statepack_runtime::format::RootType for #name {
            const SCHEMA_ID: &'static str = SCHEMA_ID;
            fn read_root<T: ::statepack_runtime::io::Tracer>(
                r: &mut ::statepack_runtime::io::ByteReader<'_, T>,
            ) -> Result<Self, ::statepack_runtime::io::DecodeError> {
                #name::read_from(r #(, #nones)*)
            }
            fn encode_root(&self) -> Result<::std::vec::Vec<u8>, ::statepack_runtime::io::EncodeError> {
                #name::encode(self)
            }
        }
    }
}
