//! The known-failures list, `conformance/failing_tests.txt`.
//!
//! One line per test that does not pass: `<name>: <reason>`, where `<name>` is a kst id
//! (`enum_0`) or a `formats_err` file (`formats_err/attr_bad_id.ksy`). `#` starts a comment;
//! blank lines are ignored. The runner fails when a test that is not listed fails, and when a
//! listed test passes, so the list always says exactly what does not work.

use std::collections::BTreeMap;

/// How the runner's reason for a schema the generator refused starts.
pub const REFUSED_PREFIX: &str = "refused by the generator: ";

/// How the runner's reasons start whose text is the generator's own verdict (a kst schema
/// refused; a valid `formats_err` schema refused; an erroneous one accepted). A list update
/// always takes the current text of these.
pub const GENERATOR_VERDICTS: &[&str] = &[
    REFUSED_PREFIX,
    "valid for Kaitai, refused: ",
    "accepted; Kaitai refuses it: ",
];

/// Parsed list: name -> reason.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct KnownFailures {
    /// Every listed name with its reason.
    pub entries: BTreeMap<String, String>,
}

impl KnownFailures {
    /// Parses the list. Errors: a line without a reason, or a name listed twice (with its
    /// line number).
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut entries = BTreeMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (name, reason) = line
                .split_once(": ")
                .map(|(a, b)| (a.trim(), b.trim()))
                .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                .ok_or_else(|| format!("line {}: expected `name: reason`, got {line:?}", n + 1))?;
            if entries.insert(name.to_owned(), reason.to_owned()).is_some() {
                return Err(format!("line {}: {name} is listed twice", n + 1));
            }
        }
        Ok(Self { entries })
    }

    /// Whether `name` is listed.
    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The entries of a fresh list for this run's `failures` (name, runner's reason): tests
    /// that pass now are dropped, new failures get the runner's reason, and a test still
    /// failing keeps its listed (possibly hand-written) reason, except that a verdict of the
    /// generator ([`GENERATOR_VERDICTS`]) always takes the generator's current message.
    pub fn updated(&self, failures: &[(String, String)]) -> Vec<(String, String)> {
        failures
            .iter()
            .map(|(name, now)| {
                let verdict = GENERATOR_VERDICTS.iter().any(|p| now.starts_with(p));
                let keep = self.entries.get(name).filter(|_| !verdict);
                (name.clone(), keep.cloned().unwrap_or_else(|| now.clone()))
            })
            .collect()
    }

    /// The text of a list holding `failures` (name, reason), sorted by name, under `header`.
    pub fn render(header: &str, failures: &[(String, String)]) -> String {
        let mut sorted: Vec<&(String, String)> = failures.iter().collect();
        sorted.sort();
        let mut out = String::from(header);
        for (name, reason) in sorted {
            let reason: String = reason.replace('\n', " ").chars().take(160).collect();
            out.push_str(&format!("{name}: {reason}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_render_round_trip() {
        let k = KnownFailures::parse(
            "# header\n\nenum_0: refused: imports\nformats_err/x.ksy: accepted\n",
        )
        .unwrap();
        assert!(k.contains("enum_0") && k.contains("formats_err/x.ksy") && !k.contains("x"));
        assert_eq!(k.entries["enum_0"], "refused: imports");
        let text = KnownFailures::render(
            "# h\n",
            &[
                ("b".into(), "two\nlines".into()),
                ("a".into(), "r: x".into()),
            ],
        );
        assert_eq!(text, "# h\na: r: x\nb: two lines\n");
        assert_eq!(KnownFailures::parse(&text).unwrap().entries["a"], "r: x");
        let k = KnownFailures::parse("a: hand-written why\nb: refused by the generator: old\ne: valid for Kaitai, refused: old\ngone: fixed now\n").unwrap();
        let fresh = k.updated(&[
            ("a".into(), "runner's text".into()),
            ("b".into(), "refused by the generator: new".into()),
            ("c".into(), "new failure".into()),
            ("e".into(), "valid for Kaitai, refused: new".into()),
        ]);
        assert_eq!(
            fresh,
            [
                ("a".to_owned(), "hand-written why".to_owned()),
                ("b".to_owned(), "refused by the generator: new".to_owned()),
                ("c".to_owned(), "new failure".to_owned()),
                ("e".to_owned(), "valid for Kaitai, refused: new".to_owned())
            ]
        );
        assert!(KnownFailures::parse("lonely\n")
            .unwrap_err()
            .contains("line 1"));
        assert!(KnownFailures::parse("a: x\na: y\n")
            .unwrap_err()
            .contains("twice"));
    }
}
