//! Bit-level schema constructs: `b1`..`b64` bit fields, `-sp-offset-binary` (signed values
//! stored as offset binary) and `-sp-varint: leb128` (a list of LEB128 groups held as one
//! number). What they mean for the layout (bit phase, alignment) is here; their lowering is in
//! `lower::bits` and their code in `emit::bits`. `docs/schema-language.md` ("Bit fields") is the reference.
//!
//! Alignment follows Kaitai Struct's compiler exactly, so that its parsers and ours agree:
//! inside one `seq`, a field that is not a bit field (a number, bytes, a string, contents or a
//! user type) and follows a bit field starts on the next byte; the skipped bits are padding
//! and must be zero on read (so decoding then encoding gives back the same bytes). Because
//! Kaitai Struct does not realign between types, a type must itself end on a byte boundary;
//! `- id: align, size: 0` as the last field pads it (a zero-length byte field after bits).

use crate::ir::{Field, FieldKind, Repeat, Schema};

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

/// Whether every type of `s` ends on a byte boundary when it starts on one: its bit fields
/// (positional ones aside) add up to whole bytes before each field that is not one and at
/// its end, with every phase known statically (no conditional or repeated bit field of a
/// width that is not whole bytes). Then, by induction over the types a value is made of,
/// every type starts on a byte boundary too (the root at the start of its input, the others
/// after whole bytes), and the static phase of [`phase_after`] is the phase of the reader:
/// where it is 0 before a field that is not a bit field, there are no padding bits to keep.
/// A type that may end inside a byte (allowed under Kaitai's rules) makes this `false` for
/// the whole schema, since the type after it starts where it ended.
pub(crate) fn every_type_ends_aligned(s: &Schema) -> bool {
    s.types.iter().all(|t| {
        let mut phase = Some(0);
        for f in t.fields.iter().filter(|f| f.at.is_none()) {
            if is_bit_field(f) {
                phase = phase_after(phase, f);
            } else if phase != Some(0) {
                return false;
            }
        }
        phase == Some(0)
    })
}

/// A diagnostic position helper: where a type ends inside a byte.
pub(crate) fn unaligned_end_hint() -> &'static str {
    "add `- id: align` with `size: 0` as the last field: a byte-aligned field after bits pads to the next byte"
}
