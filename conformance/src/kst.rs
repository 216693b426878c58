//! Reads a `.kst` file: Kaitai Struct's language-neutral test description.
//!
//! ```yaml
//! id: enum_0            # the schema formats/enum_0.ksy
//! data: enum_0.bin      # the input, in src/
//! imports: [enum_deep]  # optional: other schemas the expressions name
//! asserts:              # each: actual and expected, or actual and exception
//!   - actual: pet_1
//!     expected: enum_0::animal::cat
//! exception: EndOfStreamError   # or {type: ..., message: ...}: reading must fail
//! ```

use statepack_codegen::yaml::{self, Node};

/// One assert of a kst.
#[derive(Debug, Clone, PartialEq)]
pub struct Assert {
    /// The expression evaluated over the decoded value.
    pub actual: String,
    /// What it must equal, or the error evaluating it must raise.
    pub expect: Expectation,
}

/// The right-hand side of an assert.
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    /// An expression the value must equal.
    Value(String),
    /// A Kaitai exception name (`ConversionError`) that evaluating `actual` must raise.
    Exception(String),
}

/// A parsed `.kst` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Kst {
    /// The test id, which is also the schema's id (`formats/<id>.ksy`).
    pub id: String,
    /// The input file name inside the suite's `src/`.
    pub data: String,
    /// Other schemas named by the expressions.
    pub imports: Vec<String>,
    /// The asserts, in file order.
    pub asserts: Vec<Assert>,
    /// The exception reading must raise (`EndOfStreamError`,
    /// `ValidationNotEqualError<u1>`), if any.
    pub exception: Option<String>,
}

/// Parses a kst. Errors: a message naming the missing or malformed key.
pub fn parse(text: &str, file: &str) -> Result<Kst, String> {
    let root = yaml::load(text, file).map_err(|d| statepack_codegen::render(&d))?;
    let map = root.as_map().ok_or("a kst is a mapping")?;
    let get = |k: &str| map.iter().find(|(key, _)| key.text == k).map(|(_, v)| v);
    let scalar = |k: &str| -> Result<String, String> {
        get(k)
            .and_then(Node::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("{file}: `{k}` is missing or not a scalar"))
    };
    let id = scalar("id")?;
    let data = scalar("data")?;
    let imports = match get("imports") {
        None => Vec::new(),
        Some(n) => n
            .as_seq()
            .ok_or_else(|| format!("{file}: `imports` is not a list"))?
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{file}: an import is not a scalar"))
            })
            .collect::<Result<_, _>>()?,
    };
    let exception = match get("exception") {
        None => None,
        Some(n) => {
            Some(exception_name(n).ok_or_else(|| format!("{file}: `exception` has no type"))?)
        }
    };
    let mut asserts = Vec::new();
    if let Some(n) = get("asserts") {
        for (i, a) in n
            .as_seq()
            .ok_or_else(|| format!("{file}: `asserts` is not a list"))?
            .iter()
            .enumerate()
        {
            let m = a
                .as_map()
                .ok_or_else(|| format!("{file}: asserts[{i}] is not a mapping"))?;
            let f = |k: &str| m.iter().find(|(key, _)| key.text == k).map(|(_, v)| v);
            let actual = f("actual")
                .and_then(Node::as_str)
                .ok_or_else(|| format!("{file}: asserts[{i}] has no `actual`"))?
                .to_owned();
            let expect = match (
                f("expected").and_then(Node::as_str),
                f("exception").and_then(exception_name),
            ) {
                (Some(e), _) => Expectation::Value(e.to_owned()),
                (None, Some(x)) => Expectation::Exception(x),
                (None, None) => {
                    return Err(format!(
                        "{file}: asserts[{i}] has neither `expected` nor `exception`"
                    ))
                }
            };
            asserts.push(Assert { actual, expect });
        }
    }
    Ok(Kst {
        id,
        data,
        imports,
        asserts,
        exception,
    })
}

fn exception_name(n: &Node) -> Option<String> {
    match n.as_str() {
        Some(s) => Some(s.trim().to_owned()),
        None => n
            .as_map()?
            .iter()
            .find(|(k, _)| k.text == "type")
            .and_then(|(_, v)| v.as_str())
            .map(|s| s.trim().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asserts_exceptions_and_imports() {
        let k = parse(
            "id: enum_import_seq\ndata: enum_0.bin\nimports:\n  - enum_0\nasserts:\n  - actual: pet_1\n    expected: enum_0::animal::cat\n  - actual: foo\n    expected: |\n      [\n        0x0a, 0x00\n      ]\n  - actual: to_i_r10\n    exception: ConversionError\n",
            "t.kst",
        )
        .unwrap();
        assert_eq!(k.id, "enum_import_seq");
        assert_eq!(k.data, "enum_0.bin");
        assert_eq!(k.imports, ["enum_0"]);
        assert_eq!(
            k.asserts[0].expect,
            Expectation::Value("enum_0::animal::cat".into())
        );
        assert_eq!(
            k.asserts[1].expect,
            Expectation::Value("[\n  0x0a, 0x00\n]\n".into())
        );
        assert_eq!(
            k.asserts[2].expect,
            Expectation::Exception("ConversionError".into())
        );
        assert_eq!(k.exception, None);

        let k = parse(
            "id: x\ndata: y.bin\nexception:\n  type: EndOfStreamError\n  message: m\n",
            "t.kst",
        )
        .unwrap();
        assert_eq!(k.exception.as_deref(), Some("EndOfStreamError"));
        let k = parse(
            "id: x\ndata: y.bin\nexception: ValidationNotEqualError<u1>\n",
            "t.kst",
        )
        .unwrap();
        assert_eq!(k.exception.as_deref(), Some("ValidationNotEqualError<u1>"));
        assert!(parse("id: x\n", "t.kst").unwrap_err().contains("`data`"));
    }
}
