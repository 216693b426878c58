//! `inspect`'s tree, printed while the file is read: one line per field or list element with
//! its byte range (`start..end size B`), its name indented by depth, and its value for
//! leaves. A bit field shows the bytes it touches, its size in bits (`3 b`) and its bit range
//! (`(bits 122..125)`), never an empty byte range. A list shows its first `max_items` elements and a
//! count of the rest, a byte run its first `max_items` bytes, a string its first
//! 16 × `max_items` characters (0 shows everything).
//!
//! Memory: a line needs its field's end before its children are printed, so the file is read
//! twice: the first pass keeps the end of each field with children that will be printed (8
//! bytes per such line, whatever the field holds; 16 for inputs of 512 MiB and more), the
//! second prints (a leaf's line when it is left, with the end its leave gives). Fields not
//! printed (past `max_items` in a list) keep nothing, so with the default `--max-items` the
//! tree's memory follows the lines printed, not the fields read: a zlib chunk that inflates
//! to millions of column values costs no more than its first values. `inspect --max-items 0`
//! prints every field and keeps 8 bytes for each list, element or type with members, none
//! for a value. Besides the
//! tree, `inspect` holds what the format's `decode_events` holds: the raw decode for most
//! formats, one chunk at a time for CBTK (`cbtrack::decode_events`).

use statepack::formats::events::{SinkTracer, TraceEvent};
use statepack::formats::FormatSpec;
use statepack::runtime::io::{show_bytes, DecodeError, PathSeg, TraceValue};
use std::io::{self, Write};

/// Characters of a string shown per `--max-items` (so 64 by default).
pub const STR_CHARS_PER_ITEM: usize = 16;

/// One tree line: byte range, size, indented name, value (byte runs and strings bounded by
/// `max_items`, 0 for all), bit range inside a bit-field run.
#[allow(clippy::too_many_arguments)]
pub fn line(
    out: &mut dyn Write,
    (start, end): (u64, u64),
    (start_bit, end_bit): (u64, u64),
    depth: usize,
    name: &str,
    value: Option<&TraceValue>,
    max_items: usize,
) -> io::Result<()> {
    let indent = "  ".repeat(depth);
    let value = match value {
        Some(TraceValue::Bytes(b)) if max_items != 0 && b.len() > max_items => format!(
            " = {} ... {} more bytes",
            show_bytes(&b[..max_items]),
            b.len() - max_items
        ),
        // A long string likewise: its first `STR_CHARS_PER_ITEM × max_items` characters.
        Some(TraceValue::Str(t))
            if max_items != 0 && t.chars().nth(STR_CHARS_PER_ITEM * max_items).is_some() =>
        {
            let shown: String = t.chars().take(STR_CHARS_PER_ITEM * max_items).collect();
            format!(
                " = {} ... {} more characters",
                TraceValue::Str(shown),
                t.chars().count() - STR_CHARS_PER_ITEM * max_items
            )
        }
        Some(v) => format!(" = {v}"),
        None => String::new(),
    };
    if start_bit != start * 8 || end_bit != end * 8 {
        return bit_line(out, (start_bit, end_bit), depth, name, &value);
    }
    writeln!(
        out,
        "{start:>8}..{end:<8} {:>6} B  {indent}{name}{value}",
        end - start
    )
}

/// A bit field's tree line: the bytes it touches, its size in bits (`3 b`), its name
/// indented by `depth`, `value` (` = ...` or empty) and its bit range (`(bits 122..125)`),
/// so a bit field never shows an empty byte range. Bits count from the start of the
/// field's stream.
pub fn bit_line(
    out: &mut dyn Write,
    (start_bit, end_bit): (u64, u64),
    depth: usize,
    name: &str,
    value: &str,
) -> io::Result<()> {
    let indent = "  ".repeat(depth);
    let (first, last) = (start_bit / 8, end_bit.div_ceil(8).max(start_bit / 8));
    writeln!(
        out,
        "{first:>8}..{last:<8} {:>6} b  {indent}{name}{value}  (bits {start_bit}..{end_bit})",
        end_bit - start_bit
    )
}

/// The "... N more" line after a list's shown elements.
pub fn more(out: &mut dyn Write, depth: usize, n: usize) -> io::Result<()> {
    let indent = "  ".repeat(depth);
    writeln!(out, "{:>26}  {indent}  ... {n} more", "")
}

/// Where each field ends (byte and bit offset), in reading order: 8 bytes per field when
/// every bit offset of the input fits in 32 bits (inputs under 512 MiB), else 16.
enum Ends {
    Small(Vec<[u32; 2]>),
    Large(Vec<[u64; 2]>),
}

impl Ends {
    fn for_input(len: usize) -> Self {
        if (len as u64).saturating_mul(8) < u64::from(u32::MAX) {
            Ends::Small(Vec::new())
        } else {
            Ends::Large(Vec::new())
        }
    }

    fn len(&self) -> usize {
        match self {
            Ends::Small(v) => v.len(),
            Ends::Large(v) => v.len(),
        }
    }

    /// Offsets in the input's own stream never pass its end, so they fit the small form
    /// (checked in `for_input`); those inside processed bytes (a zlib chunk) count from the
    /// start of those bytes and may be larger than the input: the first one that does not fit
    /// moves every end to the large form.
    fn widen_for(&mut self, e: (u64, u64)) {
        if let Ends::Small(v) = self {
            if u32::try_from(e.1).is_err() {
                let large = v
                    .iter()
                    .map(|x| [u64::from(x[0]), u64::from(x[1])])
                    .collect();
                *self = Ends::Large(large);
            }
        }
    }

    fn push(&mut self, e: (u64, u64)) {
        self.widen_for(e);
        match self {
            Ends::Small(v) => v.push([e.0 as u32, e.1 as u32]),
            Ends::Large(v) => v.push([e.0, e.1]),
        }
    }

    fn set(&mut self, i: usize, e: (u64, u64)) {
        self.widen_for(e);
        match self {
            Ends::Small(v) => v[i] = [e.0 as u32, e.1 as u32],
            Ends::Large(v) => v[i] = [e.0, e.1],
        }
    }

    fn get(&self, i: usize) -> Option<(u64, u64)> {
        match self {
            Ends::Small(v) => v.get(i).map(|e| (u64::from(e[0]), u64::from(e[1]))),
            Ends::Large(v) => v.get(i).map(|e| (e[0], e[1])),
        }
    }

    /// Drops the last end (a leaf's, whose line is printed when it is left).
    fn pop(&mut self) {
        match self {
            Ends::Small(v) => drop(v.pop()),
            Ends::Large(v) => drop(v.pop()),
        }
    }
}

/// The children seen so far of one open field (or of the root), for deciding which lines
/// are shown: both passes apply the same rule, so they agree on the shown fields' order.
#[derive(Default)]
struct Level {
    children: usize,
    /// Its children are list elements (its first child is).
    list: bool,
    /// The field itself is not shown.
    hidden: bool,
}

impl Level {
    /// Counts a new child and says whether it is hidden: inside a hidden field, or past
    /// `max_items` (0: no limit) in a list.
    fn admit(&mut self, is_index: bool, max_items: usize) -> bool {
        self.children += 1;
        if self.children == 1 {
            self.list = is_index;
        }
        self.hidden || (self.list && max_items != 0 && self.children > max_items)
    }
}

/// A field being printed.
struct Open {
    /// Its place among the fields whose end pass 1 kept (index into the first pass's ends),
    /// given when its first child is read (a field with children), or when the decode
    /// stops inside it; `usize::MAX` until then.
    idx: usize,
    name: String,
    start: (u64, u64),
    depth: usize,
    /// Its line is out (it has children).
    printed: bool,
    children: usize,
    /// Its children are list elements.
    list: bool,
    /// Not shown: beyond `max_items` in a list, or inside such an element.
    hidden: bool,
}

/// Reads `bytes` as `fmt` and prints the tree under a first line for the root (the schema's
/// name, `0..end`). Gives the decode result (the tree is printed up to the failing field) or
/// the writer's error.
pub fn print(
    out: &mut dyn Write,
    fmt: &FormatSpec,
    bytes: &[u8],
    max_items: usize,
) -> io::Result<Result<(), DecodeError>> {
    // Pass 1: where each shown field with children ends (a leaf's line is printed when it
    // is left, with the end its leave gives, so its end is dropped as soon as it is known).
    // A field left open by a decode error ends where its last child ended (or where it
    // started), as in the in-memory tree, and keeps its end. Fields that will not be printed
    // (past `max_items` in a list, or inside such an element) keep no end, so this pass's
    // memory follows the shown fields with children, not the fields read.
    let mut ends = Ends::for_input(bytes.len());
    let mut root_level = Level::default();
    // (index of the end kept, if shown; shape of its children; last end inside it)
    let mut open: Vec<(Option<usize>, Level, u64, u64)> = Vec::new();
    let mut sink = |ev: TraceEvent| match ev {
        TraceEvent::Enter { seg, offset, bit } => {
            let is_index = matches!(seg, PathSeg::Index(_));
            let parent = match open.last_mut() {
                Some(p) => &mut p.1,
                None => &mut root_level,
            };
            let hidden = parent.admit(is_index, max_items);
            let idx = (!hidden).then(|| {
                ends.push((offset, bit));
                ends.len() - 1
            });
            let level = Level {
                hidden,
                ..Level::default()
            };
            open.push((idx, level, offset, bit));
        }
        TraceEvent::Leave { offset, bit, .. } => {
            if let Some((i, level, _, _)) = open.pop() {
                if let Some(i) = i {
                    if level.children == 0 && i + 1 == ends.len() {
                        ends.pop();
                    } else {
                        ends.set(i, (offset, bit));
                    }
                }
                if let Some(p) = open.last_mut() {
                    (p.2, p.3) = (offset, bit);
                }
            }
        }
    };
    let (res, root_end) = (fmt.decode_events)(bytes, SinkTracer::new(&mut sink, false));
    while let Some((i, _, e, eb)) = open.pop() {
        let (s, sb) = i.and_then(|i| ends.get(i)).unwrap_or((e, eb));
        if let Some(i) = i {
            ends.set(i, (s.max(e), sb.max(eb)));
        }
        if let Some(p) = open.last_mut() {
            (p.2, p.3) = (s.max(e), sb.max(eb));
        }
    }
    line(
        out,
        (0, root_end),
        (0, root_end * 8),
        0,
        fmt.schema,
        None,
        max_items,
    )?;

    // Pass 2: print, each line as soon as its end is known: from pass 1 for a field with
    // children (numbered in the same order: when its first child is read, which comes right
    // after it starts), from its leave for a leaf.
    let next = std::cell::Cell::new(0usize);
    let take_next = || {
        let i = next.get();
        next.set(i + 1);
        i
    };
    let mut stack: Vec<Open> = Vec::new();
    let mut root_children = 0usize;
    let mut root_list = false;
    let mut failed: Option<io::Error> = None;
    let print_open = |o: &mut Open, out: &mut dyn Write| -> io::Result<()> {
        if !o.printed && !o.hidden {
            o.idx = take_next();
            let end = ends.get(o.idx).unwrap_or(o.start);
            line(
                out,
                (o.start.0, end.0),
                (o.start.1, end.1),
                o.depth,
                &o.name,
                None,
                max_items,
            )?;
        }
        o.printed = true;
        Ok(())
    };
    // `left`: where the field ended (its leave), `None` when the decode stopped inside it.
    let close = |o: Open,
                 value: Option<&TraceValue>,
                 left: Option<(u64, u64)>,
                 out: &mut dyn Write|
     -> io::Result<()> {
        if o.hidden {
            return Ok(());
        }
        if !o.printed {
            let end = match left {
                Some(e) => e,
                None => ends.get(take_next()).unwrap_or(o.start),
            };
            line(
                out,
                (o.start.0, end.0),
                (o.start.1, end.1),
                o.depth,
                &o.name,
                value,
                max_items,
            )?;
        } else if o.list && max_items != 0 && o.children > max_items {
            more(out, o.depth, o.children - max_items)?;
        }
        Ok(())
    };
    let mut sink = |ev: TraceEvent| {
        if failed.is_some() {
            return;
        }
        let r = (|| -> io::Result<()> {
            match ev {
                TraceEvent::Enter { seg, offset, bit } => {
                    let is_index = matches!(seg, PathSeg::Index(_));
                    let (depth, hidden) = match stack.last_mut() {
                        Some(p) => {
                            print_open(p, out)?;
                            p.children += 1;
                            if p.children == 1 {
                                p.list = is_index;
                            }
                            let beyond = p.list && max_items != 0 && p.children > max_items;
                            (p.depth + 1, p.hidden || beyond)
                        }
                        None => {
                            root_children += 1;
                            if root_children == 1 {
                                root_list = is_index;
                            }
                            let beyond = root_list && max_items != 0 && root_children > max_items;
                            (1, beyond)
                        }
                    };
                    let name = match seg {
                        PathSeg::Field(f) => f.to_owned(),
                        PathSeg::Index(i) => format!("[{i}]"),
                    };
                    stack.push(Open {
                        idx: usize::MAX,
                        name,
                        start: (offset, bit),
                        depth,
                        printed: false,
                        children: 0,
                        list: false,
                        hidden,
                    });
                }
                TraceEvent::Leave { offset, bit, value } => {
                    if let Some(o) = stack.pop() {
                        close(o, value.as_ref(), Some((offset, bit)), out)?;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            failed = Some(e);
        }
    };
    // The same input decodes the same way, so pass 2 sees pass 1's fields in the same order.
    let _ = (fmt.decode_events)(bytes, SinkTracer::new(&mut sink, true));
    if let Some(e) = failed {
        return Err(e);
    }
    while let Some(o) = stack.pop() {
        close(o, None, None, out)?;
    }
    if root_list && max_items != 0 && root_children > max_items {
        more(out, 0, root_children - max_items)?;
    }
    Ok(res)
}

/// `decode --offsets`: the tree of every field as JSON, written while the file is read
/// (one pass; nothing kept but the open fields' state), so its memory is the decode's, not
/// a node per field. Each node is an object with `name`, `start`, then its `children` (if
/// any), then `end` (byte offsets, absolute in the field's stream) and `value` (leaves, as
/// `inspect` prints it): the members of the in-memory tree's JSON, `end` after the children
/// because it is known only when they are read. The root ends where the decode stopped.
pub fn print_json(
    out: &mut dyn Write,
    fmt: &FormatSpec,
    bytes: &[u8],
) -> io::Result<Result<(), DecodeError>> {
    // Per open node: whether a child has been written.
    let mut open: Vec<bool> = Vec::new();
    let mut failed: Option<io::Error> = None;
    let pad = |d: usize| "  ".repeat(d);
    let name_json = |n: &str| serde_json::to_string(n).unwrap_or_else(|_| "\"?\"".into());
    write!(
        out,
        "{{\n  \"name\": {},\n  \"start\": 0",
        name_json(fmt.schema)
    )?;
    open.push(false);
    let mut sink = |ev: TraceEvent| {
        if failed.is_some() {
            return;
        }
        let r = (|| -> io::Result<()> {
            match ev {
                TraceEvent::Enter { seg, offset, .. } => {
                    let d = open.len();
                    let parent = open.last_mut().expect("the root is open");
                    if *parent {
                        write!(out, ",\n{}{{", pad(2 * d))?;
                    } else {
                        write!(
                            out,
                            ",\n{}\"children\": [\n{}{{",
                            pad(2 * d - 1),
                            pad(2 * d)
                        )?;
                        *parent = true;
                    }
                    let name = match seg {
                        PathSeg::Field(f) => name_json(f),
                        PathSeg::Index(i) => format!("\"[{i}]\""),
                    };
                    let inner = pad(2 * d + 1);
                    write!(
                        out,
                        "\n{inner}\"name\": {name},\n{inner}\"start\": {offset}"
                    )?;
                    open.push(false);
                }
                TraceEvent::Leave { offset, value, .. } => {
                    if open.len() > 1 {
                        let had_children = open.pop().expect("checked");
                        let d = open.len();
                        let inner = pad(2 * d + 1);
                        if had_children {
                            write!(out, "\n{}]", pad(2 * d + 1))?;
                        }
                        write!(out, ",\n{inner}\"end\": {offset}")?;
                        if let Some(v) = value {
                            write!(out, ",\n{inner}\"value\": {}", name_json(&v.to_string()))?;
                        }
                        write!(out, "\n{}}}", pad(2 * d))?;
                    }
                }
            }
            Ok(())
        })();
        if let Err(e) = r {
            failed = Some(e);
        }
    };
    let (res, root_end) = (fmt.decode_events)(bytes, SinkTracer::new(&mut sink, true));
    if let Some(e) = failed {
        return Err(e);
    }
    // Fields left open by a decode error end where the decode stopped.
    while open.len() > 1 {
        let had_children = open.pop().expect("checked");
        let d = open.len();
        if had_children {
            write!(out, "\n{}]", pad(2 * d + 1))?;
        }
        write!(
            out,
            ",\n{}\"end\": {root_end}\n{}}}",
            pad(2 * d + 1),
            pad(2 * d)
        )?;
    }
    if open.pop() == Some(true) {
        write!(out, "\n  ]")?;
    }
    writeln!(out, ",\n  \"end\": {root_end}\n}}")?;
    Ok(res)
}

#[cfg(test)]
mod tests {
    /// Ends inside processed bytes may pass what 32 bits hold even for a small input: the
    /// list moves to 64-bit ends and keeps every earlier end.
    #[test]
    fn ends_widen_when_an_offset_passes_32_bits() {
        let mut e = super::Ends::for_input(100);
        e.push((7, 56));
        e.push((1 << 30, 1 << 33));
        e.set(0, (9, 72));
        assert!(matches!(e, super::Ends::Large(_)));
        assert_eq!(e.get(0), Some((9, 72)));
        assert_eq!(e.get(1), Some((1 << 30, 1 << 33)));
        assert_eq!(e.len(), 2);
    }

    use statepack::formats::FORMATS;

    /// The in-memory tree's text, as `inspect` printed it before it streamed.
    fn from_tree(fmt: &statepack::formats::FormatSpec, bytes: &[u8], max: usize) -> String {
        let (_, t) = (fmt.decode_traced)(bytes);
        let mut out = Vec::new();
        crate::print_tree(&mut out, &t, 0, max).unwrap();
        String::from_utf8(out).unwrap()
    }

    fn streamed(fmt: &statepack::formats::FormatSpec, bytes: &[u8], max: usize) -> String {
        let mut out = Vec::new();
        let res = super::print(&mut out, fmt, bytes, max).unwrap();
        assert_eq!(res.is_ok(), (fmt.decode_raw)(bytes).is_ok());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn streamed_tree_is_the_in_memory_tree() {
        let mut n = 0;
        for fmt in FORMATS {
            for (name, bytes) in (fmt.samples)() {
                // Whole files and cuts inside them (the tree then stops at the failing field).
                let cuts = [
                    bytes.len(),
                    bytes.len() / 2,
                    bytes.len() / 3,
                    7.min(bytes.len()),
                ];
                for cut in cuts {
                    for max in [0, 3, 16] {
                        let b = &bytes[..cut];
                        assert_eq!(
                            streamed(fmt, b, max),
                            from_tree(fmt, b, max),
                            "{} {name} cut at {cut}, max-items {max}",
                            fmt.name
                        );
                        n += 1;
                    }
                }
            }
        }
        assert!(n > 100, "{n} comparisons");
    }

    #[test]
    fn streamed_json_is_the_json_value() {
        for fmt in FORMATS {
            for (name, bytes) in (fmt.samples)() {
                let Ok(v) = (fmt.to_json)(&bytes) else {
                    continue;
                };
                let mut out = Vec::new();
                (fmt.write_json)(&bytes, &mut out).unwrap();
                let back: serde_json::Value = serde_json::from_slice(&out).unwrap();
                assert_eq!(back, v, "{} {name}", fmt.name);
            }
        }
    }

    /// `decode --offsets`' streamed JSON holds what the in-memory tree's JSON holds, for
    /// every sample of every format.
    #[test]
    fn streamed_offsets_json_is_the_traced_tree() {
        let mut checked = 0;
        for fmt in FORMATS {
            for (name, bytes) in (fmt.samples)() {
                let (res, tree) = (fmt.decode_traced)(&bytes);
                let want = serde_json::to_value(&tree).unwrap();
                let mut out = Vec::new();
                let got_res = super::print_json(&mut out, fmt, &bytes).unwrap();
                assert_eq!(res.is_ok(), got_res.is_ok(), "{} {name}", fmt.name);
                let got: serde_json::Value = serde_json::from_slice(&out)
                    .unwrap_or_else(|e| panic!("{} {name}: {e}", fmt.name));
                assert_eq!(got, want, "{} {name}", fmt.name);
                checked += 1;
            }
        }
        assert!(checked >= 6);
    }
}
