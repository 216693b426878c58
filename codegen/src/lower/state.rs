//! The lowering's state and its readers of YAML nodes: each reads a node of the shape it
//! expects or reports what it found, with the key path and a hint.

use crate::diag::{Diag, Pos};
use crate::expr;
use crate::ir::*;
use crate::yaml::{Key, Node, NodeKind};

/// KS keys this generator knows but does not support yet, with the hint to give.
const NOT_YET: &[(&str, &str)] = &[
    (
        "pos",
        "`pos` (seeking) is not supported; fields are read in stream order",
    ),
    (
        "io",
        "`io` is not supported; fields are read from the enclosing stream",
    ),
];

/// The lowering's state: the file, the diagnostics collected and the `meta` defaults in
/// force; its methods read YAML nodes, reporting what is not of the expected shape.
pub(crate) struct Lower<'a> {
    pub file: &'a str,
    pub diags: Vec<Diag>,
    /// Warnings: what is accepted but deserves a look (see [`Diag::warning`]).
    pub warnings: Vec<Diag>,
    pub(super) default_encoding: Option<&'static str>,
    pub(super) default_endian: Option<Endian>,
    /// `meta.-sp-strict`: the default of every field's `-sp-strict`.
    pub(super) strict: bool,
    /// `bit-endian: le` in force (the schema's or the enclosing type's `meta`).
    pub(super) bit_le: bool,
}

pub(super) fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn closest<'k>(word: &str, options: &[&'k str]) -> Option<&'k str> {
    fn dist(a: &str, b: &str) -> usize {
        let a: Vec<char> = a.chars().collect();
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for i in 1..=a.len() {
            let mut cur = vec![i; b.len() + 1];
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            }
            prev = cur;
        }
        prev[b.len()]
    }
    options
        .iter()
        .map(|o| (dist(word, o), *o))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, o)| o)
}

impl<'a> Lower<'a> {
    pub fn new(file: &'a str) -> Self {
        Self {
            file,
            diags: Vec::new(),
            warnings: Vec::new(),
            default_encoding: None,
            default_endian: None,
            strict: false,
            bit_le: false,
        }
    }

    pub(crate) fn err(
        &mut self,
        pos: Pos,
        path: &str,
        msg: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.diags.push(Diag::new(self.file, pos, path, msg, hint));
    }

    /// [`Self::err`] with a second place, labelled "first defined here".
    pub(super) fn err_twice(&mut self, pos: Pos, first: Pos, path: &str, msg: String, hint: &str) {
        let d = Diag::new(self.file, pos, path, msg, hint).with_related(
            self.file,
            first,
            "first defined here",
        );
        self.diags.push(d);
    }

    pub(super) fn unknown_key(
        &mut self,
        key: &Key,
        path: &str,
        allowed: &[&str],
        sp_allowed: &[&str],
    ) {
        let kp = if path.is_empty() {
            key.text.clone()
        } else {
            format!("{path}.{}", key.text)
        };
        // Kaitai Struct ignores every key that starts with `-`; so does statepack, except
        // its own `-sp-` keys, which are checked.
        if key.text.starts_with('-') && !key.text.starts_with("-sp-") {
            return;
        }
        if let Some((_, hint)) = NOT_YET.iter().find(|(k, _)| *k == key.text) {
            self.err(
                key.pos,
                &kp,
                format!("`{}` is not supported by statepack", key.text),
                *hint,
            );
            return;
        }
        if key.text.starts_with("-sp-") {
            let hint = if sp_allowed.is_empty() {
                "no extension keys are allowed here; see docs/schema-language.md".to_string()
            } else {
                format!("extension keys allowed here: {}", sp_allowed.join(", "))
            };
            self.err(
                key.pos,
                &kp,
                format!("unknown extension key `{}`", key.text),
                hint,
            );
            return;
        }
        let hint = match closest(&key.text, allowed) {
            Some(c) => format!("did you mean `{c}`?"),
            None => format!("keys allowed here: {}", allowed.join(", ")),
        };
        self.err(key.pos, &kp, format!("unknown key `{}`", key.text), hint);
    }

    pub(super) fn map<'n>(
        &mut self,
        node: &'n Node,
        path: &str,
        what: &str,
    ) -> Option<&'n [(Key, Node)]> {
        match node.as_map() {
            Some(m) => Some(m),
            None => {
                self.err(
                    node.pos,
                    path,
                    format!("{what} must be a mapping, found {}", node.shape()),
                    format!("write {what} as `key: value` lines"),
                );
                None
            }
        }
    }

    pub(crate) fn scalar<'n>(&mut self, node: &'n Node, path: &str) -> Option<&'n str> {
        match node.as_str() {
            Some(s) => Some(s),
            None => {
                self.err(
                    node.pos,
                    path,
                    format!("expected a single value, found {}", node.shape()),
                    "write a plain value here",
                );
                None
            }
        }
    }

    pub(crate) fn src_expr(&mut self, node: &Node, path: &str) -> Option<SrcExpr> {
        let text = self.scalar(node, path)?;
        if let NodeKind::Scalar { quoted: true, .. } = &node.kind {
            // A quoted YAML scalar is still an expression in KS; keep the text as written.
        }
        match expr::parse(text) {
            Ok(expr) => Some(SrcExpr {
                expr,
                src: text.to_owned(),
                pos: node.pos,
            }),
            Err(e) => {
                self.err(
                    node.pos,
                    path,
                    format!("bad expression `{text}`: {e}"),
                    "expressions use the Kaitai Struct grammar, e.g. `kind == frame_kind::absolute and num > 0`",
                );
                None
            }
        }
    }

    /// A whole number from `least` to 65,536 (an alignment or a count of padding bytes).
    pub(crate) fn small_count(&mut self, node: &Node, path: &str, least: u32) -> Option<u32> {
        let text = self.scalar(node, path)?;
        match text.parse::<u32>() {
            Ok(n) if (least..=65_536).contains(&n) => Some(n),
            _ => {
                self.err(
                    node.pos,
                    path,
                    format!("expected a whole number from {least} to 65536, found `{text}`"),
                    "write a decimal number of bytes, such as `4`",
                );
                None
            }
        }
    }

    pub(crate) fn boolean(&mut self, node: &Node, path: &str) -> Option<bool> {
        match self.scalar(node, path)? {
            "true" => Some(true),
            "false" => Some(false),
            other => {
                self.err(
                    node.pos,
                    path,
                    format!("expected `true` or `false`, found `{other}`"),
                    "write `true` or `false` (other YAML spellings such as `yes`/`on` are not booleans in KS)",
                );
                None
            }
        }
    }
}
