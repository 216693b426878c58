//! The traced decode's tree, within a memory budget that follows the input's length.
//!
//! A traced decode ([`crate::formats::FormatSpec::decode_traced`]) keeps a [`TraceNode`] for
//! every field read. Fields are not bounded by the input: a CBTK file whose windows inflate
//! one chunk over and over reads far more fields than it has bytes. The tree built here
//! keeps nodes while their estimated size stays within [`trace_budget`] of the input, and
//! past it keeps none: each node left open when the budget ran out gets, as its last child, a
//! marker node named [`NOT_KEPT`] whose value says how many fields under it were read but
//! not kept. The decode itself goes on to its end, so its result is the same as without a
//! tree.

use statepack_runtime::format::RootType;
use statepack_runtime::io::{DecodeError, PathSeg, TraceNode, TraceValue, Tracer};

/// Name of the marker node that stands for the fields not kept in a tree cut by the budget.
pub const NOT_KEPT: &str = "...";

/// Bytes of tree a traced decode of `input_len` bytes may allocate: 24 MiB plus 16 bytes
/// per input byte. What is counted is what the tree allocates: each node's name and value
/// text, and the lists of children at every size they grow to (a list grows by doubling, so
/// a node costs from one to four times its own size there); a field read costs about 200 to
/// 400 bytes in all. 24 MiB keeps every sample file the project builds whole (the largest
/// tree, of an 82 KB SNAP recording, is 59,584 fields and 13.7 MB). 16 bytes per input byte
/// leave 48 to what the decode itself keeps (the most of any format's raw layer: RPLY's op
/// list, 48 bytes per op byte), so a traced decode stays within 64 bytes per input byte
/// plus a fixed part.
pub fn trace_budget(input_len: usize) -> u64 {
    (24 << 20) + 16 * input_len as u64
}

/// A node in the making, with the count of fields read under it but not kept.
struct Open {
    node: TraceNode,
    /// Fields not kept directly or deeper under this node, and where the first started and
    /// the last ended.
    dropped: u64,
    dropped_span: (u64, u64),
}

/// Builds the tree of a traced decode within [`trace_budget`].
pub struct TreeBuilder {
    stack: Vec<Open>,
    budget: u64,
    used: u64,
    /// Set once a node was not kept: no later node is.
    full: bool,
    /// Depth of the innermost open field that is not kept (0: every open field is kept).
    skipping: u64,
}

const NODE: u64 = std::mem::size_of::<TraceNode>() as u64;

/// Nodes in a tree, its root included.
fn nodes(t: &TraceNode) -> u64 {
    1 + t.children.iter().map(nodes).sum::<u64>()
}

impl TreeBuilder {
    /// A builder whose root node is called `root_name`, for an input of `input_len` bytes.
    pub fn new(root_name: &str, input_len: usize) -> Self {
        let root = TraceNode {
            name: root_name.to_owned(),
            start: 0,
            end: 0,
            start_bit: 0,
            end_bit: 0,
            value: None,
            typed: None,
            children: Vec::new(),
        };
        Self {
            stack: vec![Open {
                node: root,
                dropped: 0,
                dropped_span: (0, 0),
            }],
            budget: trace_budget(input_len),
            used: 0,
            full: false,
            skipping: 0,
        }
    }

    fn keeping(&self) -> bool {
        self.skipping == 0 && !self.full && self.used < self.budget
    }

    /// Counts `n` fields not kept under the innermost open node, from `start` to `end`.
    fn drop_fields(&mut self, n: u64, start: u64, end: u64) {
        let top = self.stack.last_mut().expect("the root is open");
        if top.dropped == 0 {
            top.dropped_span = (start, end);
        }
        top.dropped += n;
        top.dropped_span.1 = top.dropped_span.1.max(end);
    }

    fn enter(&mut self, seg: PathSeg, offset: u64, bit: u64) {
        if !self.keeping() {
            self.full = true;
            self.skipping += 1;
            self.drop_fields(1, offset, offset);
            return;
        }
        let name = match seg {
            PathSeg::Field(f) => f.to_owned(),
            PathSeg::Index(i) => format!("[{i}]"),
        };
        self.used += name.capacity() as u64;
        self.stack.push(Open {
            node: TraceNode {
                name,
                start: offset,
                end: offset,
                start_bit: bit,
                end_bit: bit,
                value: None,
                typed: None,
                children: Vec::new(),
            },
            dropped: 0,
            dropped_span: (0, 0),
        });
    }

    fn leave(&mut self, offset: u64, bit: u64, value: Option<TraceValue>) {
        if self.skipping > 0 {
            self.skipping -= 1;
            let top = self.stack.last_mut().expect("the root is open");
            top.dropped_span.1 = top.dropped_span.1.max(offset);
            return;
        }
        if self.stack.len() > 1 {
            let mut open = self.stack.pop().expect("more than the root is open");
            open.node.end = offset;
            open.node.end_bit = bit;
            let text = value.as_ref().map(TraceValue::to_string);
            let value_cost = text.as_ref().map_or(0, |t| t.capacity() as u64)
                + match &value {
                    Some(TraceValue::Str(s)) => s.capacity() as u64,
                    Some(TraceValue::Bytes(b)) => b.capacity() as u64,
                    _ => 0,
                };
            open.node.value = text;
            open.node.typed = value;
            let node = Self::close(open);
            self.used += value_cost;
            self.push_child(node);
        }
    }

    /// Adds a closed node to the innermost open one, unless the list would grow past the
    /// budget: then the node and what it holds are counted as not kept.
    fn push_child(&mut self, node: TraceNode) {
        let list = &self.stack.last().expect("the root is open").node.children;
        let (len, cap) = (list.len(), list.capacity());
        if len == cap {
            let grown = (2 * cap).max(4) as u64 * NODE;
            if self.used + grown > self.budget {
                self.full = true;
                self.drop_fields(nodes(&node), node.start, node.end);
                return;
            }
        }
        let list = &mut self
            .stack
            .last_mut()
            .expect("the root is open")
            .node
            .children;
        list.push(node);
        if list.capacity() != cap {
            self.used += (list.capacity() * NODE as usize) as u64;
        }
    }

    /// The node with its marker child when fields under it were not kept. The marker takes
    /// the last place of a full list rather than growing it (the node it replaces is
    /// counted with the fields not kept).
    fn close(open: Open) -> TraceNode {
        let mut node = open.node;
        let mut dropped = open.dropped;
        if dropped > 0 {
            let (mut start, end) = open.dropped_span;
            if node.children.len() == node.children.capacity() {
                if let Some(last) = node.children.pop() {
                    dropped += nodes(&last);
                    start = start.min(last.start);
                }
            }
            let end = end.max(start);
            node.children.push(TraceNode {
                name: NOT_KEPT.to_owned(),
                start,
                end,
                start_bit: start * 8,
                end_bit: end * 8,
                value: Some(format!(
                    "{dropped} more field(s) read here, not kept: the traced decode keeps a tree of at most 24 MiB plus 16 bytes per input byte"
                )),
                typed: None,
                children: Vec::new(),
            });
        }
        node
    }

    /// The finished tree; `end` is the offset where the root ends. Nodes left open by an
    /// error are closed at the deepest offset reached.
    pub fn finish(mut self, end: u64) -> TraceNode {
        while self.stack.len() > 1 {
            let mut open = self.stack.pop().expect("more than the root is open");
            let last = open.node.children.last().map(|c| (c.end, c.end_bit));
            let (e, eb) = last.unwrap_or((open.node.start, open.node.start_bit));
            open.node.end = open.node.end.max(e).max(open.dropped_span.1);
            open.node.end_bit = open.node.end_bit.max(eb);
            let node = Self::close(open);
            self.push_child(node);
        }
        let open = self.stack.pop().expect("the root node");
        let mut root = Self::close(open);
        root.end = end;
        root.end_bit = end * 8;
        root
    }
}

/// The [`Tracer`] a reader is given: it feeds a [`TreeBuilder`] it borrows, and asks for
/// values only while the builder keeps nodes. For a format whose traced decode is read by
/// its own reader rather than its root type's (CBTK reads one chunk at a time).
pub struct Feed<'b>(&'b mut TreeBuilder);

impl<'b> Feed<'b> {
    /// A tracer that adds every field read to `builder`'s tree.
    pub fn new(builder: &'b mut TreeBuilder) -> Self {
        Self(builder)
    }
}

impl Tracer for Feed<'_> {
    fn enter(&mut self, seg: PathSeg, offset: u64) {
        self.0.enter(seg, offset, offset * 8);
    }
    fn leave(&mut self, offset: u64, value: Option<TraceValue>) {
        self.0.leave(offset, offset * 8, value);
    }
    fn enter_at(&mut self, seg: PathSeg, offset: u64, bit: u64) {
        self.0.enter(seg, offset, bit);
    }
    fn leave_at(&mut self, offset: u64, bit: u64, value: Option<TraceValue>) {
        self.0.leave(offset, bit, value);
    }
    fn wants_values(&self) -> bool {
        self.0.keeping()
    }
}

/// Decodes a whole file with root type `R`, recording its structure within
/// [`trace_budget`]: the result, and the tree (up to the failing field on error; cut with
/// [`NOT_KEPT`] markers past the budget).
pub fn decode_budgeted<R: RootType>(bytes: &[u8]) -> (Result<R, DecodeError>, TraceNode) {
    let mut b = TreeBuilder::new(R::SCHEMA_ID, bytes.len());
    let (r, end) = R::decode_root_with(bytes, Feed(&mut b));
    (r, b.finish(end))
}
