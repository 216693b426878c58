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
//! `io: c ? a._io : b._io` is lowered to the value `c ? a : b` (both of one user type), so a
//! choice between streams is a choice between values.
//!
//! The instance's own expressions (`pos`, `size`, `if`, counts) see `_io` as the type's own
//! stream, as in Kaitai Struct: `pos` is evaluated before the other stream is entered, and
//! the others read `__own_io` (`_io.pos`, `_io.size`, `_io.eof` of the type's reader just
//! before the instance is entered; on write `__own_io_pos`, the type's writer position when
//! the instance is written, after its `seq`).
//!
//! A value whose type is also read without a size shares its parent's stream in Kaitai
//! Struct, which statepack does not keep: `io:` of such a type is refused.

use super::{group, Ctx, Emitter, Scope, Ty};
use crate::expr::Expr;
use crate::ir::{Field, Positional, SrcExpr};
use crate::typed::unsized_readers;
use crate::typed::{Node, TExpr};
use proc_macro2::TokenStream;
use quote::quote;

/// `_io.pos`, `_io.size`, `_io.eof` in the expressions of an instance with `io: value._io`
/// that are evaluated in the other stream: the type's own stream as kept before entering it
/// (`read`), or the type's writer position (on write, where only `_io.pos` is known; `None`
/// for the others, which are what they are anywhere on write).
pub(crate) fn own_io_attr(read: bool, attr: &str) -> Option<(TokenStream, Ty)> {
    Some(match (read, attr) {
        (true, "pos") => (quote!(__own_io.0), Ty::Int),
        (true, "size") => (quote!(__own_io.1), Ty::Int),
        (true, "eof") => (group(quote!(__own_io.0 >= __own_io.1)), Ty::Bool),
        (false, "pos") => (quote!(__own_io_pos), Ty::Int),
        _ => return None,
    })
}

/// `_io` as a value (`statepack_runtime::positional::Stream`): the reader's stream (or, in
/// the expressions of an instance read from another stream, the type's own, `__own_io`), or
/// in a value instance the stream as it was after the type's `seq`. Not known while writing.
#[allow(clippy::type_complexity)]
pub(crate) fn own_stream(ctx: Ctx, own_io: bool) -> Result<TokenStream, (String, String)> {
    Ok(match (ctx, own_io) {
        (Ctx::Read, false) => quote!(__r.io_stream()),
        (Ctx::Read, true) => {
            quote!(::statepack_runtime::positional::Stream::of(__own_io))
        }
        (Ctx::Method, _) => quote!(::statepack_runtime::positional::Stream::of(self.__io_end)),
        (Ctx::Write, _) => {
            return Err((
                "`_io` as a value is not known while writing (its size is not)".into(),
                "use `_io.pos`, or pass the stream to a param (params of type `io` are not checked on write)".into(),
            ))
        }
    })
}

/// `.pos`, `.size`, `.eof` of a stream value `s` (a choice `if c { a } else { b }` in
/// parentheses, which a member access needs).
pub(crate) fn stream_attr(s: TokenStream, attr: &str) -> (TokenStream, Ty) {
    let s = if starts_with_if(&s) { quote!((#s)) } else { s };
    match attr {
        "pos" => (quote!(#s.pos), Ty::Int),
        "size" => (quote!(#s.size), Ty::Int),
        _ => (quote!(#s.eof()), Ty::Bool),
    }
}

impl Emitter<'_> {
    /// The value `io` names, borrowed (`&T`): a choice `c ? a : b` borrows from the branch it
    /// takes, so that neither value is moved out of the field or param holding it. Reported
    /// as [`Emitter::expr`] reports.
    fn io_value_ref(&mut self, io: &SrcExpr, scope: &Scope, kp: &str) -> Option<(TokenStream, Ty)> {
        let side = match scope.ctx {
            Ctx::Read => crate::typed::Side::Read,
            Ctx::Write => crate::typed::Side::Write,
            Ctx::Method => crate::typed::Side::Value,
        };
        let tn = self.cur_type.get();
        let outer = self.fallible.replace(false);
        let r = match self.typed.at(tn, kp, side, io).cloned() {
            Some(te) => self.borrow_user(&io.expr, &te, scope),
            None => self.ex_stored(io, scope, kp),
        };
        self.fallible
            .set(outer || (self.fallible.get() && self.in_method.get()));
        match r {
            Ok(v) => Some(v),
            Err((msg, hint)) => {
                self.err(io.pos, kp, format!("in `{}`: {msg}", io.src), hint);
                None
            }
        }
    }

    /// `e` (typed `te`) borrowed where it is a user-type value, each branch of a choice on
    /// its own.
    #[allow(clippy::type_complexity)]
    fn borrow_user(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<(TokenStream, Ty), (String, String)> {
        if let (Expr::Ternary(ce, ae, be), Node::Ternary(tc, ta, tb)) = (e, &te.node) {
            let (c, _) = self.cx(ce, tc, scope)?;
            let (a, at) = self.borrow_user(ae, ta, scope)?;
            let (b, _) = self.borrow_user(be, tb, scope)?;
            return Ok((group(quote!(if #c { #a } else { #b })), at));
        }
        let (ts, ty) = self.cx(e, te, scope)?;
        Ok(match &ty {
            Ty::User(tn) => {
                let ti = crate::names::type_ident(self.s.type_name(tn));
                // Bound first, so that a reference (or a `Box`) is borrowed through.
                (
                    quote!({ let __b = &#ts; ::std::convert::identity::<&#ti>(__b) }),
                    ty,
                )
            }
            _ => (ts, ty),
        })
    }

    /// `e._io` as a stream value, `e` typed `te`: a user-type value's stream as it was when
    /// its `seq` had been read (its `__io_end`); for a value of one of several user types
    /// (`c ? a : b`), the choice between their streams.
    #[allow(clippy::type_complexity)]
    pub(super) fn stream_of(
        &self,
        e: &Expr,
        te: &TExpr,
        scope: &Scope,
    ) -> Result<TokenStream, (String, String)> {
        match (e, &te.node) {
            (Expr::Ternary(ce, ae, be), Node::Ternary(tc, ta, tb)) if te.ty == Ty::AnyStruct => {
                let (c, _) = self.cx(ce, tc, scope)?;
                let a = self.stream_of(ae, ta, scope)?;
                let b = self.stream_of(be, tb, scope)?;
                Ok(group(quote!(if #c { #a } else { #b })))
            }
            (Expr::Name(n), Node::Instance { value, .. }) if te.ty == Ty::AnyStruct => {
                let inst = self.cur_instances.iter().find(|i| &i.id == n).cloned();
                match inst {
                    Some(i) => self.stream_of(&i.value.expr, value, scope),
                    None => Err((
                        format!("internal: `{n}` is not a value instance here"),
                        "report this schema".into(),
                    )),
                }
            }
            _ if te.ty == Ty::AnyStruct => Err((
                format!("`{e}._io`: the stream of a value of one of several user types is only known for a choice `c ? a : b`"),
                "write the choice where its `_io` is used".into(),
            )),
            _ => {
                let (ts, _) = self.cx(e, te, scope)?;
                Ok(quote!(::statepack_runtime::positional::Stream::of(#ts.__io_end)))
            }
        }
    }
}

/// True when `code` is an `if` expression (looking through invisible groups).
fn starts_with_if(code: &TokenStream) -> bool {
    match code.clone().into_iter().next() {
        Some(proc_macro2::TokenTree::Ident(i)) => i == "if",
        Some(proc_macro2::TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::None => {
            starts_with_if(&g.stream())
        }
        _ => false,
    }
}

/// True when `code` uses the kept state of the type's own stream (`__own_io`, `__own_io_pos`).
fn mentions_own_io(code: &TokenStream) -> bool {
    code.clone().into_iter().any(|t| match t {
        proc_macro2::TokenTree::Ident(i) => i == "__own_io" || i == "__own_io_pos",
        proc_macro2::TokenTree::Group(g) => mentions_own_io(&g.stream()),
        _ => false,
    })
}

/// The value named by `io` as code in `scope` with its user type, or the problem (reported).
fn value_of(em: &mut Emitter<'_>, f: &Field, io: &SrcExpr, scope: &Scope) -> Option<TokenStream> {
    let kp = format!("{}.io", f.key_path);
    let (ts, ty) = em.io_value_ref(io, scope, &kp)?;
    let Ty::User(tn) = ty.clone() else {
        em.err(
            io.pos,
            &kp,
            format!(
                "`io: {}._io`: `{}` is {}, which has no member `_io` (only a user-type value has a stream)",
                io.src,
                io.src,
                super::ty_name(em.s, &ty)
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
            format!("`io: {}._io`: `{}` is also read without a `size` (`{}`, {at}), where it has no stream of its own", io.src, s.type_name(&tn), g.key_path),
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
    // `pos` is evaluated on the type's own stream, before the other one is entered.
    let pos = em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?;
    let own_io = mentions_own_io(&read_value)
        .then(|| quote!(let __own_io: (i128, i128) = (__r.io_pos(), __r.io_size());));
    Some(quote! {{
        let __p: i128 = #pos;
        #own_io
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
    let own_io = mentions_own_io(&stmt).then(|| quote!(let __own_io_pos: i128 = __w.io_pos();));
    Some(quote! {
        {
            let mut __iw = __io::ByteWriter::new();
            (#value).write_to(&mut __iw).map_err(|e| e.in_field(#fid))?;
            let __io_bytes = __iw.into_bytes();
            let __pos: i128 = #pos;
            #own_io
            let mut __tw = __io::ByteWriter::foreign_instance_writer(__pos).map_err(|e| e.in_field(#fid))?;
            {
                let __w = &mut __tw;
                #stmt
            }
            __io::ByteWriter::check_in_stream(__tw, &__io_bytes, #what, #src).map_err(|e| e.in_field(#fid))?;
        }
    })
}
