//! Positional instances with `io: _root.x._io` where the root type reads `x` after the field
//! that reads the instance's type (a forward stream, `crate::ir::Positional::io_later`).
//!
//! When such a type is read, `x` has no value yet; Kaitai Struct reads the instance on
//! first use, after the root's read. So does statepack: the instance is always a `Lazy`
//! member (see `emit::lazy`), and the root's reader, once it has read `x`, keeps the
//! bounds of `x`'s substream with the shared copy of its input that lazy reads use
//! (`ByteReader::keep_later_stream`). The instance's read on first use enters that
//! substream (`ByteReader::enter_later_stream`) and reads at `pos` from its start. A value
//! of the type read on its own (not through the root) has no such stream: reading the
//! instance then fails with an error naming it.
//!
//! On write the instance's bytes belong to `x`, which the root writes: the instance is
//! encoded on its own only to check that it can be, and its value must still be the one
//! its stream holds (read again from the kept stream, `Lazy::is_as_read`); a value given by
//! hand, or changed, is refused by name rather than written anywhere.

use super::{Emitter, Scope, Ty};
use crate::ir::{Field, Positional, Schema, TypeDef};
use crate::names::field_ident;
use proc_macro2::TokenStream;
use quote::quote;

/// The root's statement `stmt` reading field `f` of `t`, followed, when `t` is the root and
/// an instance reads from `f`'s substream on first use, by keeping that substream's bounds.
pub(super) fn keep_stream(s: &Schema, t: &TypeDef, f: &Field, stmt: TokenStream) -> TokenStream {
    let is_root = s.types.first().is_some_and(|r| r.name == t.name);
    let named = s.types.iter().any(|u| {
        u.fields.iter().any(|g| {
            g.at.as_ref()
                .is_some_and(|a| a.io_later.as_deref() == Some(f.id.as_str()))
        })
    });
    if !is_root || !named {
        return stmt;
    }
    let fid = f.id.as_str();
    quote! {
        let __later_start = __r.offset();
        #stmt
        __r.keep_later_stream(#fid, __later_start);
    }
}

/// The read of positional instance `f` from the root's field `x` (see the module doc):
/// `read_value` is the instance's read as for a `seq` field, at `__r`, the reader of its
/// first use.
pub(crate) fn emit_read(
    em: &mut Emitter<'_>,
    f: &Field,
    at: &Positional,
    x: &str,
    scope: &Scope,
    read_value: TokenStream,
) -> Option<TokenStream> {
    if !em.is_lazy(f) {
        em.err(
            at.pos.pos,
            &format!("{}.io", f.key_path),
            format!(
                "`io: _root.{x}._io`: `{x}` is read after the type holding `{}`, so the instance can only be read on first use, and something reads it while the type is read",
                f.id
            ),
            "name the instance only from value instances (or read `_root.{x}` before the type)",
        );
        return None;
    }
    let fid = f.id.as_str();
    let pos = em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?;
    Some(quote! {{
        let __p: i128 = #pos;
        __r.enter_later_stream(#x).map_err(|e| e.in_field(#fid))?;
        let __saved = __r.enter_instance(__p, false).map_err(|e| e.in_field(#fid))?;
        __r.enter(::statepack_runtime::io::PathSeg::Field(#fid));
        let __pv = #read_value;
        __r.leave_instance(__saved);
        __pv
    }})
}

/// The write of positional instance `f` read from the root's field `x`: `stmt` (its write as
/// for a `seq` field) runs into a writer of its own, and the value must be the one its
/// stream holds (see the module doc).
pub(crate) fn emit_write(f: &Field, x: &str, stmt: TokenStream) -> TokenStream {
    let fid = f.id.as_str();
    let id = field_ident(&f.id);
    let msg = format!(
        "`{}` is read from `_root.{x}._io`, whose bytes `{x}` holds and the root writes: only the value read there can be written back (change `{x}` instead)",
        f.key_path
    );
    quote! {
        {
            let mut __tw = __io::ByteWriter::new();
            {
                let __w = &mut __tw;
                #stmt
            }
            if !self.#id.is_as_read() {
                return Err(__io::EncodeError::new(__io::EncodeErrorKind::Semantic(::std::string::String::from(#msg))).in_field(#fid));
            }
        }
    }
}
