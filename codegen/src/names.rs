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

/// Whether `name` can be a name in an expression: a Kaitai Struct identifier (`[a-z][a-z0-9_]*`)
/// or one of the special names that start with `_` (`_io`, `_parent`, `_index`, `_`).
pub fn is_schema_name(name: &str) -> bool {
    let mut c = name.chars();
    match c.next() {
        Some('_') => true,
        Some(f) if f.is_ascii_lowercase() => {
            c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_')
        }
        _ => false,
    }
}

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

/// Names every generated module uses for its own items, unqualified (`Result<Self, _>`,
/// `Default::default()`, `AsRef::<str>`, the tracer parameter `T`), and the keyword `Self`:
/// a schema type or enum whose CamelCase name is one of them gets another (see
/// `resolve`).
pub const RESERVED_ITEMS: &[&str] = &["Self", "Result", "Default", "AsRef", "T"];

/// The Rust variant names of an enum's values, in order: each value's CamelCase name, except
/// that a value whose CamelCase name an earlier value already has, or that is in `reserved`
/// (`Self`; `Unlisted` in an open enum), keeps its underscores (`x1` → `X1`, then `x_1` →
/// `X_1`), then gets a trailing `_` (`unlisted` → `Unlisted_`), then `_2`, `_3` … while it
/// still clashes. The enum then carries `#[allow(non_camel_case_types)]`.
pub fn variant_names<'a>(
    values: impl IntoIterator<Item = &'a str>,
    reserved: &[&str],
) -> Vec<String> {
    let mut used: std::collections::HashSet<String> =
        reserved.iter().map(|r| r.to_string()).collect();
    let mut out = Vec::new();
    for v in values {
        let mut name = camel(v);
        if used.contains(&name) {
            let kept: String = {
                // CamelCase with the schema name's underscores kept: `x_1` → `X_1`.
                let mut k = String::new();
                for (i, part) in v.split('_').enumerate() {
                    if i > 0 {
                        k.push('_');
                    }
                    let mut c = part.chars();
                    if let Some(f) = c.next() {
                        k.extend(f.to_uppercase());
                        k.push_str(c.as_str());
                    }
                }
                if k.is_empty() || k.starts_with(|c: char| c.is_ascii_digit() || c == '_') {
                    k.insert(0, 'T');
                }
                k
            };
            name = kept.clone();
            if used.contains(&name) {
                name = format!("{kept}_");
            }
            let mut n = 2;
            while used.contains(&name) {
                name = format!("{kept}_{n}");
                n += 1;
            }
        }
        used.insert(name.clone());
        out.push(name);
    }
    out
}

/// The Rust variant of value `value` among `values` (see [`variant_names`]); the plain
/// CamelCase name when `value` is not among them.
pub fn variant_ident<'a>(
    values: impl IntoIterator<Item = &'a str>,
    reserved: &[&str],
    value: &str,
) -> Ident {
    let values: Vec<&str> = values.into_iter().collect();
    let names = variant_names(values.iter().copied(), reserved);
    let name = values
        .iter()
        .position(|v| *v == value)
        .map_or_else(|| camel(value), |i| names[i].clone());
    Ident::new(&name, Span::call_site())
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
