//! The code of positional instances (`pos`, `io`) and of `_io`: the reader's jump to a
//! position and back, the writer's queue of instances, the kept `_io.pos`/`_io.size` (see
//! `crate::instances` for the order they are read in and what uses `_io`).

use super::{group, Emitter, Scope, Ty};
use crate::derive::{placed_instances, Placed};
use crate::instances::{keeps_io_end, keeps_read_pos};
use crate::ir::{Endian, Field, FieldKind, Positional};
use crate::names::temp_for;
use proc_macro2::TokenStream;
use quote::quote;

/// `_io.pos`, `_io.size`, `_io.eof` in a reader (`read`) or a writer (`write`; only `_io.pos`
/// has a value there: the bytes written since the start of the stream).
#[allow(clippy::type_complexity)]
pub(crate) fn io_attr(
    read: bool,
    write: bool,
    attr: &str,
) -> Result<(TokenStream, Ty), (String, String)> {
    Ok(match (read, write, attr) {
        (true, _, "pos") => (quote!(__r.io_pos()), Ty::Int),
        (true, _, "size") => (quote!(__r.io_size()), Ty::Int),
        (true, _, "eof") => (quote!(__r.is_eof()), Ty::Bool),
        (_, true, "pos") => (quote!(__w.io_pos()), Ty::Int),
        (_, true, "size" | "eof") => {
            return Err((
                format!("`_io.{attr}` is not known while writing"),
                "use `_io.{attr}` in `if`, `size`, `repeat-until` or a positional instance's `pos`, where the writer lets the value decide".replace("{attr}", attr),
            ))
        }
        // A value instance: the type's stream as it was when its `seq` had been read.
        (false, false, "pos") => (quote!(self.__io_end.0), Ty::Int),
        (false, false, "size") => (quote!(self.__io_end.1), Ty::Int),
        (false, false, "eof") => (group(quote!(self.__io_end.0 >= self.__io_end.1)), Ty::Bool),
        _ => {
            return Err((
                format!("`_io` has no member `{attr}`"),
                "`_io` has `pos`, `size` and `eof`".into(),
            ))
        }
    })
}

/// Wraps a positional instance's read: evaluate `pos`, move there, read, come back. Returns
/// the read expression and, when `pos` uses `_io`, the declaration, struct member and
/// constructor entry of the kept position (the writer puts the instance back there).
#[allow(clippy::type_complexity)]
pub(crate) fn emit_read(
    em: &mut Emitter<'_>,
    f: &Field,
    at: &Positional,
    scope: &Scope,
    read_value: TokenStream,
) -> Option<(TokenStream, Option<(TokenStream, TokenStream, TokenStream)>)> {
    let fid = f.id.as_str();
    if let Some(io) = &at.io_of {
        return super::io_of::emit_read(em, f, at, io, scope, read_value).map(|r| (r, None));
    }
    let pos = em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?;
    let whole = at.whole;
    if placed(em, f).is_some() {
        // Where the instance was read and how many bytes it took there: its writer keeps it
        // there while it still fits (see `ByteWriter::derive_position`).
        let kept = temp_for("pos", &f.id);
        let doc = format!(
            " Where `{}` was read (`pos: {}`, from the start of its stream) and the bytes it took there: its writer keeps it there while it still fits, and derives the position otherwise.",
            f.id, at.pos.src
        );
        let rv = quote! {{
            let __p: i128 = #pos;
            let __saved = __r.enter_instance(__p, #whole).map_err(|e| e.in_field(#fid))?;
            let __from = __r.offset();
            __r.enter(::statepack_runtime::io::PathSeg::Field(#fid));
            let __pv = #read_value;
            #kept = ::std::option::Option::Some((__p, __r.offset().saturating_sub(__from)));
            __r.leave_instance(__saved);
            __pv
        }};
        return Some((
            rv,
            Some((
                quote!(let mut #kept: ::std::option::Option<(i128, u64)> = ::std::option::Option::None;),
                quote! {
                    #[doc = #doc]
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    pub #kept: ::std::option::Option<(i128, u64)>
                },
                quote!(#kept),
            )),
        ));
    }
    if keeps_read_pos(at) {
        let kept = temp_for("pos", &f.id);
        let doc = format!(
            " Where `{}` was read (`pos: {}`, from the start of its stream): its writer puts it back there.",
            f.id, at.pos.src
        );
        let rv = quote! {{
            let __p: i128 = #pos;
            #kept = __p;
            let __saved = __r.enter_instance(__p, #whole).map_err(|e| e.in_field(#fid))?;
            __r.enter(::statepack_runtime::io::PathSeg::Field(#fid));
            let __pv = #read_value;
            __r.leave_instance(__saved);
            __pv
        }};
        Some((
            rv,
            Some((
                quote!(let mut #kept: i128 = 0;),
                quote! {
                    #[doc = #doc]
                    #[serde(default)]
                    pub #kept: i128
                },
                quote!(#kept),
            )),
        ))
    } else {
        Some((
            quote! {{
                let __p: i128 = #pos;
                let __saved = __r.enter_instance(__p, #whole).map_err(|e| e.in_field(#fid))?;
            __r.enter(::statepack_runtime::io::PathSeg::Field(#fid));
                let __pv = #read_value;
                __r.leave_instance(__saved);
                __pv
            }},
            None,
        ))
    }
}

/// Wraps a positional instance's write (`stmt`, as for a `seq` field): encode it on its own
/// and queue it for its position (`ByteWriter::instance_writer`, `ByteWriter::place`).
pub(crate) fn emit_write(
    em: &mut Emitter<'_>,
    f: &Field,
    at: &Positional,
    scope: &Scope,
    stmt: TokenStream,
) -> Option<TokenStream> {
    let fid = f.id.as_str();
    if let Some(io) = &at.io_of {
        return super::io_of::emit_write(em, f, at, io, scope, stmt);
    }
    let whole = at.whole;
    if let Some(p) = placed(em, f) {
        return placed_write(em, f, &p, stmt);
    }
    let pos = if keeps_read_pos(at) {
        let kept = temp_for("pos", &f.id);
        quote!(self.#kept)
    } else {
        em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?
    };
    let what = f.key_path.as_str();
    Some(quote! {
        {
            let __pos: i128 = #pos;
            let mut __tw = __w.instance_writer(__pos, #whole).map_err(|e| e.in_field(#fid))?;
            {
                let __w = &mut __tw;
                #stmt
            }
            __w.place(__tw, #what);
        }
    })
}

/// How the writer places positional instance `f` of the type being emitted, when it does
/// (see [`crate::derive::placed_instances`]).
pub(crate) fn placed(em: &Emitter<'_>, f: &Field) -> Option<Placed> {
    let tn = em.cur_type.borrow().clone();
    let t = em.s.type_def(&tn)?;
    placed_instances(em.s, t).remove(&f.id)
}

/// The variable holding the byte offset of the `seq` field `holder` (a member a placed
/// instance derives, or the user-type field holding it), taken when it is written, for
/// `ByteWriter::patch_bytes`.
pub(crate) fn member_at(member: &str) -> proc_macro2::Ident {
    temp_for("placed_at", member)
}

/// For a `seq` field whose bytes hold the number a placed instance derives (the member, or
/// the user-type field holding it): the declaration of the variable keeping where it is
/// written and its write statement `stmt` taking that offset first; the instance's writer
/// writes the number over it. `None` for any other field.
pub(crate) fn holder_write(
    em: &Emitter<'_>,
    t: &crate::ir::TypeDef,
    f: &Field,
    stmt: TokenStream,
) -> Option<(TokenStream, TokenStream)> {
    let holds = t
        .fields
        .iter()
        .any(|g| g.at.is_some() && placed(em, g).is_some_and(|p| p.holder == f.id));
    if !holds {
        return None;
    }
    let at = member_at(&f.id);
    Some((
        quote!(let mut #at: usize = 0;),
        quote! { #at = __w.len(); #stmt },
    ))
}

/// The write of a positional instance the writer places itself: encode it once to see its
/// bytes, choose its position (`ByteWriter::derive_position`), write the member it derives
/// from over the bytes written for it, then encode it at that position and queue it.
fn placed_write(em: &Emitter<'_>, f: &Field, p: &Placed, stmt: TokenStream) -> Option<TokenStream> {
    let tn = em.cur_type.borrow().clone();
    let FieldKind::Int {
        bytes,
        signed,
        endian,
        ..
    } = &p.member.kind
    else {
        return None;
    };
    let rty = super::int_ty(*bytes, *signed);
    let tyname = super::int_ty_name(*bytes, *signed);
    let to_bytes = if matches!(endian, Endian::Be) {
        quote!(to_be_bytes)
    } else {
        quote!(to_le_bytes)
    };
    let fid = f.id.as_str();
    let mid = p.path.as_str();
    let what = f.key_path.as_str();
    let kept = temp_for("pos", &f.id);
    let at = member_at(&p.holder);
    let within = match p.within {
        0 => quote!(),
        n => {
            let n = proc_macro2::Literal::usize_unsuffixed(n);
            quote!(+ #n)
        }
    };
    let (step, offset) = (
        proc_macro2::Literal::i128_suffixed(p.step),
        proc_macro2::Literal::i128_suffixed(p.offset),
    );
    // The number: `(position - offset) / step`, without the parts that do nothing.
    let number = match (p.offset, p.step) {
        (0, 1) => quote!(__pos),
        (0, _) => quote!(__pos / #step),
        (_, 1) => quote!(__pos - #offset),
        _ => quote!((__pos - #offset) / #step),
    };
    let is_root = em.s.types.first().is_some_and(|r| r.name == tn);
    let reserved = if is_root {
        quote!(self.__beyond.len())
    } else {
        quote!(0)
    };
    Some(quote! {
        {
            let __probe = {
                let mut __tw = __w.instance_writer(0, false).map_err(|e| e.in_field(#fid))?;
                {
                    let __w = &mut __tw;
                    #stmt
                }
                __tw
            };
            let __pos: i128 = __w.derive_position(self.#kept, __probe.as_bytes(), #step, #offset, #reserved).map_err(|e| e.in_field(#fid))?;
            let __n: #rty = ::statepack_runtime::io::fit(#number, #tyname).map_err(|e| e.in_field(#mid))?;
            __w.patch_bytes(#at #within, &__n.#to_bytes()).map_err(|e| e.in_field(#mid))?;
            let mut __tw = __w.instance_writer(__pos, false).map_err(|e| e.in_field(#fid))?;
            {
                let __w = &mut __tw;
                #stmt
            }
            __w.place_derived(__tw, #what);
        }
    })
}

/// For a type whose value instances use `_io`: the reader's statement that keeps the stream's
/// position and size at the end of the type's `seq`, the struct member holding them and its
/// constructor entry.
pub(crate) fn io_end_member(
    t: &crate::ir::TypeDef,
    member_io: bool,
) -> Option<(TokenStream, TokenStream, TokenStream)> {
    if !keeps_io_end(t, member_io) {
        return None;
    }
    Some((
        quote!(let __io_end: (i128, i128) = (__r.io_pos(), __r.io_size());),
        quote! {
            #[doc = " `_io.pos` and `_io.size` of this value's stream when its `seq` had been read, for"]
            #[doc = " the value instances that use `_io` (`_io.eof` is `pos >= size`)."]
            #[serde(default)]
            pub __io_end: (i128, i128)
        },
        quote!(__io_end),
    ))
}

/// `value._io.pos`, `.size`, `.eof` of a user-type value (`value` is its code): from the
/// value's `__io_end`.
pub(crate) fn member_io(value: TokenStream, attr: &str) -> (TokenStream, Ty) {
    match attr {
        "pos" => (quote!(#value.__io_end.0), Ty::Int),
        "size" => (quote!(#value.__io_end.1), Ty::Int),
        _ => (
            group(quote!(#value.__io_end.0 >= #value.__io_end.1)),
            Ty::Bool,
        ),
    }
}
