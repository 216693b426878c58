//! The sinks of the streaming interpreter (`statepack_codegen::interp::stream`) behind
//! `decode --schema` and `inspect --schema`: each value is written as it is read, so the
//! commands hold what the schema's expressions keep, not a tree of the file.
//!
//! - [`Json`] writes the JSON of `decode --schema` in the layout of
//!   [`statepack::formats::json`]: the values of [`super::to_json`], each struct's members
//!   in schema order, byte arrays as hex strings written in chunks.
//! - [`Inspect`] prints the tree of `inspect --schema` (values not read at their place,
//!   params and value instances, as [`super::print_member`] prints them). A line of
//!   a user type or a list shows its byte range (and a list its count) before its members,
//!   which are read after it, so `inspect` reads twice: the first pass records the range of
//!   every such line it will print (16 bytes a line, 8 more for a list), the second prints.

use super::{int_json, leaf_text, print_member, shown_members};
use serde_json::ser::Formatter;
use statepack::formats::json::Layout;
use statepack_codegen::interp::{self, DynValue, InstanceErrors, Label, MemberKind, Sink};
use statepack_codegen::ir::Schema;
use std::io::{self, Write};

/// Hex digits per chunk of a byte array written as a JSON string.
const HEX_CHUNK: usize = 1 << 15;

/// An open object (`true`: it has a member) or array, in [`Json`].
#[derive(Debug, Clone, Copy)]
enum Open {
    Object(bool),
    Array,
}

/// `decode --schema`'s JSON, written to `w` as the values arrive.
pub struct Json<'s, W: Write> {
    w: W,
    fmt: Layout,
    schema: &'s Schema,
    open: Vec<Open>,
    /// The next value is a param's, which the JSON does not show.
    skip: bool,
    /// What an instance that fails to read does.
    errors: InstanceErrors,
}

impl<'s, W: Write> Json<'s, W> {
    /// A writer of `schema`'s values to `w`; an instance that fails to read is written as
    /// `{"__error": "message"}` with [`InstanceErrors::Show`].
    pub fn new(w: W, schema: &'s Schema, errors: InstanceErrors) -> Self {
        Json {
            w,
            fmt: Layout::default(),
            schema,
            open: Vec::new(),
            skip: false,
            errors,
        }
    }

    /// Ends the document (a newline) and gives the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.write_all(b"\n")?;
        Ok(self.w)
    }

    /// Closes the value just written: its member or array element.
    fn end_value(&mut self) -> io::Result<()> {
        match self.open.last() {
            Some(Open::Object(_)) => self.fmt.end_object_value(&mut self.w),
            Some(Open::Array) => self.fmt.end_array_value(&mut self.w),
            None => Ok(()),
        }
    }

    fn string(&mut self, s: &str) -> io::Result<()> {
        let quoted = serde_json::to_string(s).map_err(io::Error::other)?;
        self.fmt.write_raw_fragment(&mut self.w, &quoted)
    }

    fn object_key(&mut self, first: bool, k: &str) -> io::Result<()> {
        self.fmt.begin_object_key(&mut self.w, first)?;
        let quoted = serde_json::to_string(k).map_err(io::Error::other)?;
        self.w.write_all(quoted.as_bytes())?;
        self.fmt.end_object_key(&mut self.w)?;
        self.fmt.begin_object_value(&mut self.w)
    }

    /// A value that is neither a user type nor a list, as [`super::to_json`] gives it.
    fn scalar(&mut self, v: &DynValue) -> io::Result<()> {
        let w = &mut self.w;
        match v {
            DynValue::Null | DynValue::List(_) | DynValue::Struct(_) => self.fmt.write_null(w),
            DynValue::Bool(b) => self.fmt.write_bool(w, *b),
            DynValue::Int(i) => self.int(*i),
            DynValue::Float(f) if f.is_finite() => self.fmt.write_f64(w, *f),
            DynValue::Float(f) => self.string(&interp::nonfinite_text(*f).unwrap_or_default()),
            DynValue::Str(s) => self.string(s),
            DynValue::Bytes(b) => {
                self.fmt.begin_string(w)?;
                let mut hex = String::with_capacity(HEX_CHUNK.min(b.len() * 2));
                for chunk in b.chunks(HEX_CHUNK / 2) {
                    hex.clear();
                    for x in chunk {
                        use std::fmt::Write as _;
                        let _ = write!(hex, "{x:02x}");
                    }
                    self.fmt.write_string_fragment(w, &hex)?;
                }
                self.fmt.end_string(w)
            }
            DynValue::Enum(e) => match e.name {
                Some(n) => self.string(n),
                None => {
                    self.fmt.begin_object(w)?;
                    self.object_key(true, "Unlisted")?;
                    self.int(e.value)?;
                    self.fmt.end_object_value(&mut self.w)?;
                    self.fmt.end_object(&mut self.w)
                }
            },
            // A stream (an `io` param or instance): its position and size.
            DynValue::Io { pos, size } => {
                self.fmt.begin_object(w)?;
                self.object_key(true, "pos")?;
                self.int(*pos)?;
                self.fmt.end_object_value(&mut self.w)?;
                self.object_key(false, "size")?;
                self.int(*size)?;
                self.fmt.end_object_value(&mut self.w)?;
                self.fmt.end_object(&mut self.w)
            }
        }
    }

    fn int(&mut self, i: i128) -> io::Result<()> {
        match int_json(i) {
            serde_json::Value::String(s) => self.string(&s),
            n => self.fmt.write_number_str(&mut self.w, &n.to_string()),
        }
    }

    /// A whole value (a value instance), as [`super::to_json`] gives it, members in schema
    /// order.
    fn whole(&mut self, v: &DynValue) -> io::Result<()> {
        match v {
            DynValue::List(items) => {
                self.fmt.begin_array(&mut self.w)?;
                for (i, x) in items.iter().enumerate() {
                    self.fmt.begin_array_value(&mut self.w, i == 0)?;
                    self.whole(x)?;
                    self.fmt.end_array_value(&mut self.w)?;
                }
                self.fmt.end_array(&mut self.w)
            }
            DynValue::Struct(st) => {
                let shown = shown_members(st, self.schema, true);
                self.fmt.begin_object(&mut self.w)?;
                let mut first = true;
                for (k, x) in &st.members {
                    if shown.contains(k) {
                        self.object_key(first, k)?;
                        first = false;
                        self.whole(x)?;
                        self.fmt.end_object_value(&mut self.w)?;
                    }
                }
                self.fmt.end_object(&mut self.w)
            }
            leaf => self.scalar(leaf),
        }
    }
}

impl<W: Write> Sink for Json<'_, W> {
    fn instance_errors(&self) -> InstanceErrors {
        self.errors
    }

    fn error(&mut self, message: &str) -> io::Result<()> {
        self.fmt.begin_object(&mut self.w)?;
        self.object_key(true, "__error")?;
        self.string(message)?;
        self.fmt.end_object_value(&mut self.w)?;
        self.fmt.end_object(&mut self.w)?;
        self.end_value()
    }

    fn key(&mut self, label: Label) -> io::Result<()> {
        match label {
            Label::Member(_, MemberKind::Param) => {
                self.skip = true;
                Ok(())
            }
            Label::Member(name, _) => {
                let first = match self.open.last_mut() {
                    Some(Open::Object(any)) => !std::mem::replace(any, true),
                    _ => true,
                };
                self.object_key(first, name)
            }
            Label::Element(i) => self.fmt.begin_array_value(&mut self.w, i == 0),
        }
    }

    fn open_struct(&mut self, _: &'static str) -> io::Result<()> {
        self.fmt.begin_object(&mut self.w)?;
        self.open.push(Open::Object(false));
        Ok(())
    }

    fn close_struct(&mut self, _: Option<(u64, u64)>) -> io::Result<()> {
        self.open.pop();
        self.fmt.end_object(&mut self.w)?;
        self.end_value()
    }

    fn open_list(&mut self) -> io::Result<()> {
        self.fmt.begin_array(&mut self.w)?;
        self.open.push(Open::Array);
        Ok(())
    }

    fn close_list(&mut self, _: (u64, u64), _: usize) -> io::Result<()> {
        self.open.pop();
        self.fmt.end_array(&mut self.w)?;
        self.end_value()
    }

    fn leaf(
        &mut self,
        v: &DynValue,
        _: Option<(u64, u64)>,
        _: Option<(u64, u64)>,
    ) -> io::Result<()> {
        self.scalar(v)?;
        self.end_value()
    }

    fn value(&mut self, v: &DynValue) -> io::Result<()> {
        if std::mem::take(&mut self.skip) {
            return Ok(());
        }
        self.whole(v)?;
        self.end_value()
    }
}

/// An open user type or list in [`Inspect`]: the depth of its members, whether it is
/// shown, and for a list the depth of its own line and its number of elements.
#[derive(Debug, Clone, Copy)]
struct Level {
    depth: usize,
    shown: bool,
    /// The slot of its line in the recorded ranges (a shown line other than the root's).
    slot: Option<usize>,
    list: Option<ListLine>,
}

#[derive(Debug, Clone, Copy)]
struct ListLine {
    depth: usize,
    count_slot: usize,
}

/// `inspect --schema`'s tree: [`Inspect::recording`] first, then [`Inspect::printing`] on
/// the same bytes.
pub struct Inspect<W: Write> {
    /// `None` while recording.
    out: Option<W>,
    max: usize,
    /// The byte range of each shown line of a user type or list, in reading order.
    ranges: Vec<(u64, u64)>,
    /// The count of each shown list, in reading order.
    counts: Vec<usize>,
    /// Where the printing pass is in `ranges` and `counts`.
    next: (usize, usize),
    open: Vec<Level>,
    /// The name of the next value and whether it is shown.
    name: Option<(Label, bool)>,
    /// What an instance that fails to read does.
    errors: InstanceErrors,
}

impl<W: Write> Inspect<W> {
    /// The first pass: records where each line of a user type or list ends. `max_items`:
    /// elements shown per list (0: all).
    /// `errors`: what an instance that fails to read does (with [`InstanceErrors::Show`], a
    /// line with its error in its place).
    pub fn recording(max_items: usize, errors: InstanceErrors) -> Self {
        Inspect {
            out: None,
            max: if max_items == 0 {
                usize::MAX
            } else {
                max_items
            },
            ranges: Vec::new(),
            counts: Vec::new(),
            next: (0, 0),
            open: Vec::new(),
            name: None,
            errors,
        }
    }

    /// The second pass: prints to `out`, with what the first pass recorded.
    pub fn printing<V: Write>(self, out: V) -> Inspect<V> {
        Inspect {
            out: Some(out),
            max: self.max,
            ranges: self.ranges,
            counts: self.counts,
            next: (0, 0),
            open: Vec::new(),
            name: None,
            errors: self.errors,
        }
    }

    fn depth(&self) -> usize {
        self.open.last().map_or(0, |l| l.depth)
    }

    /// The name of the value that starts (made only for a line that is printed), and
    /// whether it is shown.
    fn take_name(&mut self) -> (Name, bool) {
        match self.name.take() {
            Some((label, shown)) => (Name(label), shown),
            None => (Name(Label::Member("", MemberKind::Field)), false),
        }
    }

    /// A line for a user type or list that starts: its slot, and its range and count when
    /// printing.
    fn line(&mut self, shown: bool, list: bool) -> (Option<usize>, (u64, u64), usize) {
        if !shown {
            return (None, (0, 0), 0);
        }
        if self.out.is_none() {
            self.ranges.push((0, 0));
            if list {
                self.counts.push(0);
            }
            return (Some(self.ranges.len() - 1), (0, 0), 0);
        }
        let range = self.ranges.get(self.next.0).copied().unwrap_or((0, 0));
        self.next.0 += 1;
        let count = if list {
            self.next.1 += 1;
            self.counts.get(self.next.1 - 1).copied().unwrap_or(0)
        } else {
            0
        };
        (Some(self.next.0 - 1), range, count)
    }
}

/// A line's name: a member's, or `[i]` for a list element.
struct Name(Label);

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Label::Member(n, _) => f.write_str(n),
            Label::Element(i) => write!(f, "[{i}]"),
        }
    }
}

fn range_text((a, b): (u64, u64)) -> String {
    format!("{a:>8}..{b:<8} {:>6} B", b.saturating_sub(a))
}

impl<W: Write> Sink for Inspect<W> {
    fn instance_errors(&self) -> InstanceErrors {
        self.errors
    }

    fn error(&mut self, message: &str) -> io::Result<()> {
        let depth = self.depth();
        let (name, shown) = self.take_name();
        match (self.out.as_mut(), shown) {
            (Some(out), true) => {
                let indent = "  ".repeat(depth);
                writeln!(out, "{:>26}  {indent}{name}: error: {message}", "")
            }
            _ => Ok(()),
        }
    }

    fn key(&mut self, label: Label) -> io::Result<()> {
        let parent_shown = self.open.last().is_none_or(|l| l.shown);
        self.name = Some(match label {
            Label::Member(..) => (label, parent_shown),
            Label::Element(i) => (label, parent_shown && i < self.max),
        });
        Ok(())
    }

    fn open_struct(&mut self, type_name: &'static str) -> io::Result<()> {
        if self.open.is_empty() && self.name.is_none() {
            // The root: no line, its members at depth 0.
            self.open.push(Level {
                depth: 0,
                shown: true,
                slot: None,
                list: None,
            });
            return Ok(());
        }
        let depth = self.depth();
        let (name, shown) = self.take_name();
        let (slot, range, _) = self.line(shown, false);
        if let (Some(out), true) = (self.out.as_mut(), shown) {
            let indent = "  ".repeat(depth);
            writeln!(out, "{}  {indent}{name}: {type_name}", range_text(range))?;
        }
        self.open.push(Level {
            depth: depth + 1,
            shown,
            slot,
            list: None,
        });
        Ok(())
    }

    fn close_struct(&mut self, span: Option<(u64, u64)>) -> io::Result<()> {
        let l = self.open.pop();
        if let (None, Some(Level { slot: Some(k), .. }), Some(span)) = (&self.out, l, span) {
            self.ranges[k] = span;
        }
        Ok(())
    }

    fn open_list(&mut self) -> io::Result<()> {
        let depth = self.depth();
        let (name, shown) = self.take_name();
        let (slot, range, count) = self.line(shown, true);
        if let (Some(out), true) = (self.out.as_mut(), shown) {
            let indent = "  ".repeat(depth);
            writeln!(
                out,
                "{}  {indent}{name}: {count} element(s)",
                range_text(range)
            )?;
        }
        self.open.push(Level {
            depth: depth + 1,
            shown,
            slot,
            list: Some(ListLine {
                depth,
                count_slot: self.counts.len().saturating_sub(1),
            }),
        });
        Ok(())
    }

    fn close_list(&mut self, span: (u64, u64), count: usize) -> io::Result<()> {
        let Some(l) = self.open.pop() else {
            return Ok(());
        };
        match (self.out.as_mut(), l.slot, l.list) {
            (None, Some(k), Some(list)) => {
                self.ranges[k] = span;
                self.counts[list.count_slot] = count;
            }
            (Some(out), Some(_), Some(list)) if count > self.max => {
                crate::tree::more(out, list.depth, count - self.max)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn leaf(
        &mut self,
        v: &DynValue,
        span: Option<(u64, u64)>,
        bits: Option<(u64, u64)>,
    ) -> io::Result<()> {
        let depth = self.depth();
        let (name, shown) = self.take_name();
        let (Some(out), true) = (self.out.as_mut(), shown) else {
            return Ok(());
        };
        let text = leaf_text(v, self.max);
        match bits {
            Some(b) => {
                crate::tree::bit_line(out, b, depth, &name.to_string(), &format!(" = {text}"))
            }
            None => {
                let indent = "  ".repeat(depth);
                let range = match span {
                    Some(s) => range_text(s),
                    None => format!("{:>26}", "(not stored)"),
                };
                writeln!(out, "{range}  {indent}{name} = {text}")
            }
        }
    }

    fn value(&mut self, v: &DynValue) -> io::Result<()> {
        let depth = self.depth();
        let (name, shown) = self.take_name();
        match (self.out.as_mut(), shown) {
            (Some(out), true) => {
                print_member(out, &name.to_string(), v, None, &[], &[], depth, self.max)
            }
            _ => Ok(()),
        }
    }
}
