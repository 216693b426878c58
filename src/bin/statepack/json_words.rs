//! `encode`'s errors about a JSON value in the words of JSON: serde names what it expected by
//! the Rust type a field is read into (`expected u32`, `expected struct CbtkHead`) and what it
//! found by serde's own terms (`floating point`, `map`); this says the JSON type and range
//! instead (`expected an integer in 0..=4294967295, found the string "two"`), as
//! `encode --schema` does. The field path before the message and the line and column after
//! it are kept.

/// `msg` with serde's `invalid type: U, expected E` and `invalid value: U, expected E`
/// rewritten in JSON's terms; any other text is returned unchanged.
pub fn in_json_words(msg: &str) -> String {
    for (lead, wrong_value) in [("invalid type: ", false), ("invalid value: ", true)] {
        let Some(at) = msg.find(lead) else {
            continue;
        };
        let rest = &msg[at + lead.len()..];
        let Some(sep) = rest.rfind(", expected ") else {
            continue;
        };
        let (found, tail) = (&rest[..sep], &rest[sep + ", expected ".len()..]);
        let (expected, after) = match tail.find(" at line ") {
            Some(i) => (&tail[..i], &tail[i..]),
            None => (tail, ""),
        };
        let head = &msg[..at];
        let text = match (wrong_value, range_of(expected), number_in(found)) {
            (true, Some(range), Some(n)) => format!("{n} does not fit in {range}"),
            _ => format!(
                "expected {}, found {}",
                expected_words(expected),
                found_words(found)
            ),
        };
        return format!("{head}{text}{after}");
    }
    msg.to_owned()
}

/// The range of an integer type serde names (`u16`), as `0..=65535`.
fn range_of(rust_type: &str) -> Option<String> {
    Some(match rust_type {
        "u8" => format!("0..={}", u8::MAX),
        "u16" => format!("0..={}", u16::MAX),
        "u32" => format!("0..={}", u32::MAX),
        "u64" => format!("0..={}", u64::MAX),
        "i8" => format!("{}..={}", i8::MIN, i8::MAX),
        "i16" => format!("{}..={}", i16::MIN, i16::MAX),
        "i32" => format!("{}..={}", i32::MIN, i32::MAX),
        "i64" => format!("{}..={}", i64::MIN, i64::MAX),
        _ => return None,
    })
}

/// What serde says it expected, as a JSON type.
fn expected_words(expected: &str) -> String {
    if let Some(range) = range_of(expected) {
        return format!("an integer in {range}");
    }
    match expected {
        "f32" | "f64" => "a number".to_owned(),
        "a sequence" => "an array".to_owned(),
        e if e.starts_with("struct ") || e == "a map" => "an object".to_owned(),
        e if e.starts_with("a sequence of ") || e.starts_with("an array of ") => {
            format!("an array of {}", e.rsplit(" of ").next().unwrap_or(e))
        }
        e => e.to_owned(),
    }
}

/// What serde says it found (its `Unexpected` display), as a JSON value.
fn found_words(found: &str) -> String {
    let quoted = |s: &str| s.trim_matches('`').to_owned();
    if let Some(v) = found.strip_prefix("integer ") {
        return format!("the integer {}", quoted(v));
    }
    if let Some(v) = found.strip_prefix("floating point ") {
        return format!("the number {}", quoted(v));
    }
    if let Some(v) = found.strip_prefix("boolean ") {
        return format!("the boolean {}", quoted(v));
    }
    if let Some(v) = found.strip_prefix("string ") {
        return format!("the string {v}");
    }
    match found {
        "map" => "an object".to_owned(),
        "sequence" => "an array".to_owned(),
        "unit value" | "null" => "null".to_owned(),
        f => f.to_owned(),
    }
}

/// The number in serde's `integer `n`` or `floating point `x``.
fn number_in(found: &str) -> Option<&str> {
    found
        .strip_prefix("integer ")
        .or_else(|| found.strip_prefix("floating point "))
        .map(|v| v.trim_matches('`'))
}

#[cfg(test)]
mod tests {
    use super::in_json_words;

    #[test]
    fn serde_errors_in_json_words() {
        let cases = [
            (
                "head.num_units: invalid type: string \"two\", expected u32 at line 1 column 356",
                "head.num_units: expected an integer in 0..=4294967295, found the string \"two\" at line 1 column 356",
            ),
            (
                "a.b: invalid value: integer `70000`, expected u16 at line 3 column 9",
                "a.b: 70000 does not fit in 0..=65535 at line 3 column 9",
            ),
            (
                "a: invalid value: integer `-1`, expected u8",
                "a: -1 does not fit in 0..=255",
            ),
            (
                "x: invalid type: floating point `1.5`, expected i16",
                "x: expected an integer in -32768..=32767, found the number 1.5",
            ),
            (
                "head: invalid type: null, expected struct CbtkHead at line 1 column 8",
                "head: expected an object, found null at line 1 column 8",
            ),
            (
                "q: invalid type: map, expected a sequence",
                "q: expected an array, found an object",
            ),
            (
                "f: invalid type: boolean `true`, expected f32",
                "f: expected a number, found the boolean true",
            ),
            ("missing field `x` at line 2 column 1", "missing field `x` at line 2 column 1"),
        ];
        for (serde, ours) in cases {
            assert_eq!(in_json_words(serde), ours);
        }
    }
}
