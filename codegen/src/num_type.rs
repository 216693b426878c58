//! Kaitai Struct's built-in number type names (`u1`, `s2le`, `f8be`, ...) as the lowering,
//! the checks, the size analysis and the emitters read them.

use crate::ir::Endian;

/// A case type name that is a number type, as `lower` writes it (`u1`, `s1`, `u2le`,
/// `f8be`, ...): (bytes, signed, float, byte order).
pub(crate) fn case_number(tn: &str) -> Option<(u8, bool, bool, Endian)> {
    let (base, order) = if let Some(b) = tn.strip_suffix("le") {
        (b, Some(Endian::Le))
    } else if let Some(b) = tn.strip_suffix("be") {
        (b, Some(Endian::Be))
    } else {
        (tn, None)
    };
    let (kind, width) = base.split_at_checked(1)?;
    let bytes: u8 = match width {
        "1" => 1,
        "2" => 2,
        "4" => 4,
        "8" => 8,
        _ => return None,
    };
    // One-byte types have no byte order; `lower` gives every wider one its order.
    let endian = match (bytes, order) {
        (1, None) => Endian::Le,
        (1, Some(_)) | (_, None) => return None,
        (_, Some(e)) => e,
    };
    match kind {
        "u" => Some((bytes, false, false, endian)),
        "s" => Some((bytes, true, false, endian)),
        "f" if bytes >= 4 => Some((bytes, true, true, endian)),
        _ => None,
    }
}

/// `u3`, `s16`, `f6le`: a name a reader would take for a mistyped number type.
pub(crate) fn looks_like_number_type(t: &str) -> bool {
    (t.starts_with('u') || t.starts_with('s') || t.starts_with('f'))
        && t.len() <= 5
        && t.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
}
