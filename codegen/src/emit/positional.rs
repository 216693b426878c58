//! The code of positional instances (`pos`, `io`) and of `_io`: the reader's jump to a
//! position and back, the writer's queue of instances, the kept `_io.pos`/`_io.size` (see
//! `crate::instances` for the order they are read in and what uses `_io`).

use super::{group, Emitter, Scope, Ty};
use crate::derive::{placed_instances, Placed};
use crate::instances::{keeps_io_end, keeps_read_pos};
use crate::ir::{Endian, Field, FieldKind, Positional, TypeId};
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
    if let Some(x) = &at.io_later {
        return super::io_later::emit_read(em, f, at, x, scope, read_value).map(|r| (r, None));
    }
    let pos = em.expect_ty(&at.pos, scope, &format!("{}.pos", f.key_path), Ty::Int)?;
    let whole = at.whole;
    if placed(em, f).is_some_and(|p| p.align.is_none()) {
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
        let doc = if trailer_len(em, f).is_some() {
            format!(
                " Where `{}` was read (`pos: {}`, from the start of its stream); its writer puts it back there, or after everything else where that reaches further, and ends the file with it.",
                f.id, at.pos.src
            )
        } else {
            format!(
                " Where `{}` was read (`pos: {}`, from the start of its stream): its writer puts it back there.",
                f.id, at.pos.src
            )
        };
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
    } else if let Some(align) = placed(em, f).and_then(|p| p.align) {
        // An `-sp-align` instance: where it was read is noted for the check of the type with
        // `-sp-end-zeros` holding its stream.
        let align = proc_macro2::Literal::u32_unsuffixed(align);
        Some((
            quote! {{
                let __p: i128 = #pos;
                let __saved = __r.enter_instance(__p, #whole).map_err(|e| e.in_field(#fid))?;
                let __from = __r.offset();
                __r.enter(::statepack_runtime::io::PathSeg::Field(#fid));
                let __pv = #read_value;
                __r.note_aligned(__from, __r.offset(), #align);
                __r.leave_instance(__saved);
                __pv
            }},
            None,
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
    if let Some(x) = &at.io_later {
        return Some(super::io_later::emit_write(f, x, stmt));
    }
    let whole = at.whole;
    if let Some(p) = placed(em, f) {
        if p.align.is_some() {
            return aligned_write(em, f, &p, stmt);
        }
        return placed_write(em, f, &p, whole, stmt);
    }
    if let Some(k) = trailer_len(em, f) {
        // After everything else, where it ends the file (`ByteWriter::place_trailer`).
        let k = proc_macro2::Literal::i128_suffixed(k);
        let what = f.key_path.as_str();
        let kept = temp_for("pos", &f.id);
        return Some(quote! {
            {
                let mut __tw = __w.trailer_writer(self.__beyond.len());
                {
                    let __w = &mut __tw;
                    #stmt
                }
                __w.place_trailer(__tw, #k, self.#kept, #what).map_err(|e| e.in_field(#fid))?;
            }
        });
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

/// `k` when `f` is the trailer of the root type being emitted (`pos: _io.size - k`, see
/// [`crate::instances::trailer`]), which the writer puts at the end of the file.
fn trailer_len(em: &Emitter<'_>, f: &Field) -> Option<i128> {
    if em.cur_type.get() != TypeId(0) {
        return None;
    }
    crate::instances::trailer(em.s).and_then(|(id, k)| (id == f.id).then_some(k))
}

/// How the writer places positional instance `f` of the type being emitted, when it does
/// (see [`crate::derive::placed_instances`]).
pub(crate) fn placed(em: &Emitter<'_>, f: &Field) -> Option<Placed> {
    let t = em.s.ty(em.cur_type.get());
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
/// bytes and where the instances it places go (`ByteWriter::probe_writer`), choose its
/// position (`ByteWriter::derive_placed`), write the member it derives from over the bytes
/// written for it, then encode it at that position and queue it. In a type other than the
/// root the instance is queued to be placed when the root lays out the output
/// (`ByteWriter::place_floating`).
fn placed_write(
    em: &Emitter<'_>,
    f: &Field,
    p: &Placed,
    whole: bool,
    stmt: TokenStream,
) -> Option<TokenStream> {
    let tn = em.cur_type.get();
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
    let is_root = tn == TypeId(0);
    let floating = (!is_root && !whole).then(|| {
        // Placed once the root lays out the output: until then the bytes written after this
        // type (later list elements, the rest of the enclosing types) are not known. (An
        // instance in the root's stream, `io: _root._io`, is placed where it is written,
        // after everything written so far.)
        let width = proc_macro2::Literal::usize_unsuffixed(*bytes as usize);
        let big = matches!(endian, Endian::Be);
        quote! {
            {
                let mut __tw = __w.instance_writer(0, false).map_err(|e| e.in_field(#fid))?;
                {
                    let __w = &mut __tw;
                    #stmt
                }
                __w.place_floating(__tw, #what, ::statepack_runtime::positional::Floating {
                    kept: self.#kept,
                    step: #step,
                    offset: #offset,
                    member_at: #at #within,
                    width: #width,
                    signed: #signed,
                    big_endian: #big,
                    ty: #tyname,
                    member: #mid,
                });
            }
        }
    });
    let reserved = if is_root {
        quote!(self.__beyond.len())
    } else {
        quote!(0)
    };
    let now = quote! {
        {
            let __probe = {
                let mut __tw = __w.probe_writer(#reserved, #whole);
                {
                    let __w = &mut __tw;
                    #stmt
                }
                __tw
            };
            let (__pos, __kept): (i128, bool) = __w.derive_placed(self.#kept, &__probe, #step, #offset, #reserved, #whole).map_err(|e| e.in_field(#fid))?;
            let __n: #rty = ::statepack_runtime::io::fit(#number, #tyname).map_err(|e| e.in_field(#mid))?;
            __w.patch_bytes(#at #within, &__n.#to_bytes()).map_err(|e| e.in_field(#mid))?;
            let mut __tw = __w.placed_writer(__pos, __kept, __probe.len(), #reserved, #whole).map_err(|e| e.in_field(#fid))?;
            {
                let __w = &mut __tw;
                #stmt
            }
            __w.place_derived(__tw, #what);
        }
    };
    // In a type other than the root the instance waits for the root's lay-out, unless the
    // type is written inside a positional instance (a trailer, a placed instance), whose
    // bytes are not in the root's output yet: there it is placed at once.
    Some(match floating {
        Some(later) => quote!(if __w.in_instance() { #now } else { #later }),
        None => now,
    })
}

/// The write of a positional instance placed when its stream is laid out (`-sp-align`):
/// encode it on its own and queue it with where its field's number goes
/// (`ByteWriter::place_aligned`); an instance whose `if` does not hold queues nothing.
fn aligned_write(
    em: &Emitter<'_>,
    f: &Field,
    p: &Placed,
    stmt: TokenStream,
) -> Option<TokenStream> {
    let FieldKind::Int {
        bytes,
        signed,
        endian,
        ..
    } = &p.member.kind
    else {
        return None;
    };
    let fid = f.id.as_str();
    let what = f.key_path.as_str();
    let mid = p.path.as_str();
    let at = member_at(&p.holder);
    let at = match p.within {
        0 => quote!(#at),
        n => {
            let n = proc_macro2::Literal::usize_unsuffixed(n);
            quote!(#at + #n)
        }
    };
    let width = proc_macro2::Literal::u8_unsuffixed(*bytes);
    let big = matches!(endian, Endian::Be);
    let (step, offset) = (
        proc_macro2::Literal::i128_suffixed(p.step),
        proc_macro2::Literal::i128_suffixed(p.offset),
    );
    let align = proc_macro2::Literal::u32_suffixed(p.align.unwrap_or(1));
    let bound = |b: Option<i128>| match b {
        Some(v) => {
            let v = proc_macro2::Literal::i128_suffixed(v);
            quote!(::std::option::Option::Some(#v))
        }
        None => quote!(::std::option::Option::None),
    };
    let (min, max) = (bound(p.bounds.0), bound(p.bounds.1));
    let present = if f.cond.is_some() {
        let id = crate::names::field_ident(&f.id);
        quote!(self.#id.is_some())
    } else {
        quote!(true)
    };
    let _ = em;
    Some(quote! {
        {
            let mut __tw = __w.instance_writer(0, false).map_err(|e| e.in_field(#fid))?;
            {
                let __w = &mut __tw;
                #stmt
            }
            __w.place_aligned(__tw, __io::AlignedSlot {
                at: #at,
                width: #width,
                signed: #signed,
                big: #big,
                step: #step,
                offset: #offset,
                align: #align,
                min: #min,
                max: #max,
                member: #mid,
            }, #present, #what);
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
