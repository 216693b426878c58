//! The viewer's structure index: every field and list element a decode reads, as a flat list
//! in reading order, so the server can answer for one subtree, one byte or one page of
//! children without keeping the decoded file.
//!
//! A node keeps its bit range, its parent, its name, the stream its offsets count in, the
//! end of its subtree and its reading-order number (28 bytes). Leaf values are not kept: the
//! server decodes the file again when a page of leaves is shown and picks their values by
//! reading-order number ([`Index::values`]). A run of list elements that are equal-sized
//! leaves one after the other (a column of numbers) is one node standing for all of them, so
//! the index of a columnar file stays a small fraction of its decoded size. The number of
//! nodes is capped ([`Index::cap_for`]); a file with more fields shows the tree up to the cap
//! and says so.
//!
//! Streams: fields inside processed bytes (a zlib chunk) count their offsets from the start
//! of those bytes, as Kaitai Struct counts them. The decode's events do not say where a
//! processed stream starts, so the index infers it: a child that starts before its parent
//! does is read in a stream of its own, the parent's processed bytes (the formats' positional
//! instances that are not processed point forward of their parent).

use statepack::formats::events::{SinkTracer, TraceEvent};
use statepack::formats::FormatSpec;
use statepack::runtime::io::{DecodeError, PathSeg, TraceValue};
use std::collections::HashMap;

/// Set in [`Node::name`] for a list element (the low bits hold its index).
const INDEX_BIT: u32 = 1 << 31;

/// Patterns deeper than this are counted with their ancestor at this depth in the size
/// breakdown (recursive schemas would otherwise make one pattern per depth).
const MAX_PATTERN_DEPTH: usize = 8;

/// One field, list element, or run of equal-sized leaf list elements, as the index answers
/// for it ([`Index::node`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Node {
    /// Bit offset where it starts, in its stream.
    pub start_bit: u64,
    /// Bit offset just past it (past the last element, for a run).
    pub end_bit: u64,
    /// Index of the parent node (0 for the root itself).
    pub parent: u32,
    /// Index into [`Index::names`], or a list index with the top bit set (the first
    /// element's, for a run).
    pub name: u32,
    /// The stream its offsets count in: 0 for the file, else the index of the processed
    /// node whose bytes hold it.
    pub stream: u32,
    /// Index just past its subtree.
    pub next: u32,
    /// Reading-order number (of the first element, for a run): the n-th field entered.
    pub ord: u32,
    /// Elements it stands for: 1, or the length of a run.
    pub count: u32,
}

/// A node as stored: 28 bytes. A node whose start or length in bits does not fit 32 bits
/// has `len == u32::MAX` and its range in [`Index::wide`]. A node's element count is not
/// stored: a run is a childless node, and its count is the gap in reading-order numbers
/// to the node after it.
#[derive(Debug, Clone, Copy)]
struct Packed {
    start: u32,
    len: u32,
    parent: u32,
    name: u32,
    stream: u32,
    next: u32,
    ord: u32,
}

/// A reference to a node or to one element of a run: `(node, element)`.
pub type Ref = (u32, u32);

/// Where a decode stopped, placed in the tree.
#[derive(Debug, Clone)]
pub struct Failure {
    /// The error as the CLI prints it (field path, byte offset, what went wrong).
    pub message: String,
    /// The field path alone.
    pub path: String,
    /// The byte offset the error names.
    pub offset: u64,
    /// The innermost node open when reading stopped (the failing field, or its parent when
    /// the field itself was not entered).
    pub node: u32,
}

/// What a size breakdown row counts.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SizeRow {
    /// The field pattern, list indices as `[]` (`recordings[].frames[].pos`).
    pub field: String,
    /// Bytes (bits / 8, so bit fields count by their share).
    pub bytes: f64,
}

/// The index of one decode.
pub struct Index {
    /// Every node, in reading order; node 0 is the root.
    nodes: Vec<Packed>,
    /// Ranges (start, end bit) of the nodes that do not fit the packed form.
    wide: HashMap<u32, (u64, u64)>,
    /// Reading-order number past the last field.
    ord_end: u32,
    /// Field names.
    pub names: Vec<String>,
    /// True when the node cap stopped the index before the decode ended.
    pub truncated: bool,
    /// The decode's error, if the file does not decode.
    pub failure: Option<Failure>,
    /// Breakdown patterns (`a.b[].c`).
    patterns: Vec<String>,
    /// Bits per pattern, in the file's own bytes.
    stored_bits: Vec<u64>,
    /// Bits per pattern, inside processed bytes.
    inflated_bits: Vec<u64>,
    /// Leaf types and values kept with the index (`--schema`), by reading-order number;
    /// empty for the built-in formats, whose values are read again on demand.
    pub kept: HashMap<u32, (String, String)>,
    /// Type names of inner nodes (`--schema`), by reading-order number.
    pub type_names: HashMap<u32, String>,
}

/// An open node while building.
struct Open {
    idx: u32,
    /// Its size-breakdown pattern.
    pattern: u32,
    /// The pattern of its last child and that child's name key (list elements share one),
    /// so a long list looks its pattern up once.
    child_pattern: Option<(u32, u32)>,
    /// Its last child (for run merging), if any.
    last_child: Option<u32>,
    /// Where its last child ended, for closing it after an error.
    last_end: Option<u64>,
    opens_stream: bool,
}

/// Builds an [`Index`] from decode events (or from a tree walked in reading order).
pub struct Builder {
    ix: Index,
    open: Vec<Open>,
    name_ids: HashMap<&'static str, u32>,
    pattern_ids: HashMap<(u32, u32), u32>,
    ord: u32,
    cap: usize,
    /// Events below the cap are counted here so enters and leaves stay paired.
    skip_depth: usize,
    /// Merge runs of equal-sized leaf list elements.
    runs: bool,
}

impl Builder {
    /// A builder whose root is named `root` and stops adding nodes at `cap`; `runs` merges
    /// runs of equal-sized leaf elements into one node.
    pub fn new(root: &str, cap: usize, runs: bool) -> Self {
        let mut ix = Index {
            nodes: Vec::new(),
            wide: HashMap::new(),
            ord_end: 0,
            names: vec![root.to_owned()],
            truncated: false,
            failure: None,
            patterns: vec![String::new()],
            stored_bits: vec![0],
            inflated_bits: vec![0],
            kept: HashMap::new(),
            type_names: HashMap::new(),
        };
        ix.nodes.push(Packed {
            start: 0,
            len: 0,
            parent: 0,
            name: 0,
            stream: 0,
            next: 1,
            ord: u32::MAX,
        });
        Builder {
            ix,
            open: vec![Open {
                idx: 0,
                pattern: 0,
                child_pattern: None,
                last_child: None,
                last_end: None,
                opens_stream: false,
            }],
            name_ids: HashMap::new(),
            pattern_ids: HashMap::new(),
            ord: 0,
            cap,
            skip_depth: 0,
            runs,
        }
    }

    fn pattern(&mut self, parent: u32, name: u32, depth: usize) -> u32 {
        if depth > MAX_PATTERN_DEPTH {
            return parent;
        }
        let key = (
            parent,
            if name & INDEX_BIT != 0 {
                INDEX_BIT
            } else {
                name
            },
        );
        if let Some(&p) = self.pattern_ids.get(&key) {
            return p;
        }
        let base = &self.ix.patterns[parent as usize];
        let text = if name & INDEX_BIT != 0 {
            format!("{base}[]")
        } else if base.is_empty() {
            self.ix.names[name as usize].clone()
        } else {
            format!("{base}.{}", self.ix.names[name as usize])
        };
        let id = self.ix.patterns.len() as u32;
        self.ix.patterns.push(text);
        self.ix.stored_bits.push(0);
        self.ix.inflated_bits.push(0);
        self.pattern_ids.insert(key, id);
        id
    }

    /// The name id of a field name or list index.
    fn name_id(&mut self, seg: &PathSeg) -> u32 {
        match seg {
            PathSeg::Index(i) => INDEX_BIT | (*i as u32 & !INDEX_BIT),
            PathSeg::Field(f) => {
                if let Some(&id) = self.name_ids.get(f) {
                    return id;
                }
                let id = self.ix.names.len() as u32;
                self.ix.names.push((*f).to_owned());
                self.name_ids.insert(f, id);
                id
            }
        }
    }

    /// A field or element starts at bit `bit` (of its stream).
    pub fn enter(&mut self, seg: &PathSeg, bit: u64) {
        if self.skip_depth > 0 || self.ix.nodes.len() >= self.cap {
            self.ix.truncated = true;
            self.skip_depth += 1;
            return;
        }
        let name = self.name_id(seg);
        let depth = self.open.len();
        let Some(p) = self.open.last_mut() else {
            self.skip_depth += 1;
            return;
        };
        let (pidx, ppattern, cached) = (p.idx, p.pattern, p.child_pattern);
        let pstart = self.ix.range(pidx).0;
        if !p.opens_stream && pidx != 0 && bit < pstart {
            p.opens_stream = true;
        }
        let stream = if p.opens_stream {
            pidx
        } else {
            self.ix.nodes[pidx as usize].stream
        };
        let key = if name & INDEX_BIT != 0 {
            INDEX_BIT
        } else {
            name
        };
        let pattern = match cached {
            Some((k, pat)) if k == key => pat,
            _ => {
                let pat = self.pattern(ppattern, name, depth);
                if let Some(p) = self.open.last_mut() {
                    p.child_pattern = Some((key, pat));
                }
                pat
            }
        };
        let idx = self.ix.nodes.len() as u32;
        self.ix.nodes.push(Packed {
            start: 0,
            len: 0,
            parent: pidx,
            name,
            stream,
            next: idx + 1,
            ord: self.ord,
        });
        self.ix.set_range(idx, bit, bit);
        self.ord = self.ord.saturating_add(1);
        self.open.push(Open {
            idx,
            pattern,
            child_pattern: None,
            last_child: None,
            last_end: None,
            opens_stream: false,
        });
    }

    /// The innermost open field ends at bit `bit` (of its stream); `leaf` for a field without
    /// children that carries a value.
    pub fn leave(&mut self, bit: u64, leaf: bool) {
        if self.skip_depth > 0 {
            self.skip_depth -= 1;
            return;
        }
        if self.open.len() <= 1 {
            return;
        }
        let Some(o) = self.open.pop() else { return };
        let len = self.ix.nodes.len() as u32;
        let (start, _) = self.ix.range(o.idx);
        let end = bit.max(start);
        self.ix.set_range(o.idx, start, end);
        let n = &mut self.ix.nodes[o.idx as usize];
        n.next = len;
        let (stream, name, ord) = (n.stream, n.name, n.ord);
        let childless = len == o.idx + 1;
        if childless || o.opens_stream {
            let bits = end - start;
            let p = o.pattern as usize;
            if stream == 0 {
                self.ix.stored_bits[p] += bits;
            } else {
                self.ix.inflated_bits[p] += bits;
            }
        }
        let Some(parent) = self.open.last_mut() else {
            return;
        };
        parent.last_end = Some(end);
        // A leaf list element right after an equal-sized one joins its run (the run's
        // element count is the gap in reading-order numbers, see `Packed`).
        if self.runs && childless && leaf && name & INDEX_BIT != 0 && end > start {
            if let Some(prev) = parent.last_child {
                let pv = self.ix.nodes[prev as usize];
                let count = u64::from(ord.saturating_sub(pv.ord));
                let (ps, pe) = self.ix.range(prev);
                if prev + 1 == o.idx
                    && pv.next == o.idx
                    && pv.name & INDEX_BIT != 0
                    && pv.stream == stream
                    && pe == start
                    && count > 0
                    && (pe - ps) % count == 0
                    && (pe - ps) / count == end - start
                {
                    if self.ix.nodes.pop().is_some_and(|n| n.len == u32::MAX) {
                        self.ix.wide.remove(&o.idx);
                    }
                    self.ix.set_range(prev, ps, end);
                    self.ix.nodes[prev as usize].next = o.idx;
                    return;
                }
            }
        }
        parent.last_child = Some(o.idx);
    }

    /// Ends the index: closes what an error left open (each at the end of its last child in
    /// its own stream, or its start), sets the root's end and the failure.
    pub fn finish(mut self, root_end_bit: u64, err: Option<&DecodeError>) -> Index {
        let innermost = self.open.last().map(|o| o.idx).unwrap_or(0);
        while self.open.len() > 1 {
            let Some(o) = self.open.pop() else { break };
            let len = self.ix.nodes.len() as u32;
            let (start, _) = self.ix.range(o.idx);
            let end = if o.opens_stream {
                start
            } else {
                o.last_end.unwrap_or(start).max(start)
            };
            self.ix.set_range(o.idx, start, end);
            self.ix.nodes[o.idx as usize].next = len;
            if let Some(p) = self.open.last_mut() {
                p.last_end = Some(p.last_end.unwrap_or(0).max(end));
            }
        }
        let len = self.ix.nodes.len() as u32;
        self.ix.set_range(0, 0, root_end_bit);
        self.ix.nodes[0].next = len;
        self.ix.ord_end = self.ord;
        self.ix.nodes.shrink_to_fit();
        if let Some(e) = err {
            self.ix.failure = Some(Failure {
                message: e.to_string(),
                path: e.path.to_string(),
                offset: e.offset,
                node: innermost,
            });
        }
        self.ix
    }

    /// Keeps a leaf's type and value with the index (for trees that are not read again).
    #[cfg(feature = "schema")]
    pub fn keep_value(&mut self, ty: String, value: String) {
        if let Some(n) = self.ix.nodes.last() {
            self.ix.kept.insert(n.ord, (ty, value));
        }
    }

    /// Keeps an inner node's type name with the index.
    #[cfg(feature = "schema")]
    pub fn keep_type(&mut self, ty: &str) {
        if let Some(n) = self.ix.nodes.last() {
            self.ix.type_names.insert(n.ord, ty.to_owned());
        }
    }
}

/// The type shown for a leaf value.
pub fn value_type(v: &TraceValue) -> &'static str {
    match v {
        TraceValue::Int(_) => "int",
        TraceValue::Bool(_) => "bool",
        TraceValue::F32(_) => "f4",
        TraceValue::F64(_) => "f8",
        TraceValue::Str(_) => "str",
        TraceValue::Bytes(_) => "bytes",
        TraceValue::Enum { .. } => "enum",
        TraceValue::Coded { .. } => "coded int",
    }
}

/// Bytes of a value's text sent to the page (a long byte run or string is cut, with a count).
const VALUE_CHARS: usize = 256;

fn short(text: String) -> String {
    if text.chars().count() <= VALUE_CHARS {
        return text;
    }
    let total = text.chars().count();
    let head: String = text.chars().take(VALUE_CHARS).collect();
    format!("{head} ... ({total} characters)")
}

impl Index {
    /// The (start, end) bits of node `i`.
    fn range(&self, i: u32) -> (u64, u64) {
        let p = &self.nodes[i as usize];
        if p.len == u32::MAX {
            if let Some(&r) = self.wide.get(&i) {
                return r;
            }
        }
        (u64::from(p.start), u64::from(p.start) + u64::from(p.len))
    }

    fn set_range(&mut self, i: u32, start: u64, end: u64) {
        let p = &mut self.nodes[i as usize];
        match (u32::try_from(start), u32::try_from(end - start)) {
            (Ok(s), Ok(l)) if l != u32::MAX => {
                if p.len == u32::MAX {
                    self.wide.remove(&i);
                }
                (p.start, p.len) = (s, l);
            }
            _ => {
                (p.start, p.len) = (0, u32::MAX);
                self.wide.insert(i, (start, end));
            }
        }
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Node `i` (`i < len()`).
    pub fn node(&self, i: u32) -> Node {
        let p = self.nodes[i as usize];
        let (start_bit, end_bit) = self.range(i);
        let count = if i != 0 && p.next == i + 1 {
            let after = self
                .nodes
                .get(i as usize + 1)
                .map(|n| n.ord)
                .unwrap_or(self.ord_end);
            after.saturating_sub(p.ord).max(1)
        } else {
            1
        };
        Node {
            start_bit,
            end_bit,
            parent: p.parent,
            name: p.name,
            stream: p.stream,
            next: p.next,
            ord: p.ord,
            count,
        }
    }

    /// The node cap for an input of `len` bytes: one node per input byte plus 64 Ki, so
    /// the index stays within 40 bytes per input byte plus a fixed part.
    pub fn cap_for(len: usize) -> usize {
        len.saturating_add(1 << 16).min(INDEX_BIT as usize - 1)
    }

    /// Indexes `bytes` read as `fmt` (the decode `inspect` makes, events without values).
    pub fn of_format(fmt: &FormatSpec, bytes: &[u8]) -> Index {
        let mut b = Builder::new(fmt.schema, Self::cap_for(bytes.len()), true);
        let mut sink = |ev: TraceEvent| match ev {
            TraceEvent::Enter { seg, bit, .. } => b.enter(&seg, bit),
            TraceEvent::Leave { bit, .. } => b.leave(bit, true),
        };
        let (res, end) = (fmt.decode_events)(bytes, SinkTracer::new(&mut sink, false));
        b.finish(end * 8, res.as_ref().err())
    }

    /// Places the failure on reference `r` (the failing field, found by its path), whose
    /// value shows as not read unless a refused value was kept for it.
    #[cfg(feature = "schema")]
    pub fn mark_failed(&mut self, r: Ref) {
        let ord = self.ord(r);
        if let Some(f) = self.failure.as_mut() {
            f.node = r.0;
        }
        if let Some(v) = self.kept.get_mut(&ord) {
            if v.0 == "null" {
                *v = ("not read".to_owned(), "(reading stopped here)".to_owned());
            }
        }
    }

    /// The name of node `i` (`frames`, `[3]`).
    pub fn name(&self, r: Ref) -> String {
        let n = &self.node(r.0);
        if n.name & INDEX_BIT != 0 {
            format!("[{}]", u64::from(n.name & !INDEX_BIT) + u64::from(r.1))
        } else {
            self.names[n.name as usize].clone()
        }
    }

    /// True for a list element (its name is an index).
    pub fn is_element(&self, i: u32) -> bool {
        self.node(i).name & INDEX_BIT != 0
    }

    /// The bit range of a reference.
    pub fn bits(&self, r: Ref) -> (u64, u64) {
        let n = &self.node(r.0);
        if n.count <= 1 {
            return (n.start_bit, n.end_bit);
        }
        let size = (n.end_bit - n.start_bit) / u64::from(n.count);
        let s = n.start_bit + size * u64::from(r.1);
        (s, s + size)
    }

    /// Reading-order number of a reference.
    pub fn ord(&self, r: Ref) -> u32 {
        self.node(r.0).ord.wrapping_add(r.1)
    }

    /// Direct child nodes of node `i` (runs count once here).
    pub fn child_nodes(&self, i: u32) -> impl Iterator<Item = u32> + '_ {
        let end = self.node(i).next;
        let mut c = i + 1;
        std::iter::from_fn(move || {
            if c >= end {
                return None;
            }
            let here = c;
            c = self.node(c).next.max(c + 1);
            Some(here)
        })
    }

    /// Number of children of a reference (run elements counted one by one).
    pub fn child_count(&self, r: Ref) -> u64 {
        if self.node(r.0).count > 1 {
            return 0;
        }
        self.child_nodes(r.0)
            .map(|c| u64::from(self.node(c).count))
            .sum()
    }

    /// Children `from..from + count` of a reference (run elements one by one).
    pub fn children(&self, r: Ref, from: u64, count: u64) -> Vec<Ref> {
        let mut out = Vec::new();
        if self.node(r.0).count > 1 {
            return out;
        }
        let mut pos = 0u64;
        for c in self.child_nodes(r.0) {
            let n = u64::from(self.node(c).count);
            let (lo, hi) = (pos, pos + n);
            pos = hi;
            if hi <= from {
                continue;
            }
            let a = from.max(lo) - lo;
            let b = from.saturating_add(count).min(hi) - lo;
            for k in a..b {
                out.push((c, k as u32));
            }
            if pos >= from.saturating_add(count) {
                break;
            }
        }
        out
    }

    /// Position of a reference among its parent's children (run elements one by one).
    pub fn position(&self, r: Ref) -> u64 {
        let p = self.node(r.0).parent;
        let mut pos = 0u64;
        for c in self.child_nodes(p) {
            if c == r.0 {
                return pos + u64::from(r.1);
            }
            pos += u64::from(self.node(c).count);
        }
        pos
    }

    /// The references from the root down to `r`, each with its position in its parent.
    pub fn path_to(&self, r: Ref) -> Vec<(Ref, u64)> {
        let mut out = vec![(r, self.position(r))];
        let mut i = r.0;
        while i != 0 {
            i = self.node(i).parent;
            out.push(((i, 0), if i == 0 { 0 } else { self.position((i, 0)) }));
        }
        out.reverse();
        out
    }

    /// The innermost field of stream `stream` that covers byte `byte` of it (`None` when
    /// no field covers it). Positional instances may lie outside their parent's range (CBTK's
    /// column values, after the column directory that holds their entries; the window
    /// chunks, under a zero-length `windows[k]`), so when no child covers the byte, the
    /// children's subtrees are searched too.
    pub fn at_byte(&self, stream: u32, byte: u64) -> Option<Ref> {
        let lo = byte.saturating_mul(8);
        self.search(stream, stream, lo, lo.saturating_add(8), 0)
    }

    fn search(&self, node: u32, stream: u32, lo: u64, hi: u64, depth: usize) -> Option<Ref> {
        if depth > 512 {
            return None;
        }
        for c in self.child_nodes(node) {
            let n = self.node(c);
            if n.stream == stream && n.start_bit < hi && n.end_bit > lo {
                if n.count > 1 {
                    let size = ((n.end_bit - n.start_bit) / u64::from(n.count)).max(1);
                    let k = (lo.max(n.start_bit) - n.start_bit) / size;
                    return Some((c, k.min(u64::from(n.count) - 1) as u32));
                }
                return Some(self.search(c, stream, lo, hi, depth + 1).unwrap_or((c, 0)));
            }
        }
        for c in self.child_nodes(node) {
            let n = self.node(c);
            if n.stream == stream && n.next > c + 1 {
                if let Some(r) = self.search(c, stream, lo, hi, depth + 1) {
                    return Some(r);
                }
            }
        }
        None
    }

    /// The node reached by following `segs` (field names and list indices) from the root.
    pub fn find(&self, segs: &[PathSeg]) -> Option<Ref> {
        let mut cur: Ref = (0, 0);
        for seg in segs {
            cur = match seg {
                PathSeg::Field(f) => self
                    .child_nodes(cur.0)
                    .find(|&c| {
                        let n = self.node(c).name;
                        n & INDEX_BIT == 0 && self.names[n as usize] == *f
                    })
                    .map(|c| (c, 0))?,
                PathSeg::Index(i) => {
                    let v = self.children(cur, *i as u64, 1);
                    *v.first()?
                }
            };
        }
        Some(cur)
    }

    /// The field path of a reference (`head.strings[2].value`).
    pub fn path_text(&self, r: Ref) -> String {
        let mut parts = Vec::new();
        let mut cur = r;
        while cur.0 != 0 {
            parts.push(self.name(cur));
            cur = (self.node(cur.0).parent, 0);
        }
        parts.reverse();
        let mut s = String::new();
        for p in parts {
            if !s.is_empty() && !p.starts_with('[') {
                s.push('.');
            }
            s.push_str(&p);
        }
        s
    }

    /// Types and values of the leaves among `refs`: from the kept values, else by reading
    /// `bytes` again as `fmt` and picking the values by reading-order number.
    pub fn values(
        &self,
        fmt: Option<&FormatSpec>,
        bytes: &[u8],
        refs: &[Ref],
    ) -> HashMap<u32, (String, String)> {
        let mut want: Vec<u32> = refs
            .iter()
            .filter(|r| self.node(r.0).next == r.0 + 1)
            .map(|&r| self.ord(r))
            .collect();
        want.sort_unstable();
        let mut out = HashMap::new();
        if want.is_empty() {
            return out;
        }
        let Some(fmt) = fmt else {
            for o in want {
                if let Some(v) = self.kept.get(&o) {
                    out.insert(o, v.clone());
                }
            }
            return out;
        };
        let (first, last) = (want[0], want[want.len() - 1]);
        let mut ord = 0u32;
        let mut stack: Vec<u32> = Vec::new();
        let mut sink = |ev: TraceEvent| match ev {
            TraceEvent::Enter { .. } => {
                stack.push(ord);
                ord = ord.saturating_add(1);
            }
            TraceEvent::Leave { value, .. } => {
                if let Some(o) = stack.pop() {
                    if o >= first && o <= last && want.binary_search(&o).is_ok() {
                        if let Some(v) = value {
                            out.insert(o, (value_type(&v).to_owned(), short(v.to_string())));
                        }
                    }
                }
            }
        };
        let _ = (fmt.decode_events)(bytes, SinkTracer::new(&mut sink, true));
        out
    }

    /// The size breakdown: bits per field pattern in the file's bytes and in processed
    /// bytes, largest first, as bytes; the file's bytes no field covers make a row of
    /// their own.
    pub fn sizes(&self, file_len: u64) -> (Vec<SizeRow>, Vec<SizeRow>) {
        let rows = |bits: &[u64]| {
            let mut v: Vec<SizeRow> = bits
                .iter()
                .enumerate()
                .filter(|(_, &b)| b > 0)
                .map(|(i, &b)| SizeRow {
                    field: self.patterns[i].clone(),
                    bytes: b as f64 / 8.0,
                })
                .collect();
            v.sort_by(|a, b| b.bytes.total_cmp(&a.bytes));
            v
        };
        let mut stored = rows(&self.stored_bits);
        let counted: u64 = self.stored_bits.iter().sum();
        let gap = (file_len * 8).saturating_sub(counted);
        if gap > 0 {
            stored.push(SizeRow {
                field: "(bytes no field reads)".into(),
                bytes: gap as f64 / 8.0,
            });
        }
        (stored, rows(&self.inflated_bits))
    }
}

#[cfg(test)]
mod tests {
    use super::Index;
    use statepack::formats::FORMATS;
    use statepack::runtime::io::TraceNode;

    /// Every node of a traced decode in reading order, with its path text (list elements
    /// as `[i]`), when none of it lies in processed bytes.
    fn walk(t: &TraceNode, path: &str, out: &mut Vec<(String, u64, u64)>) {
        for c in &t.children {
            let p = if path.is_empty() || c.name.starts_with('[') {
                format!("{path}{}", c.name)
            } else {
                format!("{path}.{}", c.name)
            };
            out.push((p.clone(), c.start_bit, c.end_bit));
            walk(c, &p, out);
        }
    }

    fn innermost(t: &TraceNode, byte: u64) -> String {
        let mut path = String::new();
        let mut cur = t;
        'down: loop {
            for c in &cur.children {
                if c.start_bit < byte * 8 + 8 && c.end_bit > byte * 8 {
                    if !path.is_empty() && !c.name.starts_with('[') {
                        path.push('.');
                    }
                    path.push_str(&c.name);
                    cur = c;
                    continue 'down;
                }
            }
            return path;
        }
    }

    /// The index (runs merged) answers as the in-memory tree: every field's path and bits
    /// in reading order, and the innermost field of every byte, for every sample of every
    /// format whose fields all lie in the file's own bytes, whole and cut.
    #[test]
    fn index_answers_as_the_traced_tree() {
        let mut checked = 0;
        for fmt in FORMATS {
            for (name, bytes) in (fmt.samples)() {
                for cut in [bytes.len(), bytes.len() / 2] {
                    let b = &bytes[..cut];
                    let (res, tree) = (fmt.decode_traced)(b);
                    let ix = Index::of_format(fmt, b);
                    assert_eq!(ix.failure.is_some(), res.is_err(), "{} {name}", fmt.name);
                    if (0..ix.len() as u32).any(|i| ix.node(i).stream != 0) {
                        continue;
                    }
                    let mut want = Vec::new();
                    walk(&tree, "", &mut want);
                    let mut got = Vec::new();
                    for i in 1..ix.len() as u32 {
                        for k in 0..ix.node(i).count {
                            let (s, e) = ix.bits((i, k));
                            got.push((ix.path_text((i, k)), s, e));
                        }
                    }
                    assert_eq!(got, want, "{} {name} cut at {cut}", fmt.name);
                    if res.is_ok() {
                        for byte in 0..b.len() as u64 {
                            let r = ix.at_byte(0, byte);
                            let got = r.map(|r| ix.path_text(r)).unwrap_or_default();
                            assert_eq!(
                                got,
                                innermost(&tree, byte),
                                "{} {name} byte {byte}",
                                fmt.name
                            );
                        }
                    }
                    checked += 1;
                }
            }
        }
        assert!(checked > 10, "{checked} files checked");
    }

    /// A zlib chunk's fields count from the start of the inflated bytes, in a stream of the
    /// chunk's own; every byte of the inflated chunk belongs to a field there.
    #[test]
    fn processed_fields_get_their_own_stream() {
        let bytes = statepack::formats::cbtrack::worked_example_file();
        let ix = Index::of_format(&statepack::formats::cbtrack::FORMAT, &bytes);
        assert!(ix.failure.is_none());
        let info = ix
            .find(&[statepack::runtime::io::PathSeg::Field("info")])
            .expect("info chunk");
        let first = ix.child_nodes(info.0).next().expect("children");
        assert_eq!(ix.node(first).stream, info.0);
        assert_eq!(ix.node(first).start_bit, 0);
        let r = ix.at_byte(info.0, 0).expect("byte 0 of the inflated chunk");
        assert_eq!(ix.path_text(r), "info.directory.num_columns");
        // Column values are positional instances after the directory: the bytes a column's
        // values take select them (the first window's main chunk has columns).
        use statepack::runtime::io::PathSeg;
        let main = ix
            .find(&[
                PathSeg::Field("windows"),
                PathSeg::Index(0),
                PathSeg::Field("main"),
            ])
            .expect("window 0's main chunk");
        let info = main;
        let mut values = 0;
        let mut end = 0u64;
        for c in 0..ix.len() as u32 {
            let n = ix.node(c);
            if n.stream == info.0 {
                end = end.max(n.end_bit / 8);
            }
        }
        for byte in 0..end {
            if let Some(r) = ix.at_byte(info.0, byte) {
                let p = ix.path_text(r);
                assert!(p.starts_with("windows[0].main.directory"), "{p}");
                if p.contains("_values[") {
                    values += 1;
                }
            }
        }
        let all: Vec<String> = (0..end)
            .filter_map(|b| ix.at_byte(info.0, b))
            .map(|r| ix.path_text(r))
            .collect();
        assert!(values > 0, "no byte selects a column value: {end} {all:?}");
        // The chunk's stored bytes in the file select the chunk itself.
        let at = ix.node(main.0).start_bit / 8;
        assert_eq!(ix.at_byte(0, at), Some(main));
    }
}
