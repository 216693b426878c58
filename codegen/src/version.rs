//! `meta.ks-version`: the Kaitai Struct compiler version a schema asks for.
//!
//! The generator implements the language of Kaitai Struct 0.11 ([`LANGUAGE_VERSION`]). As
//! in Kaitai's compiler, a schema asking for a later version is refused, and so is one asking
//! for a version before 0.6 or a value that is not `X.Y` / `X.Y.Z`. YAML reads an unquoted
//! `0.10` as the float 0.1, so an unquoted value is taken the way YAML reads it (trailing
//! zeros of the fraction dropped) and the message says to quote it.

/// The Kaitai Struct language version this generator implements, as `[major, minor, patch]`.
pub const LANGUAGE_VERSION: [u64; 3] = [0, 11, 0];

/// The oldest `ks-version` Kaitai's compiler accepts.
const MIN_VERSION: [u64; 3] = [0, 6, 0];

/// Checks a `ks-version` value (`text` as written; `quoted` when it was a quoted YAML
/// scalar). Errors: the message and hint of a diagnostic.
pub(crate) fn check_ks_version(text: &str, quoted: bool) -> Result<(), (String, String)> {
    let mut shown = text.trim().to_owned();
    // An unquoted `X.Y` is a YAML float: `0.10` is 0.1.
    let as_float = !quoted
        && shown.split('.').count() == 2
        && shown
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    if as_float {
        let (int, frac) = shown.split_once('.').unwrap_or((&shown, ""));
        let frac = frac.trim_end_matches('0');
        let frac = if frac.is_empty() { "0" } else { frac };
        let int = int.trim_start_matches('0');
        shown = format!("{}.{frac}", if int.is_empty() { "0" } else { int });
    }
    let parts: Vec<&str> = shown.split('.').collect();
    let well_formed = (2..=3).contains(&parts.len())
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && (p.len() == 1 || !p.starts_with('0'))
        });
    let nums: Option<Vec<u64>> = parts.iter().map(|p| p.parse().ok()).collect();
    let (true, Some(nums)) = (well_formed, nums) else {
        return Err((
            format!("`ks-version` `{text}` is not a version `X.Y` or `X.Y.Z` (non-negative integers without leading zeros)"),
            "write e.g. `ks-version: '0.11'`".into(),
        ));
    };
    let v = [nums[0], nums[1], nums.get(2).copied().unwrap_or(0)];
    let [a, b, c] = LANGUAGE_VERSION;
    if v > LANGUAGE_VERSION {
        return Err((
            format!("the schema needs Kaitai Struct version {shown}; statepack implements the language of version {a}.{b}.{c}"),
            format!("lower `ks-version` to {a}.{b} or less if the schema does not use newer features"),
        ));
    }
    if v < MIN_VERSION {
        let hint = if as_float {
            format!("YAML reads the unquoted `{text}` as the number {shown}: quote it (`ks-version: '{text}'`)")
        } else {
            "the oldest version is 0.6".to_owned()
        };
        return Err((
            format!(
                "`ks-version` {shown} is older than 0.6, the oldest version Kaitai Struct accepts"
            ),
            hint,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_ks_version;

    #[test]
    fn versions_as_kaitai_reads_them() {
        for ok in ["0.6", "0.9", "0.10", "0.11", "0.11.0"] {
            assert!(check_ks_version(ok, true).is_ok(), "{ok}");
        }
        assert!(check_ks_version("0.9", false).is_ok());
        assert!(check_ks_version("0.11", false).is_ok());
        // Unquoted, 0.10 is the float 0.1.
        let (m, h) = check_ks_version("0.10", false).unwrap_err();
        assert!(m.contains("0.1 is older than 0.6"), "{m}");
        assert!(h.contains("quote"), "{h}");
        assert!(check_ks_version("0.7f", false)
            .unwrap_err()
            .0
            .contains("not a version"));
        assert!(check_ks_version("01.2", true).is_err());
        assert!(check_ks_version("1", true).is_err());
        let (m, _) = check_ks_version("99.99.99", false).unwrap_err();
        assert!(m.contains("needs Kaitai Struct version 99.99.99"), "{m}");
        assert!(check_ks_version("0.12", true).is_err());
    }
}
