//! The interpreter's reader: one user type at a time, field by field, as the generated
//! `read_from` does (see the module docs of [`super`]).

use super::eval::{self, enum_value, eval, eval_bool, eval_int, Frame, IoState, Scope, Trees};
use super::keep::{Keep, Plan};
use super::stream::{Event, InstanceErrors, Label, MemberKind, Recorder, Sink, StreamError};
use super::{intern, intern_names, unsupported_with, BitSpan, DynStruct, DynValue, Extensions};
use crate::ir::*;
use crate::typed::{Checked, Side, TypedSchema};
use statepack_runtime::io::{ByteReader, DecodeError, DecodeErrorKind, Processor, Term};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

type D<T> = Result<T, DecodeError>;

/// A field as read: the value, where a positional instance was read, each list element's
/// span, and each element's bits for a list of bit fields (else empty).
type Read = (
    DynValue,
    Option<(u64, u64)>,
    Vec<(u64, u64)>,
    Vec<(u64, u64)>,
);

/// Where [`Interp::read_member`] adds a member's element spans and bits.
type MemberLists<'a> = (&'a mut Vec<Vec<(u64, u64)>>, &'a mut Vec<BitSpan>);

/// A list as read: the value, each element's span, each element's bits (bit-field lists).
type Repeated = (DynValue, Vec<(u64, u64)>, Vec<(u64, u64)>);

/// The stack the interpreter reads on: deep enough for [`statepack_runtime::io::MAX_RECURSION`]
/// levels of recursive types in an unoptimised build.
const STACK_BYTES: usize = 256 << 20;

/// Reads the root type of `schema` from the start of `bytes`, as Kaitai Struct reads a file:
/// bytes after the end of the root type are allowed (see [`DynStruct::spans`] for where the
/// root ended).
///
/// Errors: any [`DecodeError`] the generated reader would give (with the field path and the
/// byte offset), `Semantic` for an expression that cannot be evaluated, and `Semantic` naming
/// the construct for a schema the interpreter does not cover ([`super::unsupported`]) or a
/// root type that takes `params`.
pub fn decode(schema: &Checked, bytes: &[u8]) -> Result<DynStruct, DecodeError> {
    decode_with(schema, bytes, Extensions::none())
}

/// [`decode`] with the custom processors and opaque types of `ext` ([`Extensions`]): a
/// `process: name(args)` field is read through the processor `ext` builds from the
/// evaluated arguments (its output charged to the file's processed-bytes budget), a field
/// of an opaque type through the type `ext` registers under its name. Errors: as
/// [`decode`]; a processor or opaque type `ext` does not hold is refused by name before
/// anything is read; a processor's own error is `Semantic` with its message, at the stored
/// bytes' offset.
pub fn decode_with(
    schema: &Checked,
    bytes: &[u8],
    ext: &Extensions,
) -> Result<DynStruct, DecodeError> {
    run(&schema.schema, &schema.typed, bytes, false, ext).0
}

// Positional instances: those that no expression of the schema names are read after the
// type's `seq`, each on its own (a failing one is that member's error, `Value::Error` in
// the dynamic view, as the generated `Lazy<T>` members give it); those some expression
// names are read where the analysis of `crate::instances` orders them, before the first
// field that needs them, as the generated reader reads them.

/// Reads as [`decode`] does and, when reading fails, also gives what was read before the
/// error: `(tree, error)`.
///
/// - A file that decodes gives `(Some(root), None)`, the value [`decode`] returns, except
///   that every positional instance that fails is kept as that member's error (null, and
///   `Value::Error` in the dynamic view) rather than failing the file.
/// - A file that does not gives `(partial, Some(error))`, the error [`decode`] returns. The
///   partial tree holds, in each type on the error's field path, the `seq` fields read
///   before the failing one, then the failing field itself: a list with the elements read
///   before the failing element and that element; a user type as its own partial tree; a
///   value read but refused by its `valid` rule as that value; any other value as
///   [`DynValue::Null`]. The failing field's span runs from where it started to where
///   reading stopped. Partial types carry no params nor instances. `None` when the error
///   comes before any byte is read (a schema the interpreter does not cover, a root type
///   with params).
///
/// The partial tree is built only on the error path, from values already read, so it takes
/// no more memory than the values [`decode`] holds when it fails.
pub fn decode_partial(schema: &Checked, bytes: &[u8]) -> (Option<DynStruct>, Option<DecodeError>) {
    decode_partial_with(schema, bytes, Extensions::none())
}

/// [`decode_partial`] with the custom processors and opaque types of `ext` (see
/// [`decode_with`]).
pub fn decode_partial_with(
    schema: &Checked,
    bytes: &[u8],
    ext: &Extensions,
) -> (Option<DynStruct>, Option<DecodeError>) {
    match run(&schema.schema, &schema.typed, bytes, true, ext) {
        (Ok(v), _) => (Some(v), None),
        (Err(e), partial) => (partial, Some(e)),
    }
}

/// Reads the root type of `schema` from `bytes` as [`decode`] does (same values, same
/// errors), handing every value to `sink` as it is read instead of building the tree (the
/// order of the events: [`super::Sink`]).
///
/// Returns the root as kept: only the members some expression can still read
/// ([`super::keep`]), with [`DynStruct::read_extent`] (one past the furthest byte read) as
/// `decode` gives it. Memory: the values kept, the value being read (a byte array or a
/// processed field's bytes whole, a list's elements one at a time when nothing keeps the
/// list), and the sink's own.
///
/// Errors: [`StreamError::Decode`] with the field path and byte offset (the sink has then
/// seen the values read before the error), [`StreamError::Output`] when the sink fails.
pub fn stream<'o>(
    schema: &'o Checked,
    bytes: &[u8],
    sink: &'o mut (dyn Sink + Send),
) -> Result<DynStruct, StreamError> {
    stream_with(schema, bytes, sink, Extensions::none())
}

/// [`stream()`] with the custom processors and opaque types of `ext` (see [`decode_with`]).
/// A value of an opaque type is read whole, then handed to the sink as a user type: the
/// members it read from the bytes with their spans, the others (a Rust type's members,
/// instances) as whole values ([`Sink::value`]).
pub fn stream_with<'o>(
    schema: &'o Checked,
    bytes: &[u8],
    sink: &'o mut (dyn Sink + Send),
    ext: &'o Extensions,
) -> Result<DynStruct, StreamError> {
    let out = Out {
        errors: sink.instance_errors(),
        held: RefCell::new(Vec::new()),
        sink: RefCell::new(sink),
        plan: Plan::new(&schema.schema),
        whole: Cell::new(0),
        failed: RefCell::new(None),
    };
    let (res, _, out) = run_with(&schema.schema, &schema.typed, bytes, false, Some(out), ext);
    if let Some(e) = out.and_then(|o| o.failed.into_inner()) {
        return Err(StreamError::Output(e));
    }
    res.map_err(StreamError::Decode)
}

/// [`decode`], keeping what was read before an error when `keep` is set.
fn run(
    schema: &Schema,
    typed: &TypedSchema,
    bytes: &[u8],
    keep: bool,
    ext: &Extensions,
) -> (D<DynStruct>, Option<DynStruct>) {
    let (res, partial, _) = run_with(schema, typed, bytes, keep, None, ext);
    (res, partial)
}

/// The result of a read, what was read before an error, and the sink given back.
type Ran<'o> = (D<DynStruct>, Option<DynStruct>, Option<Out<'o>>);

/// [`run`], giving the sink back.
fn run_with<'o>(
    schema: &'o Schema,
    typed: &'o TypedSchema,
    bytes: &[u8],
    keep: bool,
    out: Option<Out<'o>>,
    ext: &'o Extensions,
) -> Ran<'o> {
    let refused = |m: String| DecodeError::new(0, DecodeErrorKind::Semantic(m));
    if let Some(why) = unsupported_with(schema, ext) {
        let e = refused(format!("not supported by the interpreter: {why}"));
        return (Err(e), None, out);
    }
    let Some(root) = schema.types.first() else {
        return (Err(refused("the schema has no types".into())), None, out);
    };
    if root.params.iter().any(|p| p.context.is_none()) {
        let e = refused(format!(
            "the root type `{}` takes params, which a plain decode cannot give",
            root.name
        ));
        return (Err(e), None, out);
    }
    let mut it = Interp::new(schema, typed, ext);
    if !it.later_names.is_empty() {
        it.later = RefCell::new(first_pass(schema, typed, bytes, ext));
    }
    it.out = out;
    if keep {
        it.partial = Some(RefCell::new(None));
        it.tree_errors = InstanceErrors::Show;
    }
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, move || {
                let mut r = ByteReader::new(bytes);
                let params = root.params.iter().map(|p| (intern(&p.id), None)).collect();
                let res = it
                    .read_type(&mut r, root, params)
                    .and_then(|v| it.emit(|s| s.close_struct(None)).map(|()| v));
                match res {
                    Ok(mut v) => {
                        v.extent = r.furthest_read() as u64;
                        (Ok(v), None, it.out)
                    }
                    Err(e) => {
                        let partial = match it.take_partial().map(|p| p.value) {
                            Some(DynValue::Struct(s)) => {
                                Some(Arc::try_unwrap(s).unwrap_or_else(|s| (*s).clone()))
                            }
                            _ => None,
                        };
                        (Err(e), partial, it.out)
                    }
                }
            });
        match worker {
            Ok(h) => h.join().unwrap_or_else(|_| {
                let e = refused("the interpreter failed unexpectedly".into());
                (Err(e), None, None)
            }),
            Err(e) => {
                let e = refused(format!("cannot start the interpreter's thread: {e}"));
                (Err(e), None, None)
            }
        }
    })
}

/// The substreams of the root's fields that positional instances of types read before them
/// read from (`io: _root.x._io`): a first pass reads the file into a tree, those instances
/// left null, and keeps them as the root reads them. The second pass (the read given back)
/// then reads those instances from them, as the generated reader does on first use. A first
/// pass that fails keeps what it reached (an instance whose stream was not reached fails on
/// its own in the second pass). Such a schema is read twice.
fn first_pass(
    schema: &Schema,
    typed: &TypedSchema,
    bytes: &[u8],
    ext: &Extensions,
) -> Vec<(String, Arc<[u8]>)> {
    let Some(root) = schema.types.first() else {
        return Vec::new();
    };
    let mut it = Interp::new(schema, typed, ext);
    it.first_pass = true;
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, move || {
                let mut r = ByteReader::new(bytes);
                let params = root.params.iter().map(|p| (intern(&p.id), None)).collect();
                let _ = it.read_type(&mut r, root, params);
                it.later.into_inner()
            });
        worker.ok().and_then(|h| h.join().ok()).unwrap_or_default()
    })
}

/// The sink of a streaming read ([`super::stream()`]) and what the reader keeps for it.
pub(crate) struct Out<'o> {
    sink: RefCell<&'o mut (dyn Sink + Send)>,
    /// What the sink wants done with an instance that fails.
    errors: InstanceErrors,
    /// The events of positional instances being read, held back until each has read
    /// whole (innermost last; see [`Event`]).
    held: RefCell<Vec<Held>>,
    /// Which fields are kept once written.
    plan: Plan,
    /// Fields being read that are kept whole ([`Keep::Whole`]): inside them nothing is dropped.
    whole: Cell<u32>,
    /// The sink's error, which ended the read.
    failed: RefCell<Option<std::io::Error>>,
}

/// The events held back for one positional instance being read ([`Interp::read_held`]).
#[derive(Default)]
struct Held {
    events: Vec<Event>,
    /// More than [`HELD_EVENTS`] came: none are kept, and the instance is read again
    /// once it is known to read, its events then handed on as they come.
    overflow: bool,
}

/// The most events held back for one positional instance (a few MiB): a larger instance is
/// read twice rather than held, so memory stays within what the output keeps.
const HELD_EVENTS: usize = 1 << 15;

/// What was read of a value whose reading failed (see [`decode_partial`]).
struct Partial {
    value: DynValue,
    /// Where it was read, when the reader of the value knows better than its caller (a
    /// positional instance).
    span: Option<(u64, u64)>,
    /// The spans of the elements of a partial list.
    elems: Vec<(u64, u64)>,
}

pub(crate) struct Interp<'s> {
    pub s: &'s Schema,
    /// The check stage's typed trees of the schema's expressions, which are evaluated.
    trees: Trees<'s>,
    /// The schema reads a positional instance from another value's substream
    /// (`io: X._io`): values read in a substream of their own keep its bytes.
    keep_streams: bool,
    /// Enums used by a field under Kaitai's rules: an integer they do not list is kept.
    open_enums: HashSet<EnumId>,
    /// The fewest bytes each type can take (the generated `MIN_LEN`), for count checks.
    min_lens: HashMap<TypeId, usize>,
    /// Set by [`decode_partial`]: the partial value of the innermost failing read, handed up
    /// and wrapped by each enclosing read as the error passes through it.
    partial: Option<RefCell<Option<Partial>>>,
    /// The sink of a streaming read ([`super::stream()`]), `None` for a read into a tree.
    out: Option<Out<'s>>,
    /// What a read into a tree does with a positional instance that fails: as the
    /// generated code ([`decode`]), or kept as the member's error ([`decode_partial`]).
    tree_errors: InstanceErrors,
    /// For each type (by address) with positional instances that no expression names
    /// ([`crate::lazy::lazy_instances`], the generated `Lazy<T>` members): which of its
    /// fields they are. Those are read after the type's `seq`.
    lazy: HashMap<usize, Vec<bool>>,
    /// The root's fields that positional instances of types read before them read from
    /// (`io: _root.x._io`, `crate::ir::Positional::io_later`).
    later_names: HashSet<String>,
    /// The substreams of those fields, kept as the root reads them (or as a first reading
    /// pass did, see [`run_with`]).
    later: RefCell<Vec<(String, Arc<[u8]>)>>,
    /// Set in the first of two reading passes: an instance read from a stream not kept yet
    /// is null rather than an error (the second pass reads it).
    first_pass: bool,
}

fn semantic(at: u64, msg: String) -> DecodeError {
    DecodeError::new(at, DecodeErrorKind::Semantic(msg))
}

/// An evaluation error as a decode error at `at`, naming the expression.
fn ex<T>(res: Result<T, String>, e: &SrcExpr, at: u64) -> D<T> {
    res.map_err(|m| semantic(at, format!("in `{}`: {m}", e.src)))
}

fn io_of(r: &ByteReader<'_>) -> IoState {
    IoState {
        pos: r.io_pos(),
        size: r.io_size(),
        eof: r.is_eof(),
    }
}

impl<'s> Interp<'s> {
    /// An interpreter of `s`: the enums that keep unknown values and every type's minimum
    /// size (the generator's own figures, [`crate::sizes::min_lens`]), computed once.
    pub fn new(s: &'s Schema, typed: &'s TypedSchema, ext: &'s Extensions) -> Self {
        let mut open_enums = HashSet::new();
        for t in &s.types {
            if !s.strict {
                open_enums.extend(
                    t.instances
                        .iter()
                        .filter_map(|i| i.enum_name.as_ref().and_then(EnumRef::id)),
                );
            }
            for f in t.fields.iter().filter(|f| !f.strict) {
                if let FieldKind::Int {
                    enum_name: Some(e), ..
                }
                | FieldKind::Bits {
                    enum_name: Some(e), ..
                } = &f.kind
                {
                    open_enums.extend(e.id());
                }
            }
        }
        // The generator's own minimum sizes, so count checks refuse exactly what the
        // generated code refuses.
        let (min_lens, _) = crate::sizes::min_lens(s);
        let refs = crate::lazy::schema_refs(s);
        let mut lazy = HashMap::new();
        for t in &s.types {
            let ids = crate::lazy::lazy_instances(s, t, &refs);
            if !ids.is_empty() {
                let of: Vec<bool> = t.fields.iter().map(|f| ids.contains(&f.id)).collect();
                lazy.insert(std::ptr::from_ref(t) as usize, of);
            }
        }
        let later_names: HashSet<String> = s
            .types
            .iter()
            .flat_map(|t| &t.fields)
            .filter_map(|f| f.at.as_ref()?.io_later.clone())
            .collect();
        let keep_streams = !later_names.is_empty()
            || s.types.iter().any(|t| {
                t.fields
                    .iter()
                    .any(|f| f.at.as_ref().is_some_and(|a| a.io_of.is_some()))
            });
        Interp {
            s,
            trees: Trees::new(s, typed).with_ext(ext),
            keep_streams,
            open_enums,
            min_lens,
            partial: None,
            out: None,
            tree_errors: InstanceErrors::AsGenerated,
            lazy,
            later_names,
            later: RefCell::new(Vec::new()),
            first_pass: false,
        }
    }

    /// Which fields of `t` are positional instances read after its `seq` (`None` when it
    /// has none).
    fn lazy_of(&self, t: &TypeDef) -> Option<&[bool]> {
        if self.lazy.is_empty() {
            return None;
        }
        self.lazy
            .get(&(std::ptr::from_ref(t) as usize))
            .map(Vec::as_slice)
    }

    /// Hands an event to the sink of a streaming read (nothing without one). Errors: the
    /// sink's, kept for [`stream`], as a decode error that ends the read.
    fn emit(&self, f: impl FnOnce(&mut dyn Sink) -> std::io::Result<()>) -> D<()> {
        let Some(o) = &self.out else {
            return Ok(());
        };
        {
            let mut held = o.held.borrow_mut();
            if let Some(top) = held.last_mut() {
                if !top.overflow {
                    // A recorder does not fail.
                    let _ = f(&mut Recorder(&mut top.events));
                    if top.events.len() > HELD_EVENTS {
                        top.overflow = true;
                        top.events = Vec::new();
                    }
                }
                return Ok(());
            }
        }
        let res = {
            let mut sink = o.sink.borrow_mut();
            f(&mut **sink)
        };
        res.map_err(|e| {
            let m = semantic(0, format!("cannot write the output: {e}"));
            *o.failed.borrow_mut() = Some(e);
            m
        })
    }

    /// What this read does with an instance that fails (a read into a tree: as
    /// [`Interp::tree_errors`] says).
    fn instance_errors(&self) -> InstanceErrors {
        self.out.as_ref().map_or(self.tree_errors, |o| o.errors)
    }

    /// Reads positional instance `f` with the sink's events held back until it has read
    /// whole (then handed on), so that nothing of an instance that fails reaches the sink
    /// and the instance is read once (twice when it hands over more than [`HELD_EVENTS`]
    /// events: then they are not held, and once it is known to read it is read again with
    /// its events handed on as they come).
    fn read_held(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        keep: Keep,
    ) -> D<Read> {
        let Some(o) = &self.out else {
            return self.read_field_kept(r, frame, f, keep);
        };
        o.held.borrow_mut().push(Held::default());
        let mark = r.aligned_mark();
        let res = self.read_field_kept(r, frame, f, keep);
        let held = o.held.borrow_mut().pop().unwrap_or_default();
        match res {
            Ok(_) if held.overflow => {
                drop(res);
                // Read again: what the first read noted is noted again.
                r.drop_aligned_since(mark);
                self.read_field_kept(r, frame, f, keep)
            }
            Ok(x) => {
                for ev in held.events {
                    self.emit(|s| ev.replay(s))?;
                }
                Ok(x)
            }
            Err(e) => Err(e),
        }
    }

    /// What a streaming read keeps of field `i` of `t` once it is written to the sink
    /// (everything in a read into a tree, or inside a field kept whole).
    fn keeps(&self, t: &TypeDef, i: usize) -> Keep {
        match &self.out {
            Some(o) if o.whole.get() == 0 => o.plan.of(t, i),
            _ => Keep::Whole,
        }
    }

    /// Reads field `f`, the `i`th of `t`, with what is inside it kept whole when the plan
    /// keeps the field whole.
    fn read_field_kept(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        keep: Keep,
    ) -> D<Read> {
        let whole = match &self.out {
            Some(o) if keep == Keep::Whole => {
                o.whole.set(o.whole.get() + 1);
                Some(o)
            }
            _ => None,
        };
        let res = self.read_field(r, frame, f, keep);
        if let Some(o) = whole {
            o.whole.set(o.whole.get() - 1);
        }
        res
    }

    /// Hands `p` up to the enclosing read (only when partial trees are kept).
    fn keep_partial(&self, p: impl FnOnce() -> Partial) {
        if let Some(c) = &self.partial {
            *c.borrow_mut() = Some(p());
        }
    }

    /// The partial value the failing inner read handed up, if any.
    fn take_partial(&self) -> Option<Partial> {
        self.partial.as_ref().and_then(|c| c.borrow_mut().take())
    }

    /// Hands up a list whose element failed: the elements read before it, then what was
    /// read of the failing element (which started at `start`; reading stopped at `stop`).
    fn keep_failed_list(
        &self,
        mut list: Vec<DynValue>,
        mut spans: Vec<(u64, u64)>,
        start: u64,
        stop: u64,
    ) {
        if self.partial.is_none() {
            return;
        }
        let inner = self.take_partial();
        list.push(inner.map_or(DynValue::Null, |p| p.value));
        spans.push((start, stop.max(start)));
        self.keep_partial(|| Partial {
            value: DynValue::List(list),
            span: None,
            elems: spans,
        });
    }

    /// Hands up the type being read when reading stopped: the fields read so far, then the
    /// failing field `failing` (name, what was read of it, where it started and where
    /// reading stopped) when it was entered.
    fn keep_failed_type(
        &self,
        t: &TypeDef,
        frame: &mut Frame<'_>,
        elem_spans: &mut Vec<Vec<(u64, u64)>>,
        failing: Option<(&'static str, u64, u64)>,
    ) {
        if self.partial.is_none() {
            return;
        }
        let inner = self.take_partial();
        let mut members = std::mem::take(&mut frame.fields);
        let mut spans = std::mem::take(&mut frame.spans);
        let mut elems = std::mem::take(elem_spans);
        if let Some((fid, start, stop)) = failing {
            let p = inner.unwrap_or(Partial {
                value: DynValue::Null,
                span: None,
                elems: Vec::new(),
            });
            members.push((fid, p.value));
            spans.push(Some(p.span.unwrap_or((start, stop.max(start)))));
            elems.push(p.elems);
        }
        let names: Vec<&'static str> = members.iter().map(|(k, _)| *k).collect();
        let s = DynStruct {
            type_name: intern(&t.schema_name),
            members,
            spans,
            elem_spans: elems,
            bit_spans: Vec::new(),
            errors: Vec::new(),
            stream: None,
            hidden: Vec::new(),
            size: 0,
            extent: 0,
            io: None,
            names: intern_names(&names),
        };
        self.keep_partial(|| Partial {
            value: DynValue::Struct(Arc::new(s)),
            span: None,
            elems: Vec::new(),
        });
    }

    fn scope<'a>(
        &'a self,
        frame: &'a Frame<'a>,
        r: &ByteReader<'_>,
        index: Option<i128>,
    ) -> Scope<'a> {
        Scope {
            schema: self.s,
            frame,
            elem: None,
            index,
            // In the expressions of an instance read from another stream, `_io` is still
            // the type's own stream.
            io: Some(frame.own_io.get().unwrap_or_else(|| io_of(r))),
            side: frame.side,
        }
    }

    /// Reads one value of type `t` with its params (explicit ones first, then context ones).
    pub fn read_type(
        &self,
        r: &mut ByteReader<'_>,
        t: &TypeDef,
        params: Vec<(&'static str, Option<DynValue>)>,
    ) -> D<DynStruct> {
        let mut frame = Frame::new(&self.trees, Side::Read, t, params);
        let type_start = r.offset();
        self.emit(|s| s.open_struct(intern(&t.schema_name)))?;
        // `meta.endian` as a switch: the order is decided before anything is read, and
        // given to nested types through their hidden `__is_le` param.
        let decided = t.endian_switch.as_ref().map(|sw| {
            let sc = self.scope(&frame, r, None);
            eval::decide_endian(&sc, sw).map_err(|m| semantic(r.offset(), m))
        });
        let decided = match decided.transpose() {
            Ok(d) => d,
            Err(e) => {
                self.keep_failed_type(t, &mut frame, &mut Vec::new(), None);
                return Err(e);
            }
        };
        frame.settle_endian(decided);
        let mut elem_spans = Vec::with_capacity(t.fields.len());
        let mut bit_spans = Vec::new();
        let mut unaligned = false;
        let lazy = self.lazy_of(t);
        let aligned_mark = r.aligned_mark();
        for (i, f) in t.fields.iter().enumerate() {
            if lazy.is_some_and(|l| l[i]) {
                continue;
            }
            let lists = (&mut elem_spans, &mut bit_spans);
            self.read_member(r, t, &mut frame, (i, f, false), &mut unaligned, lists)?;
        }
        // `-sp-sum-of`: the stored sum must be the sum over the list.
        for f in &t.fields {
            if let Some((list, field, _)) = &f.sum_of {
                let got = frame
                    .fields
                    .iter()
                    .find(|(k, _)| *k == f.id)
                    .map(|(_, v)| v);
                let items = frame
                    .fields
                    .iter()
                    .find(|(k, _)| *k == list)
                    .map(|(_, v)| v);
                if let (Some(DynValue::Int(got)), Some(DynValue::List(items))) = (got, items) {
                    let mut sum: i128 = 0;
                    for it in items {
                        if let DynValue::Struct(s) = it {
                            if let Some(DynValue::Int(x)) = s.get(field) {
                                sum = sum.saturating_add(*x);
                            }
                        }
                    }
                    if sum != *got {
                        let e = semantic(
                            r.offset(),
                            format!("{} is {got} but the sum of {list}.{field} is {sum}", f.id),
                        )
                        .in_field(intern(&f.id));
                        self.keep_failed_type(t, &mut frame, &mut elem_spans, None);
                        return Err(e);
                    }
                }
            }
        }
        // `-sp-end-zeros`: the rest of the stream is the layout the writer derives from the
        // aligned instances read in it (as the generated reader checks by writing).
        if let Some(n) = t.end_zeros {
            let seq_end = r.offset() as usize;
            if let Err(e) = r.check_packed_rest(aligned_mark, seq_end, n as usize) {
                self.keep_failed_type(t, &mut frame, &mut elem_spans, None);
                return Err(e);
            }
        }
        let io = Some(io_of(r));
        let size = r.offset().saturating_sub(type_start);
        // The positional instances no expression names, asked for by the output (each
        // member is shown): read now, each on its own, then put in schema order.
        if let Some(l) = lazy {
            for (i, f) in t.fields.iter().enumerate().filter(|(i, _)| l[*i]) {
                let lists = (&mut elem_spans, &mut bit_spans);
                self.read_member(r, t, &mut frame, (i, f, true), &mut unaligned, lists)?;
            }
            in_schema_order(t, &mut frame, &mut elem_spans, &mut bit_spans);
        }
        let mut inst_values = Vec::with_capacity(t.instances.len());
        for i in 0..t.instances.len() {
            let v = match frame.inst[i].get() {
                Some(v) => v.clone(),
                None => eval::instance_value(self.s, &frame, i, io),
            };
            inst_values.push(v);
        }
        let Frame {
            fields,
            params,
            mut spans,
            errors,
            ..
        } = frame;
        let mut names: Vec<&'static str> = fields.iter().map(|(k, _)| *k).collect();
        let mut members = fields;
        let mut hidden = Vec::new();
        for (p, (k, v)) in t.params.iter().zip(params) {
            if p.context.is_none() {
                let v = v.unwrap_or(DynValue::Null);
                self.emit(|s| s.key(Label::Member(k, MemberKind::Param)))?;
                self.emit(|s| s.value(&v))?;
                names.push(k);
                members.push((k, v));
                spans.push(None);
                elem_spans.push(Vec::new());
            } else {
                hidden.push((k, v));
            }
        }
        for (inst, v) in t.instances.iter().zip(inst_values) {
            let k = intern(&inst.id);
            let v = match (v, self.instance_errors()) {
                (Ok(v), _) => {
                    self.emit(|s| s.key(Label::Member(k, MemberKind::Instance)))?;
                    self.emit(|s| s.value(&v))?;
                    v
                }
                (Err(m), InstanceErrors::Strict) => {
                    let m = format!("in `{}`: {m}", inst.value.src);
                    return Err(semantic(r.offset(), m).in_field(k));
                }
                (Err(m), InstanceErrors::Show) => {
                    let m = format!("in `{}`: {m}", inst.value.src);
                    self.emit(|s| s.key(Label::Member(k, MemberKind::Instance)))?;
                    self.emit(|s| s.error(&m))?;
                    DynValue::Null
                }
                // A failing instance shows as null, as in the generated dynamic view.
                (Err(_), InstanceErrors::AsGenerated) => {
                    self.emit(|s| s.key(Label::Member(k, MemberKind::Instance)))?;
                    self.emit(|s| s.value(&DynValue::Null))?;
                    DynValue::Null
                }
            };
            names.push(k);
            members.push((k, v));
            spans.push(None);
            elem_spans.push(Vec::new());
        }
        Ok(DynStruct {
            type_name: intern(&t.schema_name),
            members,
            spans,
            elem_spans,
            bit_spans,
            errors,
            stream: None,
            hidden,
            size,
            extent: 0,
            io,
            names: intern_names(&names),
        })
    }

    /// One member of `t` (field `i`, `f`): aligned as the generated reader aligns it, its
    /// `if`, its value, handed to the sink of a streaming read and kept (in `frame`, with its
    /// element spans and bits in `lists`) unless the streaming plan drops it. `deferred`: a
    /// positional instance read after the `seq` (see [`decode`]), whose failure is its own
    /// unless the read is strict.
    fn read_member(
        &self,
        r: &mut ByteReader<'_>,
        t: &TypeDef,
        frame: &mut Frame<'_>,
        (i, f, deferred): (usize, &Field, bool),
        unaligned: &mut bool,
        (elem_spans, bit_spans): MemberLists<'_>,
    ) -> D<()> {
        let fid = intern(&f.id);
        let bit_field = crate::bits::is_bit_field(f);
        if f.at.is_none() {
            if *unaligned && !bit_field {
                if f.strict {
                    if let Err(e) = r.align_to_byte() {
                        self.keep_failed_type(t, frame, elem_spans, None);
                        return Err(e.in_field(fid));
                    }
                } else {
                    r.align_to_byte_keep();
                }
            }
            *unaligned = bit_field;
        }
        let start = r.offset();
        let start_bit = r.bit_offset();
        let present = match &f.cond {
            Some(c) => {
                let res = {
                    let sc = self.scope(frame, r, None);
                    ex(eval_bool(c, &sc), c, start)
                };
                match res {
                    Ok(p) => p,
                    Err(e) if f.at.is_some() && self.instance_errors() == InstanceErrors::Show => {
                        let m = format!("byte offset {}: {}", e.offset, e.kind);
                        self.emit(|s| s.key(Label::Member(fid, MemberKind::Field)))?;
                        self.emit(|s| s.error(&m))?;
                        if self.keeps(t, i) != Keep::Drop {
                            frame.spans.push(None);
                            elem_spans.push(Vec::new());
                            frame.fields.push((fid, DynValue::Null));
                        }
                        return Ok(());
                    }
                    Err(e) => {
                        self.keep_failed_type(t, frame, elem_spans, None);
                        return Err(e.in_field(fid));
                    }
                }
            }
            None => true,
        };
        self.emit(|s| s.key(Label::Member(fid, MemberKind::Field)))?;
        let keep = self.keeps(t, i);
        if !present {
            self.emit(|s| s.leaf(&DynValue::Null, None, None))?;
            if keep != Keep::Drop {
                frame.spans.push(None);
                elem_spans.push(Vec::new());
                frame.fields.push((fid, DynValue::Null));
            }
            return Ok(());
        }
        // Whatever an earlier read handed up is not part of this field.
        self.take_partial();
        let isolate = f.at.is_some()
            && match self.instance_errors() {
                InstanceErrors::Show => true,
                InstanceErrors::AsGenerated => deferred,
                InstanceErrors::Strict => false,
            };
        let res = if isolate {
            self.read_held(r, frame, f, keep)
        } else {
            self.read_field_kept(r, frame, f, keep)
        };
        let (v, span, elems, ebits) = match res {
            Ok(x) => x,
            Err(e) if isolate => {
                self.take_partial();
                let m = if e.path.to_string().is_empty() {
                    format!("byte offset {}: {}", e.offset, e.kind)
                } else {
                    e.to_string()
                };
                if self.instance_errors() == InstanceErrors::Show {
                    self.emit(|s| s.error(&m))?;
                } else {
                    self.emit(|s| s.leaf(&DynValue::Null, None, None))?;
                }
                if keep != Keep::Drop {
                    frame.spans.push(None);
                    elem_spans.push(Vec::new());
                    frame.fields.push((fid, DynValue::Null));
                }
                frame.errors.push((fid, e.in_field(fid)));
                return Ok(());
            }
            Err(e) => {
                let failing = Some((fid, start, r.offset()));
                self.keep_failed_type(t, frame, elem_spans, failing);
                return Err(e.in_field(fid));
            }
        };
        let end_bit = r.bit_offset();
        let unaligned = |(a, b): (u64, u64)| a % 8 != 0 || b % 8 != 0;
        let own_bits =
            (bit_field && ebits.is_empty() && f.at.is_none() && unaligned((start_bit, end_bit)))
                .then_some((start_bit, end_bit));
        let span = span.or(Some((start, r.offset())));
        match &v {
            DynValue::Struct(_) => self.emit(|s| s.close_struct(span))?,
            // A list was handed over element by element as it was read.
            DynValue::List(_) => {}
            leaf => self.emit(|s| s.leaf(leaf, span, own_bits))?,
        }
        if keep == Keep::Drop {
            return Ok(());
        }
        let member = frame.fields.len();
        if let Some((start, end)) = own_bits {
            bit_spans.push(BitSpan {
                member,
                element: None,
                start,
                end,
            });
        }
        for (k, &(a, b)) in ebits.iter().enumerate() {
            if unaligned((a, b)) {
                bit_spans.push(BitSpan {
                    member,
                    element: Some(k),
                    start: a,
                    end: b,
                });
            }
        }
        frame.spans.push(span);
        elem_spans.push(elems);
        frame.fields.push((fid, v));
        Ok(())
    }

    /// One field: its position (positional instances), repetition and elements, with the
    /// span of a positional instance and the span of each element of a list. Errors carry
    /// the index of a failing element; the caller adds the field's name.
    fn read_field(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        keep: Keep,
    ) -> D<Read> {
        if let Some((at, x)) = f.at.as_ref().and_then(|a| Some((a, a.io_later.as_ref()?))) {
            // `io: _root.x._io` with `x` read after this type: its kept substream.
            let kept = self
                .later
                .borrow()
                .iter()
                .find(|(n, _)| n == x)
                .map(|(_, b)| b.clone());
            let Some(stream) = kept else {
                if self.first_pass {
                    return Ok((DynValue::Null, None, Vec::new(), Vec::new()));
                }
                return Err(semantic(
                    r.offset(),
                    format!("`_root.{x}._io`: the stream of `{x}` is not known (the root's reader has not read `{x}`)"),
                ));
            };
            return self.read_in_stream(r, frame, f, at, &stream, keep);
        }
        if let Some((at, io)) = f.at.as_ref().and_then(|a| Some((a, a.io_of.as_ref()?))) {
            // `io: X._io`: read from the substream `X` was read from (kept with `X`).
            let stream = {
                let sc = self.scope(frame, r, None);
                match ex(eval(io, &sc), io, r.offset())?.as_ref() {
                    DynValue::Struct(x) => x.stream.clone().ok_or_else(|| {
                        semantic(
                            r.offset(),
                            format!("`{}` was not read in a substream of its own (no `size` or `process`), so it has no `_io` to read from", io.src),
                        )
                    })?,
                    _ => {
                        return Err(semantic(
                            r.offset(),
                            format!("in `io: {}._io`: not a user-type value", io.src),
                        ))
                    }
                }
            };
            return self.read_in_stream(r, frame, f, at, &stream, keep);
        }
        if let Some(at) = &f.at {
            let pos = {
                let sc = self.scope(frame, r, None);
                ex(eval_int(&at.pos, &sc), &at.pos, r.offset())?
            };
            let saved = r.enter_instance(pos, at.whole)?;
            let start = r.offset();
            let v = self.read_repeat(r, frame, f, keep);
            let end = r.offset();
            r.leave_instance(saved);
            if let (Some(a), Ok(_)) = (at.align, &v) {
                r.note_aligned(start, end, a);
            }
            if v.is_err() && self.partial.is_some() {
                let p = self.take_partial();
                self.keep_partial(|| match p {
                    Some(p) => Partial {
                        span: Some((start, end.max(start))),
                        ..p
                    },
                    None => Partial {
                        value: DynValue::Null,
                        span: Some((start, end.max(start))),
                        elems: Vec::new(),
                    },
                });
            }
            let (v, elems, bits) = v?;
            return Ok((v, Some((start, end)), elems, bits));
        }
        let (v, elems, bits) = self.read_repeat(r, frame, f, keep)?;
        Ok((v, None, elems, bits))
    }

    /// Positional instance `f` (at `at`) read from `stream`, another value's substream
    /// (`io: X._io`), at its `pos` evaluated on the type's own stream `r`.
    fn read_in_stream(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        at: &crate::ir::Positional,
        stream: &[u8],
        keep: Keep,
    ) -> D<Read> {
        let pos = {
            let sc = self.scope(frame, r, None);
            ex(eval_int(&at.pos, &sc), &at.pos, r.offset())?
        };
        let mut sub = ByteReader::new(stream).sharing(r.processed_share());
        let saved = sub.enter_instance(pos, false)?;
        let start = sub.offset();
        frame.own_io.set(Some(io_of(r)));
        let v = self.read_repeat(&mut sub, frame, f, keep);
        frame.own_io.set(None);
        let end = sub.offset();
        sub.leave_instance(saved);
        r.add_processed(sub.processed_used());
        let (v, elems, bits) = v?;
        Ok((v, Some((start, end)), elems, bits))
    }

    /// Keeps `stream`, the substream field `f` was read in, when `f` is a field of the root
    /// that positional instances read from (see [`first_pass`]).
    fn keep_later(&self, f: &Field, stream: Option<&Arc<[u8]>>) {
        let (Some(b), Some(root)) = (stream, self.s.types.first()) else {
            return;
        };
        if !self.later_names.contains(&f.id) || !root.fields.iter().any(|g| std::ptr::eq(g, f)) {
            return;
        }
        let mut later = self.later.borrow_mut();
        later.retain(|(n, _)| n != &f.id);
        later.push((f.id.clone(), b.clone()));
    }

    /// A field's value: one element, or a list (handed to the sink of a streaming read
    /// element by element; a list the plan drops is given back empty, one it keeps as a
    /// value without its elements' spans and bits, which only a value kept whole shows).
    fn read_repeat(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        keep: Keep,
    ) -> D<Repeated> {
        if f.varint {
            return Ok((self.read_varint(r, f)?, Vec::new(), Vec::new()));
        }
        let count = match &f.repeat {
            Repeat::None => return Ok((self.read_checked(r, frame, f, None)?, vec![], vec![])),
            Repeat::Expr(e) => {
                let count = {
                    let sc = self.scope(frame, r, None);
                    ex(eval_int(e, &sc), e, r.offset())?
                };
                // A literal count of 1 to 32 plain numbers is a fixed array in the generated
                // code, read element by element without a count check.
                let fixed = matches!(
                    (&f.kind, &e.expr),
                    (
                        FieldKind::Int {
                            enum_name: None,
                            ..
                        } | FieldKind::Float { .. },
                        crate::expr::Expr::Int(1..=32)
                    )
                );
                Some(match &f.kind {
                    _ if fixed => count as usize,
                    FieldKind::Bits { width, .. } => {
                        r.check_count_bits(count, u32::from(*width))?
                    }
                    _ => r.check_count(count, self.min_len(f))?,
                })
            }
            Repeat::Eos | Repeat::Until(_) => None,
        };
        let list_start = r.offset();
        self.emit(|s| s.open_list())?;
        let mut list = ElemList::new(keep, count.unwrap_or(0));
        let bit_list = matches!(f.kind, FieldKind::Bits { .. });
        loop {
            let i = list.len;
            match count {
                Some(n) if i >= n => break,
                None if matches!(f.repeat, Repeat::Eos) && r.is_eof() => break,
                _ => {}
            }
            let before = r.bit_offset();
            let start = r.offset();
            self.take_partial();
            self.emit(|s| s.key(Label::Element(i)))?;
            let v = match self.read_checked(r, frame, f, Some(i)) {
                Ok(v) => v,
                Err(e) => {
                    self.keep_failed_list(list.items, list.spans, start, r.offset());
                    return Err(e.in_index(i));
                }
            };
            let span = (start, r.offset());
            let bits = (bit_list
                && !(before.is_multiple_of(8) && r.bit_offset().is_multiple_of(8)))
            .then_some((before, r.bit_offset()));
            match &v {
                DynValue::Struct(_) => self.emit(|s| s.close_struct(Some(span)))?,
                leaf => self.emit(|s| s.leaf(leaf, Some(span), bits))?,
            }
            list.push(v, span, bit_list.then_some((before, r.bit_offset())));
            if let Repeat::Until(u) = &f.repeat {
                let mut sc = self.scope(frame, r, Some(i as i128));
                sc.elem = list.last();
                if ex(eval_bool(u, &sc), u, r.offset()).map_err(|e| e.in_index(i))? {
                    break;
                }
            }
            if count.is_none() && r.bit_offset() == before {
                return Err(semantic(
                    r.offset(),
                    "a repeated element took no bytes, so the list would never end".into(),
                )
                .in_index(i));
            }
        }
        let n = list.len;
        self.emit(|s| s.close_list((list_start, r.offset()), n))?;
        Ok((DynValue::List(list.items), list.spans, list.bits))
    }

    /// The smallest number of bytes one element of `f` can take (for the count check, as
    /// the generated reader makes it).
    fn min_len(&self, f: &Field) -> usize {
        match &f.kind {
            FieldKind::User { ty: name, .. } => match self.opaque(name) {
                // An opaque type's own figure, as the generated reader takes its `MIN_LEN`.
                Some(c) => c.min_len(),
                None => name
                    .id()
                    .and_then(|i| self.min_lens.get(&i).copied())
                    .unwrap_or(0),
            },
            FieldKind::Int { bytes, .. } | FieldKind::Float { bytes, .. } => usize::from(*bytes),
            FieldKind::Str { size: None, .. } => 1,
            _ => 0,
        }
    }

    /// `-sp-varint: leb128`: LEB128 groups read as one unsigned number.
    fn read_varint(&self, r: &mut ByteReader<'_>, f: &Field) -> D<DynValue> {
        let start = r.offset();
        let mut leb = statepack_runtime::bits::Leb128Decoder::new();
        let mut i = 0usize;
        loop {
            let g: u8 = match f.kind {
                FieldKind::Bits { .. } => r.read_bits_be(8).map(|b| b as u8),
                _ => r.read_u8(),
            }
            .map_err(|e| e.in_index(i))?;
            match leb.push(g) {
                Ok(Some(v)) => return Ok(DynValue::Int(i128::from(v))),
                Ok(None) => i += 1,
                Err(fault) => return Err(semantic(start, fault.to_string())),
            }
        }
    }

    /// One element, then its `valid` rule.
    fn read_checked(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        index: Option<usize>,
    ) -> D<DynValue> {
        // A bit field's rule names the byte holding its first bit (`offset()` counts a
        // partly read byte as read), as the generated readers do.
        let el_at = if matches!(f.kind, FieldKind::Bits { .. }) {
            r.bit_offset() / 8
        } else {
            r.offset()
        };
        let v = if f.recursive.is_empty() {
            self.read_elem(r, frame, f, index)?
        } else {
            r.enter_recursion()?;
            let v = self.read_elem(r, frame, f, index);
            r.leave_recursion();
            v?
        };
        if let Some(rule) = &f.valid {
            let mut sc = self.scope(frame, r, index.map(|i| i as i128));
            sc.elem = Some(&v);
            let ok = match rule {
                Valid::Eq(e) => {
                    let want = ex(eval(e, &sc), e, el_at)?;
                    ex(eval::equal(&v, &want), e, el_at)?
                }
                Valid::Range(lo, hi) => {
                    let mut ok = true;
                    for (b, lower) in [(lo, true), (hi, false)] {
                        if let Some(b) = b {
                            let bound = ex(eval(b, &sc), b, el_at)?;
                            let op = if lower {
                                crate::expr::BinOp::Ge
                            } else {
                                crate::expr::BinOp::Le
                            };
                            ok &= matches!(
                                ex(eval::binary(op, &v, &bound), b, el_at)?,
                                DynValue::Bool(true)
                            );
                        }
                    }
                    ok
                }
                Valid::AnyOf(list) => {
                    let mut ok = false;
                    for e in list {
                        let x = ex(eval(e, &sc), e, el_at)?;
                        if ex(eval::equal(&v, &x), e, el_at)? {
                            ok = true;
                            break;
                        }
                    }
                    ok
                }
                Valid::Expr(e) => ex(eval_bool(e, &sc), e, el_at)?,
                Valid::InEnum => matches!(&v, DynValue::Enum(x) if x.name.is_some()),
            };
            if !ok {
                self.keep_partial(|| Partial {
                    value: v.clone(),
                    span: None,
                    elems: Vec::new(),
                });
                return Err(DecodeError::new(
                    el_at,
                    DecodeErrorKind::NotValid {
                        value: show(&v),
                        rule: intern(&rule.describe()),
                    },
                ));
            }
        }
        Ok(v)
    }

    /// The value of a byte or size expression (`None` for a field ended by its terminator).
    fn size(
        &self,
        r: &ByteReader<'_>,
        frame: &Frame<'_>,
        size: Option<&Size>,
        index: Option<usize>,
    ) -> D<Option<i128>> {
        Ok(match size {
            Some(Size::Expr(e)) => {
                let sc = self.scope(frame, r, index.map(|i| i as i128));
                Some(ex(eval_int(e, &sc), e, r.offset())?)
            }
            Some(Size::Eos) => Some(r.remaining() as i128),
            Some(Size::Terminator) | None => None,
        })
    }

    fn read_elem(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        index: Option<usize>,
    ) -> D<DynValue> {
        let at = r.offset();
        match &f.kind {
            FieldKind::Int {
                bytes,
                signed,
                endian,
                enum_name,
            } => {
                let endian = frame.order(*endian).map_err(|m| semantic(at, m))?;
                let raw = read_int(r, *bytes, *signed, endian)?;
                self.as_enum(f, enum_name.as_ref(), raw, at)
            }
            FieldKind::Float { bytes, endian } => Ok(DynValue::Float(
                match (bytes, frame.order(*endian).map_err(|m| semantic(at, m))?) {
                    (_, Endian::Computed) => return Err(computed_endian(r.offset())),
                    (4, Endian::Le) => widen(r.read_f32le()?),
                    (4, Endian::Be) => widen(r.read_f32be()?),
                    (_, Endian::Le) => r.read_f64le()?,
                    (_, Endian::Be) => r.read_f64be()?,
                },
            )),
            FieldKind::Bits {
                width,
                offset_binary,
                le,
                enum_name,
            } => {
                let w = u32::from(*width);
                let raw = if *le {
                    r.read_bits_le(w)?
                } else {
                    r.read_bits_be(w)?
                };
                if enum_name.is_some() {
                    return self.as_enum(f, enum_name.as_ref(), i128::from(raw), at);
                }
                Ok(match (width, offset_binary) {
                    (1, false) => DynValue::Bool(raw != 0),
                    (_, false) => DynValue::Int(i128::from(raw)),
                    (_, true) => DynValue::Int(i128::from(
                        statepack_runtime::bits::from_offset_binary(raw, w),
                    )),
                })
            }
            FieldKind::Contents(c) => {
                r.expect(c)?;
                Ok(DynValue::Bytes(c.clone()))
            }
            FieldKind::Bytes(_) | FieldKind::User { .. }
                if f.term.is_some() && f.process.is_some() =>
            {
                let size = match &f.kind {
                    FieldKind::Bytes(s) => Some(s),
                    FieldKind::User { size, .. } => size.as_ref(),
                    _ => None,
                };
                let n = self.size(r, frame, size, index)?;
                let (val, _) = r.read_terminated(n, term_of(f.term.as_ref()))?;
                let data = self.unprocess(r, frame, f, val, at, index)?;
                match &f.kind {
                    FieldKind::User { ty: name, .. } => {
                        let params = self.args(r, frame, f, name, index)?;
                        self.read_sub(r, &data, f, name, params)
                    }
                    _ => Ok(DynValue::Bytes(data)),
                }
            }
            FieldKind::Bytes(size)
            | FieldKind::Str {
                size: Some(size), ..
            } if f.term.is_some() => {
                let n = self.size(r, frame, Some(size), index)?;
                self.read_terminated(r, f, n, at)
            }
            FieldKind::Str { size: None, .. } if f.term.is_some() => {
                self.read_terminated(r, f, None, at)
            }
            FieldKind::User { ty: name, size } if f.term.is_some() => {
                let n = self.size(r, frame, size.as_ref(), index)?;
                let term = term_of(f.term.as_ref());
                let (val, _) = r.read_terminated(n, term)?;
                let params = self.args(r, frame, f, name, index)?;
                self.read_sub(r, val, f, name, params)
            }
            FieldKind::Bytes(size) if f.process.is_some() => {
                let stored = self.take(r, frame, size, index)?;
                Ok(DynValue::Bytes(
                    self.unprocess(r, frame, f, stored, at, index)?,
                ))
            }
            FieldKind::User {
                ty: name,
                size: Some(size),
            } if f.process.is_some() => {
                let stored = self.take(r, frame, size, index)?;
                let data = self.unprocess(r, frame, f, stored, at, index)?;
                let params = self.args(r, frame, f, name, index)?;
                self.read_sub(r, &data, f, name, params)
            }
            FieldKind::Bytes(size) => {
                Ok(DynValue::Bytes(self.take(r, frame, size, index)?.to_vec()))
            }
            FieldKind::Str { size, encoding } => {
                let b = match size {
                    None => r.take_until(0)?,
                    Some(s) => self.take(r, frame, s, index)?,
                };
                Ok(DynValue::Str(statepack_runtime::io::decode_str(
                    b, encoding, at,
                )?))
            }
            FieldKind::User { ty: name, size } if self.opaque(name).is_some() => {
                self.read_opaque_sized(r, frame, f, name, size.as_ref(), index)
            }
            FieldKind::User { ty: name, size } => {
                let t = self.type_of(name, at)?;
                let params = self.args(r, frame, f, name, index)?;
                let v = match size {
                    None => self.read_type(r, t, params)?,
                    Some(Size::Eos) if f.strict => self.read_type(r, t, params)?,
                    Some(s) => {
                        let n = match self.size(r, frame, Some(s), index)? {
                            Some(n) => n,
                            None => r.remaining() as i128,
                        };
                        let old = r.push_limit(n)?;
                        let kept = self.keep_streams.then(|| {
                            let m = r.mark();
                            let b: Arc<[u8]> = Arc::from(r.take_rest());
                            r.reset_to(m);
                            b
                        });
                        let mut v = self.read_type(r, t, params)?;
                        self.keep_later(f, kept.as_ref());
                        v.stream = kept;
                        if f.strict {
                            r.pop_limit(old)?;
                        } else {
                            r.pop_limit_skip(old)?;
                        }
                        v
                    }
                };
                Ok(DynValue::Struct(Arc::new(v)))
            }
            FieldKind::Switch {
                size: Some(size), ..
            } if f.process.is_some() => {
                // The selected case reads the processed bytes, a stream of their own.
                let stored = self.take(r, frame, size, index)?;
                let data = self.unprocess(r, frame, f, stored, at, index)?;
                let mut sub = ByteReader::new(&data).sharing(r.processed_share());
                let v = self.read_switch(&mut sub, frame, f, index, true)?;
                if f.strict {
                    sub.finish()?;
                }
                r.add_processed(sub.processed_used());
                Ok(v)
            }
            FieldKind::Switch { size, .. } => match size {
                None => self.read_switch(r, frame, f, index, false),
                Some(s) => {
                    let n = match self.size(r, frame, Some(s), index)? {
                        Some(n) => n,
                        None => r.remaining() as i128,
                    };
                    let old = r.push_limit(n)?;
                    let v = self.read_switch(r, frame, f, index, true)?;
                    if f.strict {
                        r.pop_limit(old)?;
                    } else {
                        r.pop_limit_skip(old)?;
                    }
                    Ok(v)
                }
            },
        }
    }

    fn read_switch(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        index: Option<usize>,
        sized: bool,
    ) -> D<DynValue> {
        let FieldKind::Switch {
            on, cases, default, ..
        } = &f.kind
        else {
            return Ok(DynValue::Null);
        };
        let at = r.offset();
        let mut chosen: Option<&TypeRef> = None;
        {
            let sc = self.scope(frame, r, index.map(|i| i as i128));
            let v = ex(eval(on, &sc), on, at)?;
            for (k, tn) in cases {
                let kv = ex(eval(k, &sc), k, at)?;
                if ex(eval::equal(&v, &kv), k, at)? {
                    chosen = Some(tn);
                    break;
                }
            }
            if chosen.is_none() {
                chosen = default.as_ref();
            }
            if chosen.is_none() {
                if !f.strict {
                    return Ok(if sized {
                        DynValue::Bytes(r.take_rest().to_vec())
                    } else {
                        DynValue::Null
                    });
                }
                return Err(DecodeError::new(
                    at,
                    DecodeErrorKind::NotValid {
                        value: show(&v),
                        rule: "must select one of the switch cases",
                    },
                ));
            }
        }
        let Some(tn) = chosen else {
            return Ok(DynValue::Null);
        };
        if let Some((bytes, signed, float, endian)) = eval::number_type(self.s.type_name(tn)) {
            let endian = frame
                .order(endian.or(self.s.endian).unwrap_or(Endian::Le))
                .map_err(|m| semantic(at, m))?;
            return if float {
                Ok(DynValue::Float(match (bytes, endian) {
                    (_, Endian::Computed) => return Err(computed_endian(r.offset())),
                    (4, Endian::Le) => widen(r.read_f32le()?),
                    (4, Endian::Be) => widen(r.read_f32be()?),
                    (_, Endian::Le) => r.read_f64le()?,
                    (_, Endian::Be) => r.read_f64be()?,
                }))
            } else {
                Ok(DynValue::Int(read_int(r, bytes, signed, endian)?))
            };
        }
        if let Some(z) = crate::num_type::case_string(self.s.type_name(tn)) {
            // `str`: the rest of the switch's size; `strz`: up to its terminator.
            let FieldKind::Switch { encoding, .. } = &f.kind else {
                return Ok(DynValue::Null);
            };
            let enc = encoding.unwrap_or("UTF-8");
            let at = r.offset();
            let val = if z {
                let term = TermSpec::strz(enc);
                r.read_terminated(None, term_of(Some(&term)))?.0
            } else {
                r.take_rest()
            };
            return Ok(DynValue::Str(statepack_runtime::io::decode_str(
                val, enc, at,
            )?));
        }
        if let Some(c) = self.opaque(tn) {
            return self.read_opaque(r, c);
        }
        let t = self.type_of(tn, at)?;
        let params = self.args(r, frame, f, tn, index)?;
        let v = self.read_type(r, t, params)?;
        Ok(DynValue::Struct(Arc::new(v)))
    }

    /// The opaque type `name` names: one the schema does not define, registered in the
    /// interpreter's [`Extensions`].
    fn opaque(&self, name: &TypeRef) -> Option<&'s dyn super::OpaqueCodec> {
        match name {
            TypeRef::Named(n) if self.s.opaque.contains(n) => self.trees.ext.opaque_type(n),
            _ => None,
        }
    }

    /// A value of opaque type `c` read at `r`'s position, then handed to the sink of a
    /// streaming read as a user type ([`Interp::emit_members`]; the caller closes it).
    fn read_opaque(&self, r: &mut ByteReader<'_>, c: &dyn super::OpaqueCodec) -> D<DynValue> {
        let v = c.read(r, self.trees.ext)?;
        if self.out.is_some() {
            self.emit(|s| s.open_struct(v.type_name))?;
            self.emit_members(&v, 0)?;
        }
        Ok(DynValue::Struct(Arc::new(v)))
    }

    /// Hands the members of `v`, read whole, to the sink of a streaming read: those read
    /// from the bytes with their spans (nested user types and lists opened and closed), the
    /// others (params, instances, the members of a Rust type's value) as whole values.
    fn emit_members(&self, v: &DynStruct, depth: usize) -> D<()> {
        // A Rust type's value has no spans: its members are its fields.
        let rust = v.spans.iter().all(Option::is_none);
        for (i, (k, m)) in v.members.iter().enumerate() {
            let span = v.spans.get(i).copied().flatten();
            let kind = if span.is_some() || rust {
                MemberKind::Field
            } else {
                MemberKind::Instance
            };
            self.emit(|s| s.key(Label::Member(k, kind)))?;
            let elems = v.elem_spans.get(i).map_or(&[][..], Vec::as_slice);
            self.emit_read(m, span, elems, depth)?;
        }
        Ok(())
    }

    /// One value of [`Interp::emit_members`]: read from `span` (its elements from `elems`),
    /// or whole when it was not read from the bytes or is nested too deeply.
    fn emit_read(
        &self,
        m: &DynValue,
        span: Option<(u64, u64)>,
        elems: &[(u64, u64)],
        depth: usize,
    ) -> D<()> {
        let Some(span) = span.filter(|_| depth < usize::from(statepack_runtime::io::MAX_RECURSION))
        else {
            return self.emit(|s| s.value(m));
        };
        match m {
            DynValue::Struct(x) => {
                self.emit(|s| s.open_struct(x.type_name))?;
                self.emit_members(x, depth + 1)?;
                self.emit(|s| s.close_struct(Some(span)))
            }
            DynValue::List(items) if items.len() == elems.len() => {
                self.emit(|s| s.open_list())?;
                for (j, (item, e)) in items.iter().zip(elems).enumerate() {
                    self.emit(|s| s.key(Label::Element(j)))?;
                    self.emit_read(item, Some(*e), &[], depth + 1)?;
                }
                self.emit(|s| s.close_list(span, items.len()))
            }
            DynValue::List(_) => self.emit(|s| s.value(m)),
            leaf => self.emit(|s| s.leaf(leaf, Some(span), None)),
        }
    }

    /// A field of opaque type `name` (no `process`, no terminator): read in the stream, or
    /// in a substream of the field's `size` whose bytes it must use up when the field is
    /// strict (else the rest is skipped, as for a sized user type).
    fn read_opaque_sized(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        name: &TypeRef,
        size: Option<&Size>,
        index: Option<usize>,
    ) -> D<DynValue> {
        let Some(c) = self.opaque(name) else {
            return Err(semantic(
                r.offset(),
                format!("no type `{}` in the schema", self.s.type_name(name)),
            ));
        };
        let Some(s) = size else {
            return self.read_opaque(r, c);
        };
        if matches!(s, Size::Eos) && f.strict {
            return self.read_opaque(r, c);
        }
        let n = match self.size(r, frame, Some(s), index)? {
            Some(n) => n,
            None => r.remaining() as i128,
        };
        let old = r.push_limit(n)?;
        let v = self.read_opaque(r, c)?;
        if f.strict {
            r.pop_limit(old)?;
        } else {
            r.pop_limit_skip(old)?;
        }
        Ok(v)
    }

    fn type_of(&self, name: &TypeRef, at: u64) -> D<&'s TypeDef> {
        self.s.type_of(name).ok_or_else(|| {
            semantic(
                at,
                format!("no type `{}` in the schema", self.s.type_name(name)),
            )
        })
    }

    /// Reads type `name` from `data` in a stream of its own (a processed or terminated field).
    /// The reader of the substream shares `r`'s processed-bytes budget.
    fn read_sub(
        &self,
        r: &mut ByteReader<'_>,
        data: &[u8],
        f: &Field,
        name: &TypeRef,
        params: Vec<(&'static str, Option<DynValue>)>,
    ) -> D<DynValue> {
        if let Some(c) = self.opaque(name) {
            let mut sub = ByteReader::new(data).sharing(r.processed_share());
            let v = self.read_opaque(&mut sub, c)?;
            if f.strict {
                sub.finish()?;
            }
            r.add_processed(sub.processed_used());
            return Ok(v);
        }
        let t = self.type_of(name, 0)?;
        let mut sub = ByteReader::new(data).sharing(r.processed_share());
        let mut v = self.read_type(&mut sub, t, params)?;
        if self.keep_streams {
            v.stream = Some(Arc::from(data));
        }
        if f.strict {
            sub.finish()?;
        }
        r.add_processed(sub.processed_used());
        Ok(DynValue::Struct(Arc::new(v)))
    }

    fn take<'b>(
        &self,
        r: &mut ByteReader<'b>,
        frame: &Frame<'_>,
        size: &Size,
        index: Option<usize>,
    ) -> D<&'b [u8]> {
        match self.size(r, frame, Some(size), index)? {
            Some(n) if !matches!(size, Size::Eos) => r.take_sized(n),
            _ => Ok(r.take_rest()),
        }
    }

    fn read_terminated(
        &self,
        r: &mut ByteReader<'_>,
        f: &Field,
        n: Option<i128>,
        at: u64,
    ) -> D<DynValue> {
        let term = term_of(f.term.as_ref());
        let (val, _) = r.read_terminated(n, term)?;
        Ok(match &f.kind {
            FieldKind::Str { encoding, .. } => {
                DynValue::Str(statepack_runtime::io::decode_str(val, encoding, at)?)
            }
            _ => DynValue::Bytes(val.to_vec()),
        })
    }

    /// The value of processed field `f` from its stored bytes, within what is left of the
    /// file's processed-bytes budget (shared with every reader of processed bytes).
    fn unprocess(
        &self,
        r: &mut ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        stored: &[u8],
        at: u64,
        index: Option<usize>,
    ) -> D<Vec<u8>> {
        let sc = self.scope(frame, r, index.map(|i| i as i128));
        let key: Vec<u8>;
        let p = match &f.process {
            Some(Process::Zlib) => Processor::Zlib,
            Some(Process::Xor(ProcArg::Bytes(b))) => Processor::Xor(b),
            Some(Process::Xor(ProcArg::Expr(e))) => {
                key = match ex(eval(e, &sc), e, at)?.into_owned() {
                    DynValue::Int(i) => vec![i as u8],
                    DynValue::Bytes(b) => b,
                    other => {
                        return Err(semantic(
                            at,
                            format!(
                                "xor key `{}` is {}, not an integer or bytes",
                                e.src,
                                other.kind()
                            ),
                        ))
                    }
                };
                Processor::Xor(&key)
            }
            Some(Process::Rol(e)) => Processor::Rol(ex(eval_int(e, &sc), e, at)?),
            Some(Process::Ror(e)) => Processor::Ror(ex(eval_int(e, &sc), e, at)?),
            Some(Process::Custom { name, args }) => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(ex(eval(a, &sc), a, at)?.into_owned());
                }
                let p = self
                    .trees
                    .ext
                    .make_processor(name, &vals)
                    .map_err(|m| semantic(at, m))?;
                // Charged after it returns, as the generated reader charges it.
                let data = statepack_runtime::process::unprocess_custom(p.as_ref(), stored, at)?;
                r.charge_processed(data.len(), at)?;
                return Ok(data);
            }
            None => return Ok(stored.to_vec()),
        };
        let data = statepack_runtime::io::unprocess_within(p, stored, at, r.processed_room())?;
        r.charge_processed(data.len(), at)?;
        Ok(data)
    }

    /// The params type `tn` is read with by field `f`: the field's arguments, then the
    /// context params' values, evaluated in the reading type.
    fn args(
        &self,
        r: &ByteReader<'_>,
        frame: &Frame<'_>,
        f: &Field,
        tn: &TypeRef,
        index: Option<usize>,
    ) -> D<Vec<(&'static str, Option<DynValue>)>> {
        let at = r.offset();
        if self.opaque(tn).is_some() {
            // An opaque type takes no params (`super::unsupported_with` refuses arguments).
            return Ok(Vec::new());
        }
        let t = self.type_of(tn, at)?;
        let mut given: Vec<Option<&SrcExpr>> = match &f.kind {
            FieldKind::User { .. } => f.args.iter().map(Some).collect(),
            _ => f
                .switch_args
                .iter()
                .find(|(n, _)| n == tn)
                .map(|(_, a)| a.iter().map(Some).collect())
                .unwrap_or_default(),
        };
        let written = t.params.iter().filter(|p| p.context.is_none()).count();
        if written != given.len() {
            return Err(semantic(
                at,
                format!(
                    "type `{}` takes {written} argument(s) but {} are given",
                    self.s.type_name(tn),
                    given.len()
                ),
            ));
        }
        if let Some((_, ctx)) = f.ctx_args.iter().find(|(n, _)| Some(*n) == tn.id()) {
            given.extend(ctx.iter().map(Option::as_ref));
        }
        let sc = self.scope(frame, r, index.map(|i| i as i128));
        let mut out = Vec::with_capacity(t.params.len());
        for (i, p) in t.params.iter().enumerate() {
            let v = match given.get(i).copied().flatten() {
                None => None,
                Some(e) => {
                    let v = ex(eval(e, &sc), e, at)?.into_owned();
                    Some(match (&p.kind, v) {
                        (ParamKind::Float, DynValue::Int(x)) => DynValue::Float(x as f64),
                        (ParamKind::Int, DynValue::Bool(b)) => DynValue::Int(i128::from(b)),
                        (ParamKind::Enum(en), DynValue::Int(x)) => {
                            ex(enum_value(self.s, self.s.enum_name(en), x), e, at)?
                        }
                        (_, v) => v,
                    })
                }
            };
            out.push((intern(&p.id), v));
        }
        Ok(out)
    }

    /// An integer read for a field with `enum`: the enum's value, or for a closed enum (or
    /// a strict field) an `UnknownEnum` error when the enum does not list it.
    fn as_enum(&self, f: &Field, enum_name: Option<&EnumRef>, raw: i128, at: u64) -> D<DynValue> {
        let Some(r) = enum_name else {
            return Ok(DynValue::Int(raw));
        };
        let e = self.s.enum_name(r);
        let v = enum_value(self.s, e, raw).map_err(|m| semantic(at, m))?;
        if let DynValue::Enum(x) = &v {
            let open = r.id().is_some_and(|i| self.open_enums.contains(&i));
            if x.name.is_none() && (f.strict || !open) {
                return Err(DecodeError::new(
                    at,
                    DecodeErrorKind::UnknownEnum {
                        enum_name: intern(e),
                        value: raw,
                    },
                ));
            }
        }
        Ok(v)
    }
}

/// The elements of a list being read: all of them (with their spans, and bits for a list
/// of bit fields) when the list is kept, else only the count and the last element (`_` of
/// `repeat-until`).
struct ElemList {
    keep: bool,
    /// Keep each element's span and bits too.
    spans_too: bool,
    len: usize,
    items: Vec<DynValue>,
    spans: Vec<(u64, u64)>,
    bits: Vec<(u64, u64)>,
    last: Option<DynValue>,
}

impl ElemList {
    /// An empty list, with room for `n` elements when it is kept (`n` was checked against
    /// the bytes left).
    fn new(keep: Keep, n: usize) -> Self {
        let room = if keep == Keep::Drop { 0 } else { n };
        ElemList {
            keep: keep != Keep::Drop,
            spans_too: keep == Keep::Whole,
            len: 0,
            items: Vec::with_capacity(room),
            spans: Vec::with_capacity(if keep == Keep::Whole { room } else { 0 }),
            bits: Vec::new(),
            last: None,
        }
    }

    fn push(&mut self, v: DynValue, span: (u64, u64), bits: Option<(u64, u64)>) {
        self.len += 1;
        if self.keep {
            self.items.push(v);
            if self.spans_too {
                self.spans.push(span);
                self.bits.extend(bits);
            }
        } else {
            self.last = Some(v);
        }
    }

    /// The element read last.
    fn last(&self) -> Option<&DynValue> {
        if self.keep {
            self.items.last()
        } else {
            self.last.as_ref()
        }
    }
}

/// Puts the members of a type read so far (`frame`'s fields with their spans, element spans
/// and bits) in the order of `t`'s fields, after positional instances read after the `seq`.
fn in_schema_order(
    t: &TypeDef,
    frame: &mut Frame<'_>,
    elem_spans: &mut Vec<Vec<(u64, u64)>>,
    bit_spans: &mut [BitSpan],
) {
    let rank: Vec<usize> = frame
        .fields
        .iter()
        .map(|(k, _)| {
            t.fields
                .iter()
                .position(|f| f.id == *k)
                .unwrap_or(usize::MAX)
        })
        .collect();
    let mut order: Vec<usize> = (0..rank.len()).collect();
    order.sort_by_key(|&j| rank[j]);
    if order.iter().enumerate().all(|(a, &b)| a == b) {
        return;
    }
    let mut new_of = vec![0; order.len()];
    for (new, &old) in order.iter().enumerate() {
        new_of[old] = new;
    }
    let mut fields: Vec<Option<(&'static str, DynValue)>> = std::mem::take(&mut frame.fields)
        .into_iter()
        .map(Some)
        .collect();
    let mut spans = std::mem::take(&mut frame.spans);
    let mut elems = std::mem::take(elem_spans);
    for &old in &order {
        if let Some(x) = fields[old].take() {
            frame.fields.push(x);
        }
        frame.spans.push(spans.get_mut(old).and_then(Option::take));
        elem_spans.push(elems.get_mut(old).map(std::mem::take).unwrap_or_default());
    }
    for b in bit_spans.iter_mut() {
        b.member = new_of[b.member];
    }
    bit_spans.sort_by_key(|b| (b.member, b.element));
}

fn term_of(t: Option<&TermSpec>) -> Term {
    let t = t.copied().unwrap_or(TermSpec::zero_terminated(1));
    Term {
        terminator: t.terminator,
        include: t.include,
        consume: t.consume,
        eos_error: t.eos_error,
        pad_right: t.pad_right,
        width: t.width,
    }
}

/// A number whose byte order a `meta.endian` switch decides: [`super::unsupported`] refuses
/// such schemas before reading, so this is only reached if that check is bypassed.
#[cold]
fn computed_endian(at: u64) -> DecodeError {
    DecodeError::new(
        at,
        DecodeErrorKind::Semantic(
            "not supported by the interpreter: a byte order decided by a switch".to_owned(),
        ),
    )
}

fn read_int(r: &mut ByteReader<'_>, bytes: u8, signed: bool, endian: Endian) -> D<i128> {
    use Endian::{Be, Le};
    Ok(match (bytes, signed, endian) {
        (1, false, _) => i128::from(r.read_u8()?),
        (_, _, Endian::Computed) => return Err(computed_endian(r.offset())),
        (1, true, _) => i128::from(r.read_i8()?),
        (2, false, Le) => i128::from(r.read_u16le()?),
        (2, false, Be) => i128::from(r.read_u16be()?),
        (2, true, Le) => i128::from(r.read_i16le()?),
        (2, true, Be) => i128::from(r.read_i16be()?),
        (4, false, Le) => i128::from(r.read_u32le()?),
        (4, false, Be) => i128::from(r.read_u32be()?),
        (4, true, Le) => i128::from(r.read_i32le()?),
        (4, true, Be) => i128::from(r.read_i32be()?),
        (_, false, Le) => i128::from(r.read_u64le()?),
        (_, false, Be) => i128::from(r.read_u64be()?),
        (_, true, Le) => i128::from(r.read_i64le()?),
        (_, true, Be) => i128::from(r.read_i64be()?),
    })
}

/// A value as shown in a `NotValid` error.
fn show(v: &DynValue) -> String {
    match v {
        DynValue::Int(i) => i.to_string(),
        DynValue::Float(x) => format!("{x:?}"),
        DynValue::Bool(b) => b.to_string(),
        DynValue::Str(s) => format!("{s:?}"),
        DynValue::Bytes(b) => format!("{b:?}"),
        DynValue::Enum(e) => match e.name {
            Some(n) => format!("{}::{n}", e.enum_name),
            None => e.value.to_string(),
        },
        DynValue::Struct(s) => format!("a `{}`", s.type_name),
        other => other.kind().to_owned(),
    }
}

/// An `f4` as the interpreter's `f64`: exactly, and a NaN with its sign and payload (the
/// payload moved to the top of the `f64`'s, its quiet bit kept as it is), so that the
/// writer narrows it back to the same bits.
pub(crate) fn widen(x: f32) -> f64 {
    if !x.is_nan() {
        return f64::from(x);
    }
    let b = x.to_bits();
    let sign = u64::from(b >> 31) << 63;
    f64::from_bits(sign | 0x7ff0_0000_0000_0000 | (u64::from(b & 0x007f_ffff) << 29))
}

/// Reads the root type of `schema` at `r`'s position, as a field of that type is read: an
/// opaque type given as another schema ([`super::SchemaOpaque`]), with the processors and
/// opaque types of `ext`. Errors: as [`decode`].
pub(crate) fn read_root_in(
    schema: &Checked,
    r: &mut ByteReader<'_>,
    ext: &Extensions,
) -> D<DynStruct> {
    if let Some(why) = unsupported_with(&schema.schema, ext) {
        let m = format!("not supported by the interpreter: {why}");
        return Err(semantic(r.offset(), m));
    }
    let Some(root) = schema.types.first() else {
        return Err(semantic(r.offset(), "the schema has no types".into()));
    };
    let it = Interp::new(&schema.schema, &schema.typed, ext);
    let params = root.params.iter().map(|p| (intern(&p.id), None)).collect();
    it.read_type(r, root, params)
}

#[cfg(test)]
mod tests {
    use super::{decode, decode_partial};
    use crate::interp::DynValue;

    const KSY: &str = "meta:\n  id: demo\n  endian: le\nseq:\n  - id: count\n    type: u1\n  - id: items\n    type: item\n    repeat: expr\n    repeat-expr: count\n  - id: tail\n    type: u2\ntypes:\n  item:\n    seq:\n      - id: code\n        type: u2\n      - id: name\n        type: strz\n        encoding: ASCII\n      - id: level\n        type: u1\n        valid:\n          max: 9\n";

    fn members(s: &crate::interp::DynStruct) -> Vec<&str> {
        s.members.iter().map(|(k, _)| *k).collect()
    }

    /// A file cut inside a list element: the partial tree holds the fields and elements read
    /// before the cut, then the failing element with its fields read so far; the error is
    /// the one `decode` gives.
    #[test]
    fn partial_tree_stops_at_the_failing_field() {
        let schema = crate::load_checked(KSY, "demo.ksy", std::path::Path::new("demo.ksy"), &[])
            .expect("schema");
        let bytes = *b"\x02\x01\x00a\x00\x05\x02\x00bc\x00";
        let want = decode(&schema, &bytes).expect_err("cut");
        let (tree, err) = decode_partial(&schema, &bytes);
        let err = err.expect("an error");
        assert_eq!(err.to_string(), want.to_string());
        assert_eq!(err.path.to_string(), "items[1].level");
        let root = tree.expect("a partial tree");
        assert_eq!(members(&root), ["count", "items"]);
        assert_eq!(root.spans[1], Some((1, 11)));
        let Some(DynValue::List(items)) = root.get("items") else {
            panic!("items is a list: {:?}", root.get("items"))
        };
        assert_eq!(items.len(), 2);
        assert_eq!(root.elem_spans[1], [(1, 6), (6, 11)]);
        let DynValue::Struct(second) = &items[1] else {
            panic!("element 1 is a struct")
        };
        assert_eq!(members(second), ["code", "name", "level"]);
        assert_eq!(second.get("code"), Some(&DynValue::Int(2)));
        assert_eq!(second.get("level"), Some(&DynValue::Null));
        assert_eq!(second.spans[2], Some((11, 11)));
    }

    /// A value its `valid` rule refuses is kept in the partial tree; a whole file gives the
    /// tree `decode` gives and no error.
    #[test]
    fn partial_tree_keeps_a_refused_value_and_whole_files_match() {
        let schema = crate::load_checked(KSY, "demo.ksy", std::path::Path::new("demo.ksy"), &[])
            .expect("schema");
        let (tree, err) = decode_partial(&schema, b"\x01\x07\x00\x00\x0c\x00\x00");
        assert_eq!(err.expect("refused").path.to_string(), "items[0].level");
        let root = tree.expect("tree");
        let Some(DynValue::List(items)) = root.get("items") else {
            panic!("items")
        };
        let DynValue::Struct(first) = &items[0] else {
            panic!("element 0")
        };
        assert_eq!(first.get("level"), Some(&DynValue::Int(12)));
        let whole = *b"\x01\x07\x00z\x00\x09\x03\x00";
        let (tree, err) = decode_partial(&schema, &whole);
        assert!(err.is_none());
        assert_eq!(tree, Some(decode(&schema, &whole).expect("whole")));
    }

    const LAZY: &str = "meta:\n  id: lz\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: body\n    size: n\ninstances:\n  far:\n    pos: 100\n    type: u1\n  near:\n    pos: 0\n    type: u1\n  used:\n    pos: 1\n    type: u1\n  twice:\n    value: used * 2\n";

    /// A positional instance that no expression names and that fails to read is that
    /// member's error (the file still reads, as through the generated `Lazy` member); the
    /// others read; the members keep the schema's order.
    #[test]
    fn an_unnamed_positional_instance_fails_on_its_own() {
        use statepack_runtime::reflect::{Reflect, Value};
        let schema = crate::load_checked(LAZY, "lz.ksy", std::path::Path::new("lz.ksy"), &[])
            .expect("schema");
        let root = decode(&schema, &[2, 7, 8]).expect("reads");
        assert_eq!(
            members(&root),
            ["n", "body", "far", "near", "used", "twice"]
        );
        assert_eq!(root.get("near"), Some(&DynValue::Int(2)));
        assert_eq!(root.get("twice"), Some(&DynValue::Int(14)));
        assert_eq!(root.spans[3], Some((0, 1)));
        let Some(Value::Error(e)) = root.member("far") else {
            panic!("far: {:?}", root.member("far"))
        };
        assert_eq!(e.path.to_string(), "far");
        // The viewer's read keeps the error too, and gives no error for the file.
        let (tree, err) = decode_partial(&schema, &[2, 7, 8]);
        assert!(err.is_none(), "{err:?}");
        assert!(tree.expect("tree").error_of("far").is_some());
    }
}
