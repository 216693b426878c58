//! Which [`DecodeErrorKind`] answers which Kaitai Struct exception.
//!
//! A kst's `exception: ValidationNotEqualError<u1>` is met when reading fails with one of the
//! kinds listed for `ValidationNotEqualError` in [`KAITAI_EXCEPTIONS`] (the `<type>` part is
//! not checked: our errors carry the value, not its Kaitai type).

use statepack_runtime::io::DecodeErrorKind;

/// Kaitai's exception name -> the `DecodeErrorKind` variants that stand for it.
pub const KAITAI_EXCEPTIONS: &[(&str, &[&str])] = &[
    // The input (or the sized field) ends inside a field; a count that promises more
    // elements than the bytes left can hold is found before reading them, the same failure.
    ("EndOfStreamError", &["UnexpectedEof", "CountTooLarge"]),
    // `contents` are a `valid: eq` on bytes in Kaitai.
    ("ValidationNotEqualError", &["NotValid", "BadContents"]),
    ("ValidationLessThanError", &["NotValid"]),
    ("ValidationGreaterThanError", &["NotValid"]),
    ("ValidationNotAnyOfError", &["NotValid"]),
    ("ValidationExprError", &["NotValid"]),
    // `valid: {in-enum: true}`; a closed enum refuses the value the same way.
    ("ValidationNotInEnumError", &["NotValid", "UnknownEnum"]),
    // `meta.endian` decided by a switch with no matching case.
    ("UndecidedEndiannessError", &["Semantic", "NotValid"]),
];

/// The variant name of a decode error kind (`UnexpectedEof`).
pub fn kind_name(kind: &DecodeErrorKind) -> String {
    let dbg = format!("{kind:?}");
    dbg.split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("")
        .to_owned()
}

/// Checks that `kind` answers the Kaitai exception `kaitai` (`ValidationNotEqualError<u1>`).
/// Errors: a message naming both, or the exception name this table does not know.
pub fn matches(kaitai: &str, kind: &DecodeErrorKind) -> Result<(), String> {
    let base = kaitai.split('<').next().unwrap_or(kaitai).trim();
    let got = kind_name(kind);
    match KAITAI_EXCEPTIONS.iter().find(|(k, _)| *k == base) {
        None => Err(format!(
            "no decode error kind is mapped to Kaitai's {base} (got {got}: {kind})"
        )),
        Some((_, kinds)) if kinds.contains(&got.as_str()) => Ok(()),
        Some((_, kinds)) => Err(format!(
            "expected {kaitai} ({}), got {got}: {kind}",
            kinds.join(" or ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_to_kaitai_exceptions() {
        let eof = DecodeErrorKind::UnexpectedEof {
            needed: 4,
            available: 3,
        };
        assert_eq!(kind_name(&eof), "UnexpectedEof");
        assert!(matches("EndOfStreamError", &eof).is_ok());
        let bad = DecodeErrorKind::NotValid {
            value: "3".into(),
            rule: "eq 4",
        };
        assert!(matches("ValidationNotEqualError<u1>", &bad).is_ok());
        assert!(matches("ValidationGreaterThanError<f4>", &bad).is_ok());
        let e = matches("EndOfStreamError", &bad).unwrap_err();
        assert!(
            e.contains("expected EndOfStreamError") && e.contains("got NotValid"),
            "{e}"
        );
        assert!(matches("NoSuchError", &eof)
            .unwrap_err()
            .contains("no decode error kind"));
    }
}
