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

/// A case type name that is a string type: `Some(false)` for `str` (the rest of the
/// switch's `size`), `Some(true)` for `strz` (up to a zero byte).
pub(crate) fn case_string(tn: &str) -> Option<bool> {
    match tn {
        "str" => Some(false),
        "strz" => Some(true),
        _ => None,
    }
}

/// Bytes per terminator of a `strz` in `encoding`: 2 in UTF-16 (two zero bytes at an even
/// offset), else 1.
pub(crate) fn strz_width(encoding: &str) -> u8 {
    if matches!(encoding, "UTF-16LE" | "UTF-16BE") {
        2
    } else {
        1
    }
}

/// A case type name that is a built-in type (a number type, `str` or `strz`), not a user
/// type: its variant holds a number or a `String`, with no members of its own.
pub(crate) fn case_builtin(tn: &str) -> bool {
    case_number(tn).is_some() || case_string(tn).is_some()
}

/// The number case types among `cases` that `.as<target>` picks out of a switch value:
/// those of the width, sign and kind of number type `target` (`u4`, `s2be`, `f8`), and of
/// its byte order when it names one. Empty when `target` is not a number type.
pub(crate) fn cast_cases<'a>(cases: &'a [String], target: &str) -> Vec<&'a String> {
    let (base, order) = if let Some(b) = target.strip_suffix("le") {
        (b, Some(Endian::Le))
    } else if let Some(b) = target.strip_suffix("be") {
        (b, Some(Endian::Be))
    } else {
        (target, None)
    };
    // `u1` and the like: a one-byte name stands for any order.
    let probe = match base.len() {
        2 if base.ends_with('1') => base.to_owned(),
        2 => format!("{base}le"),
        _ => return Vec::new(),
    };
    let Some((bytes, signed, float, _)) = case_number(&probe) else {
        return Vec::new();
    };
    cases
        .iter()
        .filter(|c| {
            case_number(c).is_some_and(|(b, s, f, e)| {
                (b, s, f) == (bytes, signed, float) && (bytes == 1 || order.is_none_or(|o| o == e))
            })
        })
        .collect()
}

/// `u3`, `s16`, `f6le`: a name a reader would take for a mistyped number type.
pub(crate) fn looks_like_number_type(t: &str) -> bool {
    (t.starts_with('u') || t.starts_with('s') || t.starts_with('f'))
        && t.len() <= 5
        && t.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
}
