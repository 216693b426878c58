//! Loads a schema's YAML into a small tree that keeps every node's line and column.
//!
//! Built on `saphyr-parser`'s event stream rather than a YAML value type, for three reasons:
//! scalars stay as the text that was written (the KS expression grammar, not YAML typing,
//! interprets them: `0b100`, `010` and `on` mean one thing here), duplicate keys are caught
//! (a YAML map would keep only one), and anchors/aliases, which no schema needs, are refused.

use crate::diag::{Diag, Pos};
use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// A YAML node with the position where it starts.
#[derive(Debug, Clone)]
pub struct Node {
    /// Line and column of the node's first character.
    pub pos: Pos,
    /// What the node holds.
    pub kind: NodeKind,
}

/// The three YAML node shapes a schema uses.
#[derive(Debug, Clone)]
pub enum NodeKind {
    /// A scalar as written; `quoted` is true for single- or double-quoted scalars.
    Scalar {
        /// The text as written (quotes removed, escapes resolved).
        text: String,
        /// True for single- or double-quoted scalars.
        quoted: bool,
    },
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping with its keys in document order (keys are always scalars here).
    Map(Vec<(Key, Node)>),
}

/// A mapping key and where it is.
#[derive(Debug, Clone)]
pub struct Key {
    /// The key text.
    pub text: String,
    /// Where the key starts.
    pub pos: Pos,
}

impl Node {
    /// The scalar text, if this node is a scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// The mapping entries, if this node is a mapping.
    pub fn as_map(&self) -> Option<&[(Key, Node)]> {
        match &self.kind {
            NodeKind::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The sequence items, if this node is a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// A short name of the node's shape, for error messages.
    pub fn shape(&self) -> &'static str {
        match &self.kind {
            NodeKind::Scalar { .. } => "a scalar",
            NodeKind::Seq(_) => "a list",
            NodeKind::Map(_) => "a mapping",
        }
    }
}

fn pos_of(span: &Span) -> Pos {
    Pos {
        line: span.start.line(),
        col: span.start.col() + 1,
    }
}

/// Parses YAML text into a [`Node`] tree. All problems found are returned as diagnostics
/// (`key_path` is left empty for syntax errors).
pub fn load(text: &str, file: &str) -> Result<Node, Vec<Diag>> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Node> = None;
    let mut diags = Vec::new();
    let mut documents = 0usize;
    loop {
        let (event, span) = match parser.next_event() {
            None => break,
            Some(Ok(ev)) => ev,
            Some(Err(e)) => {
                let m = e.marker();
                diags.push(Diag::new(
                    file,
                    Pos {
                        line: m.line(),
                        col: m.col() + 1,
                    },
                    "",
                    format!("YAML syntax error: {}", e.info()),
                    "fix the YAML syntax at this position (indentation, quotes, `:` after keys)",
                ));
                return Err(diags);
            }
        };
        let pos = pos_of(&span);
        let node = match event {
            Event::StreamStart | Event::Nothing | Event::DocumentEnd => continue,
            Event::StreamEnd => break,
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    diags.push(Diag::new(
                        file,
                        pos,
                        "",
                        "more than one YAML document in a schema file",
                        "keep one schema per file; remove the extra `---` document",
                    ));
                    return Err(diags);
                }
                continue;
            }
            Event::Alias(_) => {
                diags.push(Diag::new(
                    file,
                    pos,
                    "",
                    "YAML aliases (`*name`) are not supported in schemas",
                    "write the value out in full instead of referring to an anchor",
                ));
                continue;
            }
            Event::Scalar(text, style, _, _) => Node {
                pos,
                kind: NodeKind::Scalar {
                    text: text.into_owned(),
                    quoted: matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted),
                },
            },
            Event::SequenceStart(_, _) => {
                stack.push(Frame::Seq(pos, Vec::new()));
                continue;
            }
            Event::MappingStart(_, _) => {
                stack.push(Frame::Map(pos, Vec::new(), None));
                continue;
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq(p, items)) => Node {
                    pos: p,
                    kind: NodeKind::Seq(items),
                },
                _ => continue,
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map(p, items, _)) => Node {
                    pos: p,
                    kind: NodeKind::Map(items),
                },
                _ => continue,
            },
        };
        // The key path of a key about to be read, for the duplicate-key error.
        let map_path = match stack.last() {
            Some(Frame::Map(_, _, None)) => key_path(&stack),
            _ => String::new(),
        };
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq(_, items)) => items.push(node),
            Some(Frame::Map(_, items, pending)) => {
                match pending.take() {
                    None => match node.kind {
                        NodeKind::Scalar { text, .. } => {
                            if let Some((first, _)) = items.iter().find(|(k, _)| k.text == text) {
                                let path = if map_path.is_empty() {
                                    text.clone()
                                } else {
                                    format!("{map_path}.{text}")
                                };
                                diags.push(Diag::new(
                                file,
                                node.pos,
                                &path,
                                format!(
                                    "duplicate key `{text}` (first at line {})",
                                    first.pos.line
                                ),
                                "remove one of the two entries; YAML keeps only one of them",
                            )
                            .with_related(file, first.pos, "first defined here"));
                            }
                            *pending = Some(Key {
                                text,
                                pos: node.pos,
                            });
                        }
                        _ => {
                            diags.push(Diag::new(
                                file,
                                node.pos,
                                "",
                                "mapping keys must be plain scalars",
                                "use a simple name as the key",
                            ));
                            *pending = Some(Key {
                                text: String::from("?"),
                                pos: node.pos,
                            });
                        }
                    },
                    Some(key) => items.push((key, node)),
                }
            }
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    root.ok_or_else(|| {
        vec![Diag::new(
            file,
            Pos { line: 1, col: 1 },
            "",
            "the schema file is empty",
            "start with a `meta:` section holding at least `id:`",
        )]
    })
}

/// The key path (`types.frame.seq[2]`) of the innermost open node.
fn key_path(stack: &[Frame]) -> String {
    let mut out = String::new();
    for frame in stack {
        match frame {
            Frame::Map(_, _, Some(key)) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&key.text);
            }
            Frame::Map(_, _, None) => {}
            Frame::Seq(_, items) => out.push_str(&format!("[{}]", items.len())),
        }
    }
    out
}

enum Frame {
    Seq(Pos, Vec<Node>),
    Map(Pos, Vec<(Key, Node)>, Option<Key>),
}
