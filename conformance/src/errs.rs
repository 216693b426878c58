//! The suite's `formats_err/`: schemas Kaitai's compiler refuses, each with the compiler's
//! message in its header comment.
//!
//! ```yaml
//! # attr_bad_id.ksy: /seq/0/id:
//! #     error: invalid attribute ID: 'BAD', expected /^[a-z][a-z0-9_]*$/
//! #
//! meta: ...
//! ```
//!
//! A file whose header names an `error:` must be refused by `statepack_codegen::generate`,
//! and one of our diagnostics should be about the same problem: [`ABOUT`] maps a part of
//! Kaitai's message to words one of our messages must contain. A file whose header only
//! has `warning:` lines, or that has no header (the import targets of other files), is a
//! valid schema. A header naming neither (`# ?`) is not checked.

/// What a `formats_err` file's header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Header {
    /// Kaitai refuses the schema with this message (the first `error:` line).
    Error(String),
    /// Kaitai accepts the schema, warning with this message.
    Warning(String),
    /// No header comment: a valid schema (an import target of other files).
    None,
    /// A header comment that names neither an error nor a warning.
    Unclear(String),
}

/// Reads the leading `#` comment block of a schema.
pub fn header(text: &str) -> Header {
    let mut comment = Vec::new();
    for line in text.lines() {
        match line.trim_start().strip_prefix('#') {
            Some(rest) => comment.push(rest.trim()),
            None => break,
        }
    }
    if comment.is_empty() {
        return Header::None;
    }
    if let Some(m) = comment.iter().find_map(|l| l.strip_prefix("error:")) {
        return Header::Error(m.trim().to_owned());
    }
    if let Some(m) = comment.iter().find_map(|l| l.strip_prefix("warning:")) {
        return Header::Warning(m.trim().to_owned());
    }
    Header::Unclear(comment.join(" ").trim().to_owned())
}

/// Part of Kaitai's message (lower case) -> words (lower case), one of which a statepack
/// diagnostic about the same problem contains. The first matching row is used.
pub const ABOUT: &[(&str, &[&str])] = &[
    ("import search paths", &["import"]),
    ("no such file or directory", &["import"]),
    (
        "parsing expression",
        &["expression", "parse", "syntax", "unexpected", "expected"],
    ),
    (
        "invalid type: expected",
        &["type", "boolean", "integer", "string", "bool"],
    ),
    ("parameter count mismatch", &["param", "argument"]),
    ("can't pass argument", &["argument", "param", "type"]),
    (
        "don't know how to call method",
        &[
            "method",
            "member",
            "unknown",
            "unsupported",
            "not supported",
        ],
    ),
    (
        "wrong arguments to method call",
        &["argument", "to_s", "encoding"],
    ),
    (
        "to_s: argument",
        &["argument", "to_s", "encoding", "literal"],
    ),
    (
        "can't use comparison operator",
        &["enum", "compar", "order"],
    ),
    (
        "can't compare",
        &["compar", "type", "is needed here", "not an integer"],
    ),
    (
        "invalid key found in value instance",
        &["key", "value instance", "instance"],
    ),
    ("unknown key found", &["key", "without `repeat`"]),
    (
        " id: '",
        &[
            "name",
            "identifier",
            "snake",
            "[a-z]",
            "lower",
            "not a valid",
        ],
    ),
    ("expected an integer from 0 to 255", &["255", "byte"]),
    (
        "duplicate",
        &["duplicate", "twice", "already", "has the name of"],
    ),
    ("`repeat: expr` requires", &["repeat-expr"]),
    ("`repeat: until` requires", &["repeat-until"]),
    ("endianness", &["endian", "byte order"]),
    ("unable to find enum", &["enum", "is not a value of"]),
    ("unable to find type", &["type"]),
    ("unable to derive sizeof", &["sizeof", "size"]),
    (
        "unable to apply unary operator",
        &["not", "operator", "boolean", "bool"],
    ),
    (
        "unable to access",
        &[
            "unknown",
            "no such",
            "not found",
            "not defined",
            "undefined",
            "no member",
            "no field",
            "not a field",
        ],
    ),
    ("tried to resolve non-integer", &["enum", "integer"]),
    ("version", &["version"]),
    ("no encoding found", &["encoding"]),
    ("only `true` is supported", &["in-enum", "true"]),
    ("`valid/in-enum` requires", &["enum"]),
    ("meta/id", &["meta", "id"]),
    (
        "missing mandatory argument",
        &["switch-on", "cases", "missing"],
    ),
    ("mapping values are not allowed", &["yaml"]),
    ("found duplicate key", &["duplicate"]),
    ("expected eos / expr / until", &["repeat"]),
    (
        "expected",
        &[
            "mapping", "list", "scalar", "string", "null", "a map", "an array", "empty",
        ],
    ),
];

/// Checks that one of `ours` (our diagnostics' messages) is about the problem Kaitai names
/// in `kaitai`. Errors: the words looked for, or that [`ABOUT`] has no row for the message.
pub fn about_the_problem(kaitai: &str, ours: &[String]) -> Result<(), String> {
    let k = kaitai.to_lowercase();
    let Some((_, words)) = ABOUT.iter().find(|(pat, _)| k.contains(pat)) else {
        return Err(format!("no keyword row for Kaitai's message {kaitai:?}"));
    };
    let hit = ours.iter().any(|m| {
        let m = m.to_lowercase();
        words.iter().any(|w| m.contains(w))
    });
    if hit {
        Ok(())
    } else {
        Err(format!(
            "refused, but not for Kaitai's reason {kaitai:?}: no message mentions {}; ours: {}",
            words.join(" / "),
            ours.first().map(String::as_str).unwrap_or("")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            header("# x.ksy: /seq/0/id:\n# \terror: invalid attribute ID: 'BAD'\n#\nmeta:\n"),
            Header::Error("invalid attribute ID: 'BAD'".into())
        );
        assert_eq!(
            header(
                "# x.ksy: /meta/encoding:\n# \twarning: unrecognized encoding name 'foo'\nmeta:\n"
            ),
            Header::Warning("unrecognized encoding name 'foo'".into())
        );
        assert_eq!(header("meta:\n  id: x\n"), Header::None);
        assert_eq!(header("# ?\nmeta:\n"), Header::Unclear("?".into()));
    }

    #[test]
    fn message_keywords() {
        assert!(about_the_problem(
            "invalid attribute ID: 'BAD', expected /^[a-z][a-z0-9_]*$/",
            &["field name `BAD` must be lower_snake_case".into()]
        )
        .is_ok());
        let e = about_the_problem("duplicate attribute ID 'foo'", &["unknown type `x`".into()])
            .unwrap_err();
        assert!(e.contains("duplicate"), "{e}");
        assert!(about_the_problem("something new", &[])
            .unwrap_err()
            .contains("no keyword row"));
    }
}
