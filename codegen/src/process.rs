//! Rust paths of what a schema names but does not define: custom processors
//! (`process: name(args)`) and opaque types (`ks-opaque-types: true`), from the build's
//! [`crate::Options`] or by the default rule (`super::` + the name in CamelCase).

use crate::names::camel;
use proc_macro2::TokenStream;
use quote::ToTokens;

/// The path for a written name: the mapped one, or `super::<modules>::<CamelName>` from a
/// dotted name (`nested.deeply.my_fx` -> `super::nested::deeply::MyFx`).
fn path_for(
    map: &std::collections::BTreeMap<String, String>,
    name: &str,
    what: &str,
) -> Result<TokenStream, String> {
    let text = match map.get(name) {
        Some(p) => p.clone(),
        None => {
            let mut parts: Vec<String> = name.split('.').map(str::to_owned).collect();
            let last = parts.pop().unwrap_or_default();
            let mut p = String::from("super");
            for m in parts {
                p.push_str("::");
                p.push_str(&crate::names::field_ident(&m).to_string());
            }
            p.push_str("::");
            p.push_str(&camel(&last));
            p
        }
    };
    syn::parse_str::<syn::Path>(&text)
        .map(|p| p.to_token_stream())
        .map_err(|e| format!("the Rust path `{text}` given for {what} `{name}` is not a path: {e}"))
}

/// The Rust type implementing custom processor `name`.
pub(crate) fn processor_path(o: &crate::Options, name: &str) -> Result<TokenStream, String> {
    path_for(&o.processors, name, "processor")
}

/// The Rust type of opaque type `name`.
pub(crate) fn opaque_path(o: &crate::Options, name: &str) -> Result<TokenStream, String> {
    path_for(&o.opaque_types, name, "opaque type")
}
