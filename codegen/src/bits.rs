//! Bit-level schema constructs: `b1`..`b64` bit fields, `-sp-offset-binary` (signed values
//! stored as offset binary) and `-sp-varint: leb128` (a list of LEB128 groups held as one
//! number). Kept apart from the byte-level lowering and emitting so that each stays readable;
//! `docs/schema-language.md` ("Bit fields") is the reference.
//!
//! Alignment follows Kaitai Struct's compiler exactly, so that its parsers and ours agree:
//! inside one `seq`, a field that is not a bit field (a number, bytes, a string, contents or a
//! user type) and follows a bit field starts on the next byte; the skipped bits are padding
//! and must be zero on read (so decoding then encoding gives back the same bytes). Because
//! Kaitai Struct does not realign between types, a type must itself end on a byte boundary;
//! `- id: align, size: 0` as the last field pads it (a zero-length byte field after bits).

use crate::expr::{BinOp, Expr};
use crate::ir::{Field, FieldKind, Repeat};
use crate::lower::Lower;
use crate::yaml::{Key, Node};
use proc_macro2::TokenStream;
use quote::quote;

/// `Some(Some(w))` for `b1`..`b64`, `Some(None)` for other `b<digits>` names (an error),
/// `None` when `t` is not a bit type name at all.
pub(crate) fn bit_type(t: &str) -> Option<Option<u8>> {
    let digits = t.strip_prefix('b')?;
    let digits = digits
        .strip_suffix("be")
        .or_else(|| digits.strip_suffix("le"))
        .unwrap_or(digits);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse::<u8>().ok().filter(|w| (1..=64).contains(w)))
}

/// The bit order a bit type names itself (`b6le`: `Some(true)`, `b6be`: `Some(false)`), or
/// `None` for a plain `bN`, which takes `meta.bit-endian`.
pub(crate) fn explicit_bit_le(t: &str) -> Option<bool> {
    bit_type(t)?;
    if t.ends_with("le") {
        Some(true)
    } else if t.ends_with("be") {
        Some(false)
    } else {
        None
    }
}

/// True for the LEB128 stop condition `_ < 128` (also written `_ <= 127`).
fn is_leb128_stop(e: &Expr) -> bool {
    match e {
        Expr::Binary(BinOp::Lt, a, b) => {
            matches!(&**a, Expr::Name(n) if n == "_") && matches!(&**b, Expr::Int(128))
        }
        Expr::Binary(BinOp::Le, a, b) => {
            matches!(&**a, Expr::Name(n) if n == "_") && matches!(&**b, Expr::Int(127))
        }
        _ => false,
    }
}

impl Lower<'_> {
    /// Applies `-sp-offset-binary` and `-sp-varint` to a lowered field kind; reports misuse.
    pub(crate) fn bit_keys(
        &mut self,
        m: &[(Key, Node)],
        fp: &str,
        kind: FieldKind,
        repeat: &Repeat,
    ) -> Option<(FieldKind, bool)> {
        let get = |name: &str| m.iter().find(|(k, _)| k.text == name).map(|(_, v)| v);
        let mut kind = kind;
        if let Some(v) = get("-sp-offset-binary") {
            let kp = format!("{fp}.-sp-offset-binary");
            let on = self.boolean(v, &kp)?;
            match &mut kind {
                FieldKind::Bits {
                    width,
                    offset_binary,
                    ..
                } if *width >= 2 => *offset_binary = on,
                FieldKind::Bits { .. } => {
                    self.err(
                        v.pos,
                        &kp,
                        "`-sp-offset-binary` on a one-bit field",
                        "offset binary needs at least 2 bits (b1 holds -1 or 0); keep `b1` as a flag",
                    );
                    return None;
                }
                _ => {
                    self.err(
                        v.pos,
                        &kp,
                        "`-sp-offset-binary` on a field that is not a bit field",
                        "use it on `b2` .. `b64`; byte-sized signed numbers are `s1` .. `s8`",
                    );
                    return None;
                }
            }
        }
        let mut varint = false;
        if let Some(v) = get("-sp-varint") {
            let kp = format!("{fp}.-sp-varint");
            let s = self.scalar(v, &kp)?;
            if s != "leb128" {
                self.err(
                    v.pos,
                    &kp,
                    format!("varint encoding `{s}` is not supported"),
                    "write `-sp-varint: leb128`",
                );
                return None;
            }
            let group_ok = matches!(
                kind,
                FieldKind::Int {
                    bytes: 1,
                    signed: false,
                    enum_name: None,
                    ..
                } | FieldKind::Bits {
                    width: 8,
                    offset_binary: false,
                    enum_name: None,
                    ..
                }
            );
            let stop_ok = matches!(repeat, Repeat::Until(u) if is_leb128_stop(&u.expr));
            if !group_ok || !stop_ok {
                self.err(
                    v.pos,
                    &kp,
                    "`-sp-varint: leb128` needs the LEB128 group list: `type: u1` (byte-aligned) or `type: b8` (bit-aligned), `repeat: until`, `repeat-until: _ < 128`",
                    "write the field as Kaitai Struct reads LEB128: groups of 8 bits until one below 128",
                );
                return None;
            }
            varint = true;
        }
        Some((kind, varint))
    }
}

/// Whether a field is read as bits (continuing the bit stream) rather than from a byte start.
pub(crate) fn is_bit_field(f: &Field) -> bool {
    matches!(f.kind, FieldKind::Bits { .. })
}

/// The bit phase (bits past the last byte boundary) after `f`, when known statically:
/// `Some(0)` after any byte-aligned field, unknown (`None`) after a conditional or repeated bit
/// field (except repeats of whole bytes, such as varint groups).
pub(crate) fn phase_after(phase: Option<u32>, f: &Field) -> Option<u32> {
    let FieldKind::Bits { width, .. } = f.kind else {
        return Some(0);
    };
    let w = u32::from(width);
    match (&f.repeat, &f.cond) {
        (Repeat::None, None) => phase.map(|p| (p + w) % 8),
        (_, None) if w % 8 == 0 => phase,
        _ => None,
    }
}

/// The Rust type of one element of a bit field.
pub(crate) fn bits_rust_ty(width: u8, offset_binary: bool) -> TokenStream {
    match (width, offset_binary) {
        (1, false) => quote!(bool),
        (2..=8, false) => quote!(u8),
        (9..=16, false) => quote!(u16),
        (17..=32, false) => quote!(u32),
        (_, false) => quote!(u64),
        (..=8, true) => quote!(i8),
        (9..=16, true) => quote!(i16),
        (17..=32, true) => quote!(i32),
        (_, true) => quote!(i64),
    }
}

/// Reads one element of a bit field (an expression giving `Result<T, DecodeError>`).
pub(crate) fn bits_read(width: u8, offset_binary: bool, le: bool) -> TokenStream {
    let w = u32::from(width);
    let ty = bits_rust_ty(width, offset_binary);
    let m = if le {
        quote!(read_bits_le)
    } else {
        quote!(read_bits_be)
    };
    match (width, offset_binary) {
        (1, false) => quote!(__r.#m(1).map(|__b| __b != 0)),
        (_, false) => quote!(__r.#m(#w).map(|__b| __b as #ty)),
        (_, true) => {
            quote!(__r.#m(#w).map(|__b| ::statepack_runtime::bits::from_offset_binary(__b, #w) as #ty))
        }
    }
}

/// Writes one element `__v: &T` of a bit field (a statement-like expression with `?`).
pub(crate) fn bits_write(width: u8, offset_binary: bool, le: bool) -> TokenStream {
    let w = u32::from(width);
    let m = if le {
        quote!(write_bits_le)
    } else {
        quote!(write_bits_be)
    };
    match (width, offset_binary) {
        (1, false) => quote!(__w.#m(u64::from(*__v), 1)?),
        (_, false) => quote!(__w.#m(*__v as u64, #w)?),
        (_, true) => quote! {{
            let __code = ::statepack_runtime::bits::to_offset_binary(*__v as i64, #w).map_err(|_| ::statepack_runtime::io::EncodeError::new(::statepack_runtime::io::EncodeErrorKind::OutOfRange { value: __v.to_string(), ty: "this offset-binary bit field" }))?;
            __w.#m(__code, #w)?
        }},
    }
}

/// How a bit field's element is traced: offset-binary fields are traced with their value and
/// their stored code (what the bytes hold, and what Kaitai Struct reads), labelled.
pub(crate) fn bits_leave(width: u8, offset_binary: bool) -> TokenStream {
    let w = u32::from(width);
    if offset_binary {
        quote!(__r.leave(Some(&::statepack_runtime::io::TraceValue::Coded {
            value: __v as i128,
            code: ::statepack_runtime::bits::to_offset_binary(__v as i64, #w).unwrap_or(0),
            encoding: "offset binary",
        }));)
    } else {
        quote!(__r.leave(Some(&__v));)
    }
}

/// Reads a `-sp-varint: leb128` field: the groups are traced one by one as list elements (as
/// Kaitai Struct sees them) and combined into one `u64`. Refuses more than 64 value bits and a
/// trailing zero group (not the shortest form), so decoding then encoding is the identity.
pub(crate) fn varint_read(f: &Field, fid: &str) -> TokenStream {
    let group = match f.kind {
        FieldKind::Bits { .. } => quote!(__r.read_bits_be(8).map(|__b| __b as u8)),
        _ => quote!(__r.read_u8()),
    };
    quote! {{
        let __start = __r.offset();
        let mut __leb = ::statepack_runtime::bits::Leb128Decoder::new();
        let mut __i = 0usize;
        let __value: u64 = loop {
            __r.enter(::statepack_runtime::io::PathSeg::Index(__i));
            let __g: u8 = #group.map_err(|e| e.in_index(__i).in_field(#fid))?;
            __r.leave(Some(&__g));
            match __leb.push(__g) {
                Ok(Some(__v)) => break __v,
                Ok(None) => __i += 1,
                Err(__fault) => {
                    return Err(::statepack_runtime::io::DecodeError::new(__start, ::statepack_runtime::io::DecodeErrorKind::Semantic(__fault.to_string())).in_field(#fid));
                }
            }
        };
        __r.leave::<()>(None);
        __value
    }}
}

/// Writes a `-sp-varint: leb128` field from `__val: &u64`, shortest form, with the runtime's
/// LEB128 encoder.
pub(crate) fn varint_write(f: &Field) -> TokenStream {
    let put = match f.kind {
        FieldKind::Bits { .. } => quote!(__w.write_bits_be(u64::from(__g), 8)?),
        _ => quote!(__w.write_u8(__g)),
    };
    quote! {
        for __g in ::statepack_runtime::bits::leb128_groups(*__val) {
            #put;
        }
    }
}

/// A diagnostic position helper: where a type ends inside a byte.
pub(crate) fn unaligned_end_hint() -> &'static str {
    "add `- id: align` with `size: 0` as the last field: a byte-aligned field after bits pads to the next byte"
}
