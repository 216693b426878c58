//! Schema diagnostics: every problem found in a schema, with file:line:column, the key path
//! inside the schema (`types.frame.seq[2].if`) and a one-line fix hint.

use std::fmt;

/// A line (1-based) and column (1-based) in a schema file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub col: usize,
}

/// One schema error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diag {
    /// The schema file as given to the generator.
    pub file: String,
    /// Where the offending key or value starts.
    pub pos: Pos,
    /// Key path inside the schema, e.g. `types.frame.seq[2].if` (empty for YAML syntax errors).
    pub key_path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it, in one line.
    pub hint: String,
    /// A second place the problem involves (the first definition of a name defined twice,
    /// the other side of a conflict), printed as a `note:` line.
    pub related: Option<Related>,
    /// A warning rather than an error: the schema is accepted (an encoding the generator does
    /// not know, which the reader refuses when it meets the field, as Kaitai Struct's do).
    pub warning: bool,
}

/// The second place of a two-place diagnostic ("first defined here").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Related {
    /// The schema file of that place (another file when it came through `imports`).
    pub file: String,
    /// Where it is.
    pub pos: Pos,
    /// What is there, e.g. "first defined here".
    pub label: String,
}

impl Diag {
    /// A new diagnostic.
    pub fn new(
        file: &str,
        pos: Pos,
        key_path: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            file: file.to_owned(),
            pos,
            key_path: key_path.to_owned(),
            message: message.into(),
            hint: hint.into(),
            related: None,
            warning: false,
        }
    }

    /// A new warning (see [`Diag::warning`]).
    pub fn warn(
        file: &str,
        pos: Pos,
        key_path: &str,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            warning: true,
            ..Self::new(file, pos, key_path, message, hint)
        }
    }

    /// The same diagnostic with a second place, labelled (`note: file:line:col: label`).
    pub fn with_related(mut self, file: &str, pos: Pos, label: impl Into<String>) -> Self {
        self.related = Some(Related {
            file: file.to_owned(),
            pos,
            label: label.into(),
        });
        self
    }
}

impl fmt::Display for Diag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}: {}",
            self.file,
            self.pos.line,
            self.pos.col,
            if self.warning { "warning" } else { "error" },
            self.message
        )?;
        if !self.key_path.is_empty() {
            write!(f, "\n  at: {}", self.key_path)?;
        }
        if let Some(r) = &self.related {
            write!(
                f,
                "\n  note: {}:{}:{}: {}",
                r.file, r.pos.line, r.pos.col, r.label
            )?;
        }
        write!(f, "\n  hint: {}", self.hint)
    }
}

/// Renders a list of diagnostics the way the generator prints them (one blank line between).
pub fn render(diags: &[Diag]) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&d.to_string());
        out.push_str("\n\n");
    }
    let warnings = diags.iter().filter(|d| d.warning).count();
    if warnings == diags.len() && warnings > 0 {
        out.push_str(&format!("{warnings} warning(s)\n"));
    } else {
        out.push_str(&format!("{} error(s)\n", diags.len() - warnings));
    }
    out
}
