//! Column sets: the `-sp-column-sets` extension key.
//!
//! A column chunk (a count, a directory of `(column id, type code, offset, count)` entries
//! and the data of each column, see `statepack_runtime::cbtk_columns`) says nothing in its bytes
//! about what a column means. A column set names, for one kind of record, which column ids
//! it uses, the type of each and what it holds. The generator turns each set into a struct
//! with one `Vec` per column, a `from_chunk` that reads the set out of a parsed chunk
//! (a missing column is an empty list, a column of an unknown type is skipped) and a `put`
//! that adds the non-empty columns to a chunk being built.
//!
//! ```yaml
//! -sp-column-sets:
//!   units:
//!     doc: One entry per unit.
//!     columns:
//!       - id: unit_id
//!         column: 1
//!         type: u2
//!         doc: The engine's unit id.
//! ```
//!
//! Allowed types and the type code each is stored with: `u1` 1, `u2` 2, `s2` 3, `u4` 4,
//! `s4` 5, `f4` 6. This file is self-contained (lowering, checks and emission) so the rest
//! of the generator only calls [`lower`] and [`emit`].

use crate::diag::{Diag, Pos};
use crate::names::{doc_attrs, field_ident, type_ident};
use crate::yaml::Node;
use proc_macro2::TokenStream;
use quote::quote;

/// Keys allowed in one column set.
pub const SET_KEYS: &[&str] = &["doc", "columns"];
/// Keys allowed in one column of a set.
pub const COLUMN_KEYS: &[&str] = &["id", "column", "type", "doc"];

/// One column set of a schema.
#[derive(Debug, Clone)]
pub struct ColumnSet {
    /// The set's name (snake_case), as written.
    pub name: String,
    /// Snake-case name of the generated struct (its CamelCase is the Rust name):
    /// `<name>_columns`, made distinct from every other Rust item by `crate::resolve`.
    pub rust_name: String,
    /// `doc`, if any.
    pub doc: Option<String>,
    /// Where the set is defined.
    pub pos: Pos,
    /// The columns, in the order written.
    pub columns: Vec<Column>,
}

/// One column of a set.
#[derive(Debug, Clone)]
pub struct Column {
    /// Field name (snake_case).
    pub id: String,
    /// Column id stored in the directory (1..=65535).
    pub number: u16,
    /// Type code (1 u8, 2 u16, 3 s16, 4 u32, 5 s32, 6 f32).
    pub code: u8,
    /// `doc`, if any.
    pub doc: Option<String>,
    /// Where the column's entry starts.
    pub pos: Pos,
}

fn type_code(s: &str) -> Option<u8> {
    Some(match s {
        "u1" => 1,
        "u2" => 2,
        "s2" => 3,
        "u4" => 4,
        "s4" => 5,
        "f4" => 6,
        _ => return None,
    })
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some('a'..='z'))
        && c.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn parse_number(s: &str) -> Option<u64> {
    let s = s.replace('_', "");
    if let Some(h) = s.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

/// Lowers the value of `-sp-column-sets`, pushing every problem onto `diags`.
pub fn lower(node: &Node, file: &str, diags: &mut Vec<Diag>) -> Vec<ColumnSet> {
    let path = "-sp-column-sets";
    let mut err = |pos: Pos, kp: &str, msg: String, hint: &str| {
        diags.push(Diag::new(file, pos, kp, msg, hint));
    };
    let Some(sets) = node.as_map() else {
        err(
            node.pos,
            path,
            format!(
                "`-sp-column-sets` must be a mapping, found {}",
                node.shape()
            ),
            "write one `name:` entry per column set, each with `columns:`",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (sk, sv) in sets {
        let sp = format!("{path}.{}", sk.text);
        if !is_ident(&sk.text) {
            err(
                sk.pos,
                &sp,
                format!("`{}` is not a valid column set name", sk.text),
                "names are lower_snake_case: letters, digits and `_`, starting with a letter",
            );
            continue;
        }
        let Some(m) = sv.as_map() else {
            err(
                sv.pos,
                &sp,
                format!("a column set must be a mapping, found {}", sv.shape()),
                "give the set `doc:` and `columns:`",
            );
            continue;
        };
        let mut set = ColumnSet {
            name: sk.text.clone(),
            rust_name: format!("{}_columns", sk.text),
            doc: None,
            pos: sk.pos,
            columns: Vec::new(),
        };
        let mut have_columns = false;
        for (k, v) in m {
            let kp = format!("{sp}.{}", k.text);
            match k.text.as_str() {
                "doc" => set.doc = v.as_str().map(str::to_owned),
                "columns" => {
                    have_columns = true;
                    let Some(list) = v.as_seq() else {
                        err(
                            v.pos,
                            &kp,
                            format!("`columns` must be a list, found {}", v.shape()),
                            "write each column as `- id: ..., column: ..., type: ...`",
                        );
                        continue;
                    };
                    for (i, c) in list.iter().enumerate() {
                        let cp = format!("{kp}[{i}]");
                        if let Some(col) = lower_column(c, &cp, &mut err) {
                            if let Some(o) = set.columns.iter().find(|o| o.number == col.number) {
                                err(
                                    col.pos,
                                    &cp,
                                    format!(
                                        "column {} is already `{}` in this set",
                                        col.number, o.id
                                    ),
                                    "a column id appears once in a chunk; give this one its own number",
                                );
                            } else if set.columns.iter().any(|o| o.id == col.id) {
                                err(
                                    col.pos,
                                    &cp,
                                    format!("`{}` names two columns of this set", col.id),
                                    "give each column its own id",
                                );
                            } else {
                                set.columns.push(col);
                            }
                        }
                    }
                }
                t if t.starts_with('-') && !t.starts_with("-sp-") => {}
                _ => err(
                    k.pos,
                    &kp,
                    format!("unknown key `{}` in a column set", k.text),
                    &format!("keys allowed here: {}", SET_KEYS.join(", ")),
                ),
            }
        }
        if !have_columns {
            err(
                sk.pos,
                &sp,
                format!("column set `{}` has no `columns`", sk.text),
                "list the set's columns under `columns:`",
            );
            continue;
        }
        if out.iter().any(|o: &ColumnSet| o.name == set.name) {
            continue; // duplicate keys are already refused by the YAML loader
        }
        out.push(set);
    }
    out
}

fn lower_column(
    c: &Node,
    cp: &str,
    err: &mut impl FnMut(Pos, &str, String, &str),
) -> Option<Column> {
    let Some(m) = c.as_map() else {
        err(
            c.pos,
            cp,
            format!("a column must be a mapping, found {}", c.shape()),
            "write `- id: name` with `column:` and `type:`",
        );
        return None;
    };
    let (mut id, mut number, mut code, mut doc) = (None, None, None, None);
    let mut ok = true;
    for (k, v) in m {
        let kp = format!("{cp}.{}", k.text);
        let text = v.as_str();
        match k.text.as_str() {
            "id" => match text {
                Some(s) if is_ident(s) => id = Some(s.to_owned()),
                _ => {
                    ok = false;
                    err(
                        v.pos,
                        &kp,
                        format!("`{}` is not a valid column name", text.unwrap_or("?")),
                        "names are lower_snake_case: letters, digits and `_`, starting with a letter",
                    )
                }
            },
            "column" => match text.and_then(parse_number) {
                Some(n @ 1..=65535) => number = Some(n as u16),
                _ => {
                    ok = false;
                    err(
                        v.pos,
                        &kp,
                        format!("column id `{}` is not in 1..=65535", text.unwrap_or("?")),
                        "a column id is stored as u16; 0 is not used",
                    )
                }
            },
            "type" => match text.and_then(type_code) {
                Some(t) => code = Some(t),
                None => {
                    ok = false;
                    err(
                        v.pos,
                        &kp,
                        format!(
                            "column type `{}` cannot be stored in a column chunk",
                            text.unwrap_or("?")
                        ),
                        "column types are u1, u2, s2, u4, s4 and f4",
                    )
                }
            },
            "doc" => doc = text.map(str::to_owned),
            t if t.starts_with('-') && !t.starts_with("-sp-") => {}
            _ => {
                ok = false;
                err(
                    k.pos,
                    &kp,
                    format!("unknown key `{}` in a column", k.text),
                    &format!("keys allowed here: {}", COLUMN_KEYS.join(", ")),
                )
            }
        }
    }
    for (name, missing) in [
        ("id", id.is_none()),
        ("column", number.is_none()),
        ("type", code.is_none()),
    ] {
        if missing && ok {
            ok = false;
            err(
                c.pos,
                cp,
                format!("column has no `{name}`"),
                "every column needs `id`, `column` and `type`",
            );
        }
    }
    if !ok {
        return None;
    }
    Some(Column {
        id: id?,
        number: number?,
        code: code?,
        doc,
        pos: c.pos,
    })
}

/// Rust type of a column's values.
fn rust_ty(code: u8) -> TokenStream {
    match code {
        1 => quote!(u8),
        2 => quote!(u16),
        3 => quote!(i16),
        4 => quote!(u32),
        5 => quote!(i32),
        _ => quote!(f32),
    }
}

fn type_name(code: u8) -> &'static str {
    match code {
        1 => "u8",
        2 => "u16",
        3 => "s16",
        4 => "u32",
        5 => "s32",
        _ => "f32",
    }
}

/// Emits one struct per column set.
pub fn emit(sets: &[ColumnSet], file: &str) -> TokenStream {
    let items = sets.iter().map(|s| {
        let name = type_ident(&s.rust_name);
        let mut text = s.doc.as_deref().map(|d| d.trim().to_owned()).unwrap_or_default();
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&format!(
            "Column set `{}`: one list per column; a column missing from a chunk reads as an empty list.\n\nSchema: `{file}` line {}.",
            s.name, s.pos.line
        ));
        let doc = doc_attrs(&text);
        let mut cols: Vec<&Column> = s.columns.iter().collect();
        cols.sort_by_key(|c| c.number);
        let fields = cols.iter().map(|c| {
            let f = field_ident(&c.id);
            let ty = rust_ty(c.code);
            let mut t = c.doc.as_deref().map(|d| d.trim().to_owned()).unwrap_or_default();
            if !t.is_empty() {
                t.push_str("\n\n");
            }
            t.push_str(&format!("Column {}, {} (schema line {}).", c.number, type_name(c.code), c.pos.line));
            let d = doc_attrs(&t);
            quote! { #d pub #f: ::std::vec::Vec<#ty>, }
        });
        let reads = cols.iter().map(|c| {
            let f = field_ident(&c.id);
            let n = c.number;
            let path = format!("{}.{}", s.name, c.id);
            quote! { #f: chunk.column(#n, #path)?, }
        });
        let puts = cols.iter().map(|c| {
            let f = field_ident(&c.id);
            let n = c.number;
            let path = format!("{}.{}", s.name, c.id);
            quote! { out.put(#n, #path, &self.#f)?; }
        });
        let consts = cols.iter().map(|c| {
            let n = c.number;
            let code = c.code;
            let id = &c.id;
            quote! { (#n, #code, #id), }
        });
        quote! {
            #doc
            #[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
            pub struct #name { #(#fields)* }
            impl #name {
                #[doc = " Column id, type code and field name of every column of the set, in rising order of id."]
                pub const COLUMNS: &'static [(u16, u8, &'static str)] = &[#(#consts)*];
                #[doc = " Reads the set out of a parsed chunk. A missing column, or one of a type code the format does not define, is an empty list."]
                #[doc = ""]
                #[doc = " Errors: a column of another known type than the set declares, named by set and column."]
                pub fn from_chunk(chunk: &::statepack_runtime::cbtk_columns::ColumnChunk<'_>) -> Result<Self, ::statepack_runtime::io::DecodeError> {
                    Ok(Self { #(#reads)* })
                }
                #[doc = " Adds every non-empty column of the set to a chunk being built."]
                #[doc = ""]
                #[doc = " Errors: a column id already added, or a count that does not fit u32."]
                pub fn put(&self, out: &mut ::statepack_runtime::cbtk_columns::ChunkBuilder) -> Result<(), ::statepack_runtime::io::EncodeError> {
                    #(#puts)*
                    Ok(())
                }
            }
        }
    });
    quote! { #(#items)* }
}
