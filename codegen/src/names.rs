//! The one place where schema names become Rust names.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "else", "enum", "extern", "false", "fn", "for", "if",
    "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return", "static",
    "struct", "trait", "true", "type", "unsafe", "use", "where", "while", "async", "await", "dyn",
    "abstract", "become", "box", "do", "final", "macro", "override", "priv", "typeof", "unsized",
    "virtual", "yield", "try", "gen",
];
/// Keywords that cannot be raw identifiers; a trailing `_` is added instead.
const NOT_RAW: &[&str] = &["self", "Self", "super", "crate"];

/// `snap_v1_3` -> `SnapV13`, `frame_kind` -> `FrameKind`.
pub fn camel(snake: &str) -> String {
    let mut out = String::new();
    for part in snake.split('_').filter(|p| !p.is_empty()) {
        let mut c = part.chars();
        if let Some(f) = c.next() {
            out.extend(f.to_uppercase());
            out.push_str(c.as_str());
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'T');
    }
    out
}

/// A type or variant identifier from a snake_case schema name.
pub fn type_ident(snake: &str) -> Ident {
    Ident::new(&camel(snake), Span::call_site())
}

/// A field or local identifier from a snake_case schema name (keywords become raw
/// identifiers, or get a trailing `_` where Rust forbids raw ones).
pub fn field_ident(snake: &str) -> Ident {
    if NOT_RAW.contains(&snake) {
        Ident::new(&format!("{snake}_"), Span::call_site())
    } else if KEYWORDS.contains(&snake) {
        Ident::new_raw(snake, Span::call_site())
    } else {
        Ident::new(snake, Span::call_site())
    }
}

/// A generated-code temporary, never clashing with schema names (which cannot start with `_`).
pub fn temp(name: &str) -> Ident {
    Ident::new(&format!("__{name}"), Span::call_site())
}

/// A temporary derived from a field name.
pub fn temp_for(prefix: &str, field: &str) -> Ident {
    // An unnamed field (`_unnamed3`) would give a `__` inside the name, which is not snake
    // case; it gets a trailing `_` instead.
    match field.strip_prefix('_') {
        Some(rest) => Ident::new(&format!("__{prefix}_{rest}_"), Span::call_site()),
        None => Ident::new(&format!("__{prefix}_{field}"), Span::call_site()),
    }
}

/// `#[doc = "..."]` attributes for a doc text (one attribute per line).
pub fn doc_attrs(text: &str) -> TokenStream {
    let lines: Vec<String> = text.lines().map(|l| format!(" {}", l.trim_end())).collect();
    quote! { #( #[doc = #lines] )* }
}
