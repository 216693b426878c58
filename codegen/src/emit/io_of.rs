//! Positional instances with `io: value._io`: read from the substream of another user-type
//! value (`io: _parent.blocks[0]._io`, `io: header._io`).
//!
//! statepack's values keep no stream. A value read in a sized field (a `size`, `size-eos` or
//! `process`) keeps every byte of its substream, though: what its type leaves unread is kept
//! (`__unread`) and written back, and a processed value is the processed bytes. So writing the
//! value again gives exactly the substream its reader saw, and that is where the instance is
//! read from (`ByteReader::foreign_stream`). On write, the instance is written on its own and
//! checked against the same rebuilt substream (`ByteWriter::check_in_stream`): its bytes
//! belong to the value, so an instance that no longer agrees with them is refused rather than
//! written anywhere.
//!
//! A value whose type is also read without a size shares its parent's stream in Kaitai
//! Struct, which statepack does not keep: `io:` of such a type is refused.

use super::{Emitter, Scope, Ty};
use crate::ir::{Field, Positional, SrcExpr};
use crate::typed::unsized_readers;
use proc_macro2::TokenStream;
use quote::quote;

/// The value named by `io` as code in `scope` with its user type, or the problem (reported).
fn value_of(em: &mut Emitter<'_>, f: &Field, io: &SrcExpr, scope: &Scope) -> Option<TokenStream> {
    let kp = format!("{}.io", f.key_path);
    let (ts, ty) = em.expr(io, scope, &kp)?;
    let Ty::User(tn) = ty.clone() else {
        em.err(
            io.pos,
            &kp,
            format!(
                "`io: {}._io`: `{}` is {}, which has no member `_io` (only a user-type value has a stream)",
                io.src,
                io.src,
                super::ty_name(&ty)
            ),
            "name a field (or a list element) holding a user type read with a `size`",
        );
        return None;
    };
    let s = em.schema();
    if let Some(g) = unsized_readers(s, &tn).first() {
        let at = format!("{}:{}:{}", s.file, g.pos.line, g.pos.col);
        em.err(
            io.pos,
            &kp,
            format!("`io: {}._io`: `{tn}` is also read without a `size` (`{}`, {at}), where it has no stream of its own", io.src, g.key_path),
            "give every field reading the type a `size` (or `size-eos`), so that its values are substreams",
        );
        return None;
    }
    Some(ts)
}

/// The read of a positional instance in another value's substream (see the module doc):
/// `read_value` is the instance's read as for a `seq` field, at `__r`.
pub(crate) fn emit_read(
    em: &mut Emitter<'_>,
    f: &Field,
    at: &Positional,
    io: &SrcExpr,
    scope: &Scope,
    read_value: TokenStream,
) -> Option<TokenStream> {
    let fid = f.id.as_str();
    let value = value_of(em, f, io, scope)?;
    let src = io.src.as_str();
    // `pos` is evaluated on the instance's own stream (`_io` there is that substream).
    let pos = em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?;
    Some(quote! {{
        let __io_bytes: ::std::vec::Vec<u8> = {
            let mut __iw = __io::ByteWriter::new();
            match (#value).write_to(&mut __iw) {
                Ok(()) => __iw.into_bytes(),
                Err(e) => return Err(__r.foreign_stream_error(#src, e).in_field(#fid)),
            }
        };
        let __pv = {
            let mut __io_r = __r.foreign_stream(&__io_bytes);
            let __r = &mut __io_r;
            let __p: i128 = #pos;
            let __saved = __r.enter_instance(__p, false).map_err(|e| e.in_field(#fid))?;
            let __pv = #read_value;
            __r.leave_instance(__saved);
            __pv
        };
        // The field was entered on this reader; its value was read on the other one.
        __r.leave::<()>(::std::option::Option::None);
        __pv
    }})
}

/// The write of a positional instance in another value's substream: `stmt` writes it (as for
/// a `seq` field) into a writer of its own, which is then checked against the value's
/// substream as that value writes it.
pub(crate) fn emit_write(
    em: &mut Emitter<'_>,
    f: &Field,
    at: &Positional,
    io: &SrcExpr,
    scope: &Scope,
    stmt: TokenStream,
) -> Option<TokenStream> {
    let fid = f.id.as_str();
    let value = value_of(em, f, io, scope)?;
    let pos = em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?;
    let what = f.key_path.as_str();
    let src = io.src.as_str();
    Some(quote! {
        {
            let mut __iw = __io::ByteWriter::new();
            (#value).write_to(&mut __iw).map_err(|e| e.in_field(#fid))?;
            let __io_bytes = __iw.into_bytes();
            let __pos: i128 = #pos;
            let mut __tw = __io::ByteWriter::foreign_instance_writer(__pos).map_err(|e| e.in_field(#fid))?;
            {
                let __w = &mut __tw;
                #stmt
            }
            __io::ByteWriter::check_in_stream(__tw, &__io_bytes, #what, #src).map_err(|e| e.in_field(#fid))?;
        }
    })
}
