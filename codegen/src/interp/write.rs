//! The interpreter's writer: a value given as a JSON-like tree ([`Given`]) written with a
//! schema, every `seq` field in schema order.
//!
//! What is derived: `contents` (may be left out; when given it must be the schema's bytes),
//! the terminator of a terminated field and the padding of a sized one (`pad-right`, or the
//! terminator, or zero bytes up to the size), the padding bits before a byte-aligned field
//! after bit fields (zero), and a processed field's size left out of the JSON when the
//! generated writer derives it (the length of the stored bytes, written in its place once
//! they are produced). What must be given: every other field whose `if` holds (counts and
//! lengths included: they are fields like any other), as `decode --schema` prints them.
//! A field whose `if` is false must be left out or `null`. Positional instances are written
//! after the `seq`, queued at their positions and laid out with the stream they read from
//! (the runtime's lay-out of the generated writers); the offset of one the generated writer
//! places itself ([`crate::derive::placed_instances`]) may be left out, and is then chosen
//! and written. The caller re-reads the result to check it ([`super::decode`]).

use super::eval::{enum_value, eval, eval_bool, eval_int, Frame, Scope, Trees};
use super::{intern, DynStruct, DynValue};
use crate::derive::Derived;
use crate::ir::*;
use crate::typed::{Checked, Side};
use statepack_runtime::io::{ByteWriter, Processor};
use std::sync::Arc;

/// A value to write, as JSON gives it: objects keep their key order.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer.
    Int(i128),
    /// A number with a fraction or exponent.
    Float(f64),
    /// A string: text, a byte array in hex, an enum value's name, `"NaN"`, `"nan:0x<bits>"`,
    /// `"inf"`, `"-inf"` ([`nonfinite_text`]).
    Str(String),
    /// An array.
    List(Vec<Given>),
    /// An object.
    Map(Vec<(String, Given)>),
}

type W<T> = Result<T, String>;

/// Writes `given` (an object of the root type's `seq` fields) with `schema`; returns the
/// bytes and the value written (as [`DynValue`]s, for the caller's check).
///
/// Errors: a message naming the field path: a missing or unknown key, a value of the wrong
/// kind or out of its type's range, a list whose length or a value whose size does not fit,
/// a construct `encode` does not cover.
pub fn encode(schema: &Checked, given: &Given) -> W<(Vec<u8>, DynStruct)> {
    encode_with(schema, given, super::Extensions::none())
}

/// [`encode`] with the custom processors and opaque types of `ext`: a `process: name(args)`
/// field's value goes through the processor's `encode` (built from the arguments evaluated
/// as on read), a value of an opaque type through the registered type's writer. Errors: as
/// [`encode`]; a processor or opaque type `ext` does not hold is refused by name, a
/// processor's own error is given with the field's path.
pub fn encode_with(
    schema: &Checked,
    given: &Given,
    ext: &super::Extensions,
) -> W<(Vec<u8>, DynStruct)> {
    let mut w = ByteWriter::new();
    let v = write_root(schema, &mut w, given, "", ext)?;
    w.align_to_byte();
    // The positional instances queued by the root and every type written in its stream.
    w.lay_out_positional(&[]).map_err(|e| e.to_string())?;
    Ok((w.into_bytes(), v))
}

/// As [`encode`], only building the value (no bytes).
pub fn from_given(schema: &Checked, given: &Given) -> W<DynStruct> {
    encode(schema, given).map(|(_, v)| v)
}

/// Writes `given` as the root type of `schema` at `w`'s position (the whole file for
/// [`encode_with`], a value of an opaque type given as a schema for
/// [`super::SchemaOpaque`]); `path` names the value in messages. The caller lays out the
/// positional instances queued in `w`.
pub(crate) fn write_root(
    schema: &Checked,
    w: &mut ByteWriter,
    given: &Given,
    path: &str,
    ext: &super::Extensions,
) -> W<DynStruct> {
    if let Some(why) = super::unsupported_with(schema, ext) {
        return Err(format!("not supported by the interpreter: {why}"));
    }
    let root = schema.types.first().ok_or("the schema has no types")?;
    if root.params.iter().any(|p| p.context.is_none()) {
        return Err(format!("the root type `{}` takes params", root.name));
    }
    let params = root.params.iter().map(|p| (intern(&p.id), None)).collect();
    let trees = Trees::new(&schema.schema, &schema.typed).with_ext(ext);
    let depth = path.matches('.').count();
    write_type(&trees, w, root, given, params, path, depth, None)
}

/// The opaque type `name` names: one the schema does not define, registered in the
/// [`super::Extensions`] the writer was given.
fn opaque_of<'a>(s: &Trees<'a>, name: &TypeRef) -> Option<&'a dyn super::OpaqueCodec> {
    match name {
        TypeRef::Named(n) if s.opaque.contains(n) => s.ext.opaque_type(n),
        _ => None,
    }
}

/// Writes a value of opaque type `name` through the registered type's writer: in the stream,
/// or (a terminated field, one of size `n`) on its own, then terminated or padded.
#[allow(clippy::too_many_arguments)]
fn write_opaque(
    s: &Trees<'_>,
    w: &mut ByteWriter,
    f: &Field,
    g: &Given,
    fp: &str,
    name: &TypeRef,
    n: Option<usize>,
    room: Option<usize>,
) -> W<DynValue> {
    let c = opaque_of(s, name).ok_or_else(|| format!("{fp}: no type `{}`", s.type_name(name)))?;
    if f.term.is_none() && n.is_none() {
        return Ok(DynValue::Struct(Arc::new(c.write(w, g, fp, s.ext)?)));
    }
    let mut inner = ByteWriter::new();
    let v = c.write(&mut inner, g, fp, s.ext)?;
    let n = if f.term.is_some() { None } else { n };
    let b = stream_bytes(s, inner, w, n, fp)?;
    put_sized(w, f, &b, n, room, fp)?;
    Ok(DynValue::Struct(Arc::new(v)))
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

#[allow(clippy::too_many_arguments)]
fn write_type(
    s: &Trees<'_>,
    w: &mut ByteWriter,
    t: &TypeDef,
    given: &Given,
    params: Vec<(&'static str, Option<DynValue>)>,
    path: &str,
    depth: usize,
    room: Option<usize>,
) -> W<DynStruct> {
    let at = if path.is_empty() { "<root>" } else { path };
    if depth > usize::from(statepack_runtime::io::MAX_RECURSION) {
        return Err(format!("{at}: nested too deeply"));
    }
    let Given::Map(entries) = given else {
        return Err(format!(
            "{at}: expected an object for type {}, found {}",
            t.schema_name,
            given.describe()
        ));
    };
    for (k, _) in entries {
        // A value instance may be given (`decode --schema` prints them): it is computed from
        // the fields, not written, and the caller checks it against what reads back.
        if !t.fields.iter().any(|f| f.id == *k) && !t.instances.iter().any(|i| i.id == *k) {
            return Err(format!(
                "{}: type {} has no field `{k}`",
                join(path, k),
                t.schema_name
            ));
        }
    }
    let mut frame = Frame::new(s, Side::Write, t, params);
    // `meta.endian` as a switch: decided from the same values the reader decides it from
    // (params and `_parent`/`_root` paths, given before this type is written).
    let decided = t
        .endian_switch
        .as_ref()
        .map(|sw| super::eval::decide_endian(&Scope::plain(s, &frame, None), sw))
        .transpose()
        .map_err(|m| format!("{at}: {m}"))?;
    frame.settle_endian(decided);
    let start = w.len();
    let mark = w.placed_mark();
    // Where each `seq` field was written, for the offset field of an `-sp-align` instance.
    let mut field_at: Vec<(&str, usize)> = Vec::new();
    let mut unaligned = false;
    let derived = crate::derive::counts_and_lengths(t);
    let placed = if t.fields.iter().any(|f| f.at.is_some()) {
        crate::derive::placed_instances(s, t)
    } else {
        std::collections::HashMap::new()
    };
    let mut pending: Vec<Pending> = Vec::new();
    // Positional instances whose place the writer chooses (after everything written so
    // far, or at the end of the stream), written once the `seq` is; the others are
    // written where the reader reads them, so that later fields can use them.
    let mut later: Vec<(&Field, Given)> = Vec::new();
    for f in &t.fields {
        let fp = join(path, &f.id);
        if let Some(at) = &f.at {
            let g = match entries.iter().find(|(k, _)| *k == f.id).map(|(_, v)| v) {
                // Left out, absent, or an instance `decode --schema` could not read (shown
                // as its error): nothing to write.
                None | Some(Given::Null) => None,
                Some(Given::Map(m)) if m.len() == 1 && m[0].0 == "__error" => None,
                Some(g) => Some(g),
            };
            let Some(g) = g else {
                frame.fields.push((intern(&f.id), DynValue::Null));
                continue;
            };
            if let Some(c) = f.cond.as_ref().filter(|c| !c.src.contains("_io")) {
                let sc = Scope::plain(s, &frame, None);
                if !eval_bool(c, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", c.src))? {
                    return Err(format!("{fp}: given, but its `if` is false"));
                }
            }
            if let Some(p) = placed.get(&f.id).filter(|p| p.align.is_some()) {
                let held = pending.iter().position(|h| h.target == f.id);
                let held_at = held.map(|i| pending.swap_remove(i).at);
                let holder_at = field_at
                    .iter()
                    .find(|(k, _)| *k == p.holder)
                    .map(|(_, a)| *a);
                let Some(slot_at) = held_at.or(holder_at) else {
                    return Err(format!(
                        "{fp}: the field `{}` holding its position is not written before it",
                        p.holder
                    ));
                };
                let mut tmp = ByteWriter::new();
                let v = write_field(s, &mut tmp, &frame, f, g, &fp, depth, None)?;
                aligned_place(w, &frame, p, tmp, slot_at, intern(&f.key_path), &fp)?;
                frame.fields.push((intern(&f.id), v));
                continue;
            }
            if pending.iter().any(|p| p.target == f.id) || from_end(&at.pos).is_some() {
                later.push((f, g.clone()));
            } else {
                let what = (f, g, fp.as_str(), room);
                let v = write_positional(s, w, &mut frame, what, None, None, depth)?;
                frame.fields.push((intern(&f.id), v));
            }
            continue;
        }
        let bit_field = crate::bits::is_bit_field(f);
        if unaligned && !bit_field {
            w.align_to_byte();
        }
        unaligned = bit_field;
        field_at.push((f.id.as_str(), w.len()));
        let g = entries.iter().find(|(k, _)| *k == f.id).map(|(_, v)| v);
        let present = match &f.cond {
            // `_io.eof` and `_io.pos` are not known while writing: presence decides, as in
            // the generated writer.
            Some(c) if c.src.contains("_io") => !matches!(g, None | Some(Given::Null)),
            Some(c) => {
                let sc = Scope::plain(s, &frame, None);
                eval_bool(c, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", c.src))?
            }
            None => true,
        };
        if !present {
            if !matches!(g, None | Some(Given::Null)) {
                return Err(format!("{fp}: given, but its `if` is false"));
            }
            frame.fields.push((intern(&f.id), DynValue::Null));
            continue;
        }
        if let (None, Some(Derived::Stored(target, adj))) = (g, derived.get(&f.id)) {
            pending.push(hold_length(w, &frame, f, (target, *adj), &fp)?);
            frame.fields.push((intern(&f.id), DynValue::Int(0)));
            continue;
        }
        // The offset of a positional instance the writer places, left out of the JSON:
        // written once the instance's place is chosen.
        let places = placed
            .iter()
            .find(|(_, p)| p.holder == f.id && p.path == f.id);
        if let (None, Some((inst, _))) = (g, places) {
            pending.push(hold_length(w, &frame, f, (inst, 0), &fp)?);
            frame.fields.push((intern(&f.id), DynValue::Int(0)));
            continue;
        }
        let g = match (g, &f.kind) {
            (Some(g), _) => g.clone(),
            (None, FieldKind::Contents(c)) => Given::Str(hex(c)),
            (None, _) => return Err(format!("{fp}: missing")),
        };
        let left = room.map(|n| n.saturating_sub(w.len() - start));
        let v = match pending.iter().position(|p| p.target == f.id) {
            Some(i) => {
                let p = pending.swap_remove(i);
                // Written without its size, which the stored bytes then give.
                let at = w.len();
                let v = write_field(s, w, &frame, &without_size(f), &g, &fp, depth, None)?;
                let n = (w.len() - at) as i128 + p.adj;
                let len = p.len;
                p.settle(w, n)?;
                if let Some(slot) = frame.fields.iter_mut().find(|(k, _)| *k == len) {
                    slot.1 = DynValue::Int(n);
                }
                v
            }
            None => write_field(s, w, &frame, f, &g, &fp, depth, left)?,
        };
        frame.fields.push((intern(&f.id), v));
    }
    let size = (w.len() - start) as u64;
    // Instances placed from the end of the stream (`pos: _io.size - 26`) go last, after
    // everything else is queued.
    later.sort_by_key(|(f, _)| f.at.as_ref().is_some_and(|a| from_end(&a.pos).is_some()));
    for (f, g) in later {
        let fp = join(path, &f.id);
        let held = pending.iter().position(|p| p.target == f.id);
        let held = held.map(|i| pending.swap_remove(i));
        let what = (f, &g, fp.as_str(), room);
        let v = write_positional(s, w, &mut frame, what, placed.get(&f.id), held, depth)?;
        frame.fields.push((intern(&f.id), v));
    }
    // `-sp-end-zeros`: the instances placed in this type's stream are laid out, then the
    // zero bytes that end it.
    if let Some(n) = t.end_zeros {
        w.align_to_byte();
        w.end_with_zeros(mark, n as usize)
            .map_err(|e| format!("{}: {e}", if path.is_empty() { "<root>" } else { path }))?;
    }
    if !later_is_sorted(t, &frame) {
        let rank = |k: &str| t.fields.iter().position(|f| f.id == k);
        frame.fields.sort_by_key(|(k, _)| rank(k));
    }
    // Value instances, as the reader gives them (an expression of the enclosing type may
    // read them: `header.has_table`); one that cannot be computed is left out.
    for i in 0..t.instances.len() {
        if let Ok(v) = super::eval::instance_value(s, &frame, i, None) {
            frame.fields.push((intern(&t.instances[i].id), v));
        }
    }
    let Frame { fields, .. } = frame;
    let names: Vec<&'static str> = fields.iter().map(|(k, _)| *k).collect();
    Ok(DynStruct {
        type_name: intern(&t.schema_name),
        spans: vec![None; fields.len()],
        elem_spans: vec![Vec::new(); fields.len()],
        bit_spans: Vec::new(),
        errors: Vec::new(),
        stream: None,
        members: fields,
        hidden: Vec::new(),
        size,
        extent: 0,
        io: None,
        names: super::intern_names(&names),
    })
}

/// A length field left out of the JSON whose value is the length of a later processed
/// field's stored bytes: zero bytes are written in its place, patched once they are known.
struct Pending {
    len: &'static str,
    target: String,
    /// Added to the stored length (`4` for `size: len - 4`).
    adj: i128,
    at: usize,
    bytes: u8,
    signed: bool,
    endian: Endian,
    fp: String,
}

/// Holds the place of length field `f` (of processed field `target`, its value the stored
/// length plus `adj`), as [`Pending`].
fn hold_length(
    w: &mut ByteWriter,
    frame: &Frame<'_>,
    f: &Field,
    (target, adj): (&str, i128),
    fp: &str,
) -> W<Pending> {
    let FieldKind::Int {
        bytes,
        signed,
        endian,
        ..
    } = &f.kind
    else {
        return Err(format!("{fp}: a derived length that is not an integer"));
    };
    let endian = frame.order(*endian).map_err(|m| format!("{fp}: {m}"))?;
    w.align_to_byte();
    let at = w.len();
    w.write_bytes(&vec![0u8; usize::from(*bytes)]);
    Ok(Pending {
        len: intern(&f.id),
        target: target.to_owned(),
        adj,
        at,
        bytes: *bytes,
        signed: *signed,
        endian,
        fp: fp.to_owned(),
    })
}

impl Pending {
    /// Writes `n` (the stored length plus `adj`) in the place held. Errors: `n` does not fit the
    /// length field's type, named by its path.
    fn settle(self, w: &mut ByteWriter, n: i128) -> W<()> {
        let mut b = ByteWriter::new();
        put_int(&mut b, n, self.bytes, self.signed, self.endian, &self.fp)?;
        w.patch_bytes(self.at, b.as_bytes())
            .map_err(|e| format!("{}: {e}", self.fp))
    }
}

/// `f` with its size taken away (`size-eos` in an unbounded stream): a processed field whose
/// size is the length of what it writes.
fn without_size(f: &Field) -> Field {
    let mut g = f.clone();
    match &mut g.kind {
        FieldKind::Bytes(size) => *size = Size::Eos,
        FieldKind::User { size, .. } => *size = Some(Size::Eos),
        _ => {}
    }
    g
}

/// The bytes of a user type written in a substream of its own (`inner`), its positional
/// instances laid out in it: in a substream of `size` bytes, over the zero bytes that pad
/// the type's fields to that size (an instance may lie in the bytes the type does not read);
/// instances of the whole output (`io: _root._io`) move to `w`, laid out by the root.
fn stream_bytes(
    s: &Trees<'_>,
    mut inner: ByteWriter,
    w: &mut ByteWriter,
    size: Option<usize>,
    fp: &str,
) -> W<Vec<u8>> {
    inner.align_to_byte();
    let whole = s.types.iter().any(|t| {
        t.fields
            .iter()
            .any(|f| f.at.as_ref().is_some_and(|a| a.whole))
    });
    match size {
        Some(n) if !whole && inner.len() < n => {
            let pad = vec![0u8; n - inner.len()];
            inner
                .lay_out_positional(&pad)
                .map_err(|e| format!("{fp}: {e}"))?;
            Ok(inner.into_bytes())
        }
        _ => inner.into_stream_bytes(w).map_err(|e| format!("{fp}: {e}")),
    }
}

/// `k` of a position `_io.size - k` (`k` a literal): `k` bytes before the end of the stream.
fn from_end(e: &SrcExpr) -> Option<i128> {
    crate::instances::from_end(&e.expr)
}

/// `_io` of the stream `w` writes, `ahead` bytes on: its position (what a reader's `_io.pos`
/// is there); its size and end are not known yet.
fn io_here(w: &ByteWriter, ahead: usize) -> Option<super::eval::IoState> {
    Some(super::eval::IoState {
        pos: w.io_pos() + ahead as i128,
        size: super::eval::IoState::UNKNOWN,
        eof: false,
    })
}

/// Whether expression `e` reads `_io.size` or `_io.eof`, which a writer does not know before
/// the bytes are placed.
fn uses_io_size(e: &SrcExpr) -> bool {
    let mut found = false;
    crate::instances::visit(&e.expr, &mut |x| {
        if let crate::expr::Expr::Attr(io, n) = x {
            let of_io = matches!(&**io, crate::expr::Expr::Name(i) if i == "_io");
            if of_io && (n == "size" || n == "eof") {
                found = true;
            }
        }
    });
    found
}

/// Whether a param of kind `k` holds streams (`io`, `io[]`).
fn is_io(k: &ParamKind) -> bool {
    match k {
        ParamKind::Io => true,
        ParamKind::List(inner) => is_io(inner),
        _ => false,
    }
}

/// Whether `e` uses a param of `t` that holds streams, which is not known while writing.
fn uses_io_param(e: &SrcExpr, t: &TypeDef) -> bool {
    let mut names = std::collections::HashSet::new();
    crate::instances::names(&e.expr, &mut names);
    t.params
        .iter()
        .any(|p| is_io(&p.kind) && names.contains(&p.id))
}

/// Whether the members written so far are in the order of `t`'s fields.
fn later_is_sorted(t: &TypeDef, frame: &Frame<'_>) -> bool {
    let mut at = 0;
    for (k, _) in &frame.fields {
        match t.fields[at..].iter().position(|f| f.id == *k) {
            Some(j) => at += j + 1,
            None => return false,
        }
    }
    true
}

/// Writes positional instance `f` (value `g`, path `fp`) of the type written in `w`, queued
/// to be laid out with the stream it reads from (the root's output, or the substream of the
/// sized, processed or terminated type holding it): at its `pos`, evaluated over the fields
/// written; or, when the writer places it (`placed`) and its offset field was left out of
/// the JSON (`held`), at the first free place after everything written so far, that offset
/// then written into the field (encoded once in a probe to learn its bytes and where the
/// instances it places go, then again at its place). A position `_io.size - k` (a trailer,
/// such as a footer at the end of the file) of the root is queued as the root's trailer
/// (the runtime's `place_trailer`: after everything else, ending the output, the instances
/// it places after all others); elsewhere it is `size - k` in a substream of known `size`
/// (`room`), else the end of everything written so far, the instance's bytes padded with
/// zeros to `k`, so that the stream ends `k` bytes after it. Errors: a position that is negative or cannot be
/// evaluated, a trailer longer than `k`, an instance read from another value's substream
/// (`io: x._io`), the value's own errors.
fn write_positional(
    s: &Trees<'_>,
    w: &mut ByteWriter,
    frame: &mut Frame<'_>,
    (f, g, fp, room): (&Field, &Given, &str, Option<usize>),
    placed: Option<&crate::derive::Placed>,
    held: Option<Pending>,
    depth: usize,
) -> W<DynValue> {
    let Some(at) = &f.at else {
        return Err(format!("{fp}: not a positional instance"));
    };
    if at.io_of.is_some() || at.io_later.is_some() {
        // Its bytes belong to the value whose substream it is read from, which writes them
        // (for `io: _root.x._io` with `x` read later, `x`, which the root writes):
        // the instance is encoded on its own only to check it (`_io` in its expressions is
        // the type's stream here), and what was given for it is compared with what the
        // written bytes read back to.
        frame.own_io.set(io_here(w, 0));
        let mut tmp = ByteWriter::new();
        let v = write_field(s, &mut tmp, frame, f, g, fp, depth, None);
        frame.own_io.set(None);
        return v;
    }
    let what = intern(&f.key_path);
    let bad = |e: statepack_runtime::io::EncodeError| format!("{fp}: {e}");
    if let (Some(p), Some(held)) = (placed, held) {
        // Encoded once to learn its bytes and where the instances it places go, placed
        // after everything written or queued so far (and after those instances, so that a
        // directory follows the entries it points at), then encoded again at its place, as
        // the generated writer does (`probe_writer`, `derive_placed`, `placed_writer`).
        let mut probe = w.probe_writer(0, at.whole);
        write_field(s, &mut probe, frame, f, g, fp, depth, None)?;
        let (pos, kept) = w
            .derive_placed(None, &probe, p.step, p.offset, 0, at.whole)
            .map_err(bad)?;
        let n = (pos - p.offset) / p.step;
        let len = held.len;
        held.settle(w, n)?;
        if let Some(slot) = frame.fields.iter_mut().find(|(k, _)| *k == len) {
            slot.1 = DynValue::Int(n);
        }
        let mut iw = w
            .placed_writer(pos, kept, probe.len(), 0, at.whole)
            .map_err(bad)?;
        let v = write_field(s, &mut iw, frame, f, g, fp, depth, None)?;
        w.place_derived(iw, what);
        return Ok(v);
    }
    if let (Some(k), None, 0) = (from_end(&at.pos), room, depth) {
        // A trailer of the root (a ZIP archive's end-of-central-directory record): written
        // after everything else, the instances it places itself after all the others, and
        // laid out to end the output, as the generated writer does.
        let mut iw = w.trailer_writer(0);
        let v = write_field(s, &mut iw, frame, f, g, fp, depth, None)?;
        w.place_trailer(iw, k, 0, what).map_err(bad)?;
        return Ok(v);
    }
    if let Some(k) = from_end(&at.pos) {
        let mut tmp = ByteWriter::new();
        let v = write_field(s, &mut tmp, frame, f, g, fp, depth, None)?;
        let mut bytes = tmp.into_stream_bytes(w).map_err(bad)?;
        let k = usize::try_from(k).unwrap_or(0);
        if bytes.len() > k {
            return Err(format!(
                "{fp}: {} byte(s) written, but `{}` leaves {k} at the end of the stream",
                bytes.len(),
                at.pos.src
            ));
        }
        bytes.resize(k, 0);
        let pos = match room {
            Some(n) if !at.whole => n as i128 - k as i128,
            _ => w.derive_position(None, &bytes, 1, 0, 0).map_err(bad)?,
        };
        let mut iw = w.instance_writer(pos, at.whole).map_err(bad)?;
        iw.write_bytes(&bytes);
        w.place_derived(iw, what);
        return Ok(v);
    }
    let pos = {
        let sc = Scope::plain(s, frame, io_here(w, 0));
        eval_int(&at.pos, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", at.pos.src))?
    };
    let mut iw = w.instance_writer(pos, at.whole).map_err(bad)?;
    let v = write_field(s, &mut iw, frame, f, g, fp, depth, None)?;
    // Bytes between the end of what is written and the instance, which no field reads,
    // are zero.
    w.place_derived(iw, what);
    Ok(v)
}

/// Queues the `-sp-align` instance `p` written into `tmp`, its position chosen when the
/// stream is laid out and written into the field at byte `slot_at` (as the generated
/// writer does, `ByteWriter::place_aligned`).
fn aligned_place(
    w: &mut ByteWriter,
    frame: &Frame<'_>,
    p: &crate::derive::Placed,
    tmp: ByteWriter,
    slot_at: usize,
    what: &'static str,
    fp: &str,
) -> W<()> {
    let FieldKind::Int {
        bytes,
        signed,
        endian,
        ..
    } = &p.member.kind
    else {
        return Err(format!("{fp}: its position field is not an integer"));
    };
    let endian = frame.order(*endian).map_err(|m| format!("{fp}: {m}"))?;
    let mut iw = w
        .instance_writer(0, false)
        .map_err(|e| format!("{fp}: {e}"))?;
    iw.write_bytes(&tmp.into_stream_bytes(w).map_err(|e| format!("{fp}: {e}"))?);
    let slot = statepack_runtime::io::AlignedSlot {
        at: slot_at + p.within,
        width: *bytes,
        signed: *signed,
        big: matches!(endian, Endian::Be),
        step: p.step,
        offset: p.offset,
        align: p.align.unwrap_or(1),
        min: p.bounds.0,
        max: p.bounds.1,
        member: intern(&p.path),
    };
    w.place_aligned(iw, slot, true, what);
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn write_field(
    s: &Trees<'_>,
    w: &mut ByteWriter,
    frame: &Frame<'_>,
    f: &Field,
    g: &Given,
    fp: &str,
    depth: usize,
    room: Option<usize>,
) -> W<DynValue> {
    if f.varint {
        let v = as_int(g, fp)?;
        let v = u64::try_from(v).map_err(|_| format!("{fp}: {v} does not fit a LEB128 varint"))?;
        let mut out = Vec::new();
        statepack_runtime::bits::push_varint(&mut out, v);
        for b in out {
            match f.kind {
                FieldKind::Bits { .. } => w
                    .write_bits_be(u64::from(b), 8)
                    .map_err(|e| format!("{fp}: {e}"))?,
                _ => w.write_bytes(&[b]),
            }
        }
        return Ok(DynValue::Int(i128::from(v)));
    }
    match &f.repeat {
        Repeat::None => write_elem(s, w, frame, f, g, fp, None, depth, room),
        _ => {
            let Given::List(items) = g else {
                return Err(format!("{fp}: expected an array, found {}", g.describe()));
            };
            // A count given in the JSON (an earlier field) must match the list: said here, by
            // name, rather than found when the bytes read back differently.
            if let Repeat::Expr(e) = &f.repeat {
                let sc = Scope::plain(s, frame, None);
                if let Ok(n) = eval_int(e, &sc) {
                    if n != items.len() as i128 {
                        return Err(format!(
                            "{fp}: {} element(s) given, but the count `{}` is {n}",
                            items.len(),
                            e.src
                        ));
                    }
                }
            }
            let mut out = Vec::with_capacity(items.len());
            let start = w.len();
            for (i, x) in items.iter().enumerate() {
                let left = room.map(|n| n.saturating_sub(w.len() - start));
                out.push(write_elem(
                    s,
                    w,
                    frame,
                    f,
                    x,
                    &format!("{fp}[{i}]"),
                    Some(i),
                    depth,
                    left,
                )?);
            }
            Ok(DynValue::List(out))
        }
    }
}

impl Given {
    /// The value as a message names it, in JSON's words: `null`, `true`, the number `5`, the
    /// string `"abc"`, an array of 3 element(s), an object (long strings shortened).
    pub fn describe(&self) -> String {
        match self {
            Given::Null => "null".to_owned(),
            Given::Bool(b) => b.to_string(),
            Given::Int(i) => format!("the number {i}"),
            Given::Float(f) => format!("the number {f}"),
            Given::Str(s) => {
                let short: String = s.chars().take(40).collect();
                let more = if short.len() < s.len() { "..." } else { "" };
                format!("the string {short:?}{more}")
            }
            Given::List(items) => format!("an array of {} element(s)", items.len()),
            Given::Map(_) => "an object".to_owned(),
        }
    }
}

fn as_int(g: &Given, fp: &str) -> W<i128> {
    match g {
        Given::Int(i) => Ok(*i),
        Given::Bool(b) => Ok(i128::from(*b)),
        other => Err(format!(
            "{fp}: expected an integer, found {}",
            other.describe()
        )),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(g: &Given, fp: &str) -> W<Vec<u8>> {
    match g {
        Given::Str(h) => {
            let h: String = h.chars().filter(|c| !c.is_whitespace()).collect();
            if !h.len().is_multiple_of(2) || !h.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(format!(
                    "{fp}: expected bytes as a string of hex digits (two a byte), found {}",
                    Given::Str(h).describe()
                ));
            }
            Ok((0..h.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap_or(0))
                .collect())
        }
        Given::List(items) => items
            .iter()
            .map(|x| match x {
                Given::Int(v @ 0..=255) => Ok(*v as u8),
                other => Err(format!(
                    "{fp}: expected a byte (an integer 0 to 255), found {}",
                    other.describe()
                )),
            })
            .collect(),
        other => Err(format!(
            "{fp}: expected bytes as a string of hex digits or an array of integers, found {}",
            other.describe()
        )),
    }
}

fn int_range(bytes: u8, signed: bool) -> (i128, i128) {
    let bits = u32::from(bytes) * 8;
    if signed {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// An enum field's value given by name or number: the stored integer and the value.
fn enum_given(s: &Schema, e: &str, g: &Given, fp: &str) -> W<(i128, DynValue)> {
    let def = s
        .enum_named(e)
        .ok_or_else(|| format!("{fp}: no enum `{e}`"))?;
    let raw = match g {
        Given::Str(n) => def
            .values
            .iter()
            .find(|v| v.name == *n)
            .map(|v| v.value)
            .ok_or_else(|| format!("{fp}: `{n}` is not a value of enum {}", def.schema_name))?,
        // An integer the enum does not list, as `decode --schema` prints it.
        Given::Map(m) if m.len() == 1 && m[0].0 == "Unlisted" => as_int(&m[0].1, fp)?,
        other => as_int(other, fp)?,
    };
    Ok((raw, enum_value(s, e, raw)?))
}

#[allow(clippy::too_many_arguments)]
fn write_elem(
    s: &Trees<'_>,
    w: &mut ByteWriter,
    frame: &Frame<'_>,
    f: &Field,
    g: &Given,
    fp: &str,
    index: Option<usize>,
    depth: usize,
    room: Option<usize>,
) -> W<DynValue> {
    let sc = Scope {
        schema: s,
        frame,
        elem: None,
        index: index.map(|i| i as i128),
        // `_io` of an instance written into another value's stream is the type's own.
        io: frame.own_io.get().or_else(|| io_here(w, 0)),
        side: Side::Write,
    };
    let ev_int = |e: &SrcExpr| eval_int(e, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", e.src));
    let size_of = |sz: Option<&Size>| -> W<Option<usize>> {
        match sz {
            // A size over `_io` (`_io.size - _io.pos - 8`) is not known while writing: the
            // value's own length is its size (the caller's re-read checks it).
            Some(Size::Expr(e)) if uses_io_size(e) || uses_io_param(e, frame.ty) => Ok(None),
            Some(Size::Expr(e)) => {
                let n = ev_int(e)?;
                usize::try_from(n)
                    .map(Some)
                    .map_err(|_| format!("{fp}: size {n} is negative"))
            }
            Some(Size::Eos) => Ok(room),
            _ => Ok(None),
        }
    };
    if f.process.is_some()
        && (f.term.is_some() || matches!(f.kind, FieldKind::Switch { size: Some(_), .. }))
    {
        return write_processed(s, w, frame, f, g, fp, index, depth, room);
    }
    match &f.kind {
        FieldKind::Int { .. } | FieldKind::Float { .. } | FieldKind::Bits { .. } => {
            write_number(s, w, frame, f, g, fp)
        }
        FieldKind::Contents(c) => {
            let b = unhex(g, fp)?;
            if b != *c {
                return Err(format!(
                    "{fp}: must be the contents {} (or left out)",
                    hex(c)
                ));
            }
            w.write_bytes(c);
            Ok(DynValue::Bytes(c.clone()))
        }
        FieldKind::Bytes(size)
        | FieldKind::Str {
            size: Some(size), ..
        }
        | FieldKind::User {
            size: Some(size), ..
        } if f.process.is_some() && matches!(size, Size::Expr(_) | Size::Eos) => {
            let mut inner = ByteWriter::new();
            let v = match &f.kind {
                FieldKind::User { ty: name, .. } if opaque_of(s, name).is_some() => {
                    write_opaque(s, &mut inner, f, g, fp, name, None, None)?
                }
                FieldKind::User { ty: name, .. } => {
                    let t = s
                        .type_of(name)
                        .ok_or_else(|| format!("{fp}: no type `{}`", s.type_name(name)))?;
                    let params = args(s, &sc, f, name, fp)?;
                    DynValue::Struct(Arc::new(write_type(
                        s,
                        &mut inner,
                        t,
                        g,
                        params,
                        fp,
                        depth + 1,
                        None,
                    )?))
                }
                _ => {
                    let b = unhex(g, fp)?;
                    inner.write_bytes(&b);
                    DynValue::Bytes(b)
                }
            };
            inner.align_to_byte();
            let data = inner
                .into_stream_bytes(w)
                .map_err(|e| format!("{fp}: {e}"))?;
            let n = size_of(Some(size))?;
            let stored = reprocessed(s, w, frame, f, &data, (index, n), fp)?;
            if let Some(n) = n {
                if stored.len() != n {
                    return Err(format!(
                        "{fp}: the processed value takes {} byte(s) but the size is {n}",
                        stored.len()
                    ));
                }
            }
            w.write_bytes(&stored);
            Ok(v)
        }
        FieldKind::Bytes(size) => {
            let b = unhex(g, fp)?;
            let n = size_of(Some(size))?;
            fills(f, Some(size), b.len(), n, fp)?;
            put_sized(w, f, &b, n, room, fp)?;
            Ok(DynValue::Bytes(b))
        }
        FieldKind::Str { size, encoding } => {
            let Given::Str(text) = g else {
                return Err(format!("{fp}: expected a string, found {}", g.describe()));
            };
            let b = statepack_runtime::io::encode_str(text, encoding)
                .map_err(|e| format!("{fp}: {e}"))?
                .into_owned();
            let mut f2 = f.clone();
            if size.is_none() && f.term.is_none() {
                f2.term = Some(TermSpec::zero_terminated(1));
            }
            let n = size_of(size.as_ref())?;
            fills(f, size.as_ref(), b.len(), n, fp)?;
            put_sized(w, &f2, &b, n, room, fp)?;
            Ok(DynValue::Str(text.clone()))
        }
        FieldKind::User { ty: name, size } if opaque_of(s, name).is_some() => {
            let n = size_of(size.as_ref())?;
            write_opaque(s, w, f, g, fp, name, n, room)
        }
        FieldKind::User { ty: name, size } => {
            let t = s
                .type_of(name)
                .ok_or_else(|| format!("{fp}: no type `{}`", s.type_name(name)))?;
            let params = args(s, &sc, f, name, fp)?;
            let n = size_of(size.as_ref())?;
            let io_sized = matches!(size, Some(Size::Expr(e)) if uses_io_size(e));
            if f.term.is_none() && n.is_none() && !io_sized {
                // In the enclosing stream: its positional instances are laid out with it.
                if !w.bit_len().is_multiple_of(8) {
                    return Err(format!(
                        "{fp}: a user type that starts inside a byte is not written by encode"
                    ));
                }
                let v = write_type(s, w, t, g, params, fp, depth + 1, None)?;
                return Ok(DynValue::Struct(Arc::new(v)));
            }
            let mut inner = ByteWriter::new();
            // A terminated field's type sees only the bytes before its terminator and padding.
            let inner_room = if f.term.is_some() { None } else { n };
            let v = write_type(s, &mut inner, t, g, params, fp, depth + 1, inner_room)?;
            let n = if f.term.is_some() { None } else { n };
            let b = stream_bytes(s, inner, w, n, fp)?;
            put_sized(w, f, &b, n, room, fp)?;
            Ok(DynValue::Struct(Arc::new(v)))
        }
        FieldKind::Switch {
            on,
            cases,
            default,
            size,
            encoding,
        } => {
            let v = eval(on, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", on.src))?;
            let mut chosen = None;
            for (k, tn) in cases {
                let kv = eval(k, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", k.src))?;
                if super::eval::equal(&v, &kv).map_err(|m| format!("{fp}: {m}"))? {
                    chosen = Some(tn.clone());
                    break;
                }
            }
            let Some(tn) = &chosen.or_else(|| default.clone()) else {
                let b = unhex(g, fp).unwrap_or_default();
                let n = size_of(size.as_ref())?;
                fills(f, size.as_ref(), b.len(), n, fp)?;
                put_sized(w, f, &b, n, room, fp)?;
                return Ok(if size.is_some() {
                    DynValue::Bytes(b)
                } else {
                    DynValue::Null
                });
            };
            if let Some((bytes, signed, float, endian)) = super::eval::number_type(s.type_name(tn))
            {
                // A case of a number type: the number, in the switch's size if it has one.
                let endian = frame
                    .order(endian.or(s.endian).unwrap_or(Endian::Le))
                    .map_err(|m| format!("{fp}: {m}"))?;
                let n = size_of(size.as_ref())?;
                let mut inner = ByteWriter::new();
                let v = if float {
                    put_float(&mut inner, g, bytes, endian, fp)?
                } else {
                    let i = as_int(g, fp)?;
                    put_int(&mut inner, i, bytes, signed, endian, fp)?;
                    DynValue::Int(i)
                };
                put_sized(w, f, &inner.into_bytes(), n, room, fp)?;
                return Ok(v);
            }
            if let Some(z) = crate::num_type::case_string(s.type_name(tn)) {
                // A `str` case fills the switch's size; a `strz` case ends with its
                // terminator (then zeros up to the size).
                let Given::Str(text) = g else {
                    return Err(format!("{fp}: expected a string, found {}", g.describe()));
                };
                let enc = encoding.unwrap_or("UTF-8");
                let b = statepack_runtime::io::encode_str(text, enc)
                    .map_err(|e| format!("{fp}: {e}"))?
                    .into_owned();
                let mut f2 = f.clone();
                f2.term = z.then_some(TermSpec::strz(enc));
                put_sized(w, &f2, &b, size_of(size.as_ref())?, room, fp)?;
                return Ok(DynValue::Str(text.clone()));
            }
            if opaque_of(s, tn).is_some() {
                let n = size_of(size.as_ref())?;
                return write_opaque(s, w, f, g, fp, tn, n, room);
            }
            let t = s
                .type_of(tn)
                .ok_or_else(|| format!("{fp}: no type `{}`", s.type_name(tn)))?;
            let params = args(s, &sc, f, tn, fp)?;
            let n = size_of(size.as_ref())?;
            let mut inner = ByteWriter::new();
            let v = write_type(s, &mut inner, t, g, params, fp, depth + 1, n)?;
            let b = stream_bytes(s, inner, w, n, fp)?;
            put_sized(w, f, &b, n, room, fp)?;
            Ok(DynValue::Struct(Arc::new(v)))
        }
    }
}

/// The stored bytes of processed field `f` for its value's bytes `data`, the processor's
/// arguments evaluated with `_io.pos` just after the stored bytes (as on read; `xor`, `rol`
/// and `ror` store as many bytes as they are given). `zlib` compresses at level 6, as the
/// generated writer does for a value it did not read, unless the size of the stored bytes
/// is given (`want`: a length field as `decode --schema` printed it): then at the first
/// level, in the order 9, 6, 1, 0, 2 to 5, 7, 8, whose stream has that size (level 6 when
/// none has). The generated writer keeps the stored bytes it read while the value is
/// unchanged; JSON does not carry them, and this search writes back the stream this zlib
/// made at level 9 (CBTK's chunks), or at a level whose stream no level before it in that
/// order matches in size, byte for byte. Errors: a processor written in Rust, which the
/// interpreter cannot run; an argument that does not evaluate.
fn reprocessed(
    s: &Trees<'_>,
    w: &ByteWriter,
    frame: &Frame<'_>,
    f: &Field,
    data: &[u8],
    (index, want): (Option<usize>, Option<usize>),
    fp: &str,
) -> W<Vec<u8>> {
    let key: Vec<u8>;
    let sc = Scope {
        io: io_here(w, data.len()),
        elem: None,
        index: index.map(|i| i as i128),
        ..Scope::plain(s, frame, None)
    };
    let ev_int = |e: &SrcExpr| eval_int(e, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", e.src));
    let p = match &f.process {
        Some(Process::Zlib) => Processor::Zlib,
        Some(Process::Xor(ProcArg::Bytes(b))) => Processor::Xor(b),
        Some(Process::Xor(ProcArg::Expr(e))) => {
            key = match eval(e, &sc).map_err(|m| format!("{fp}: {m}"))?.into_owned() {
                DynValue::Int(i) => vec![i as u8],
                DynValue::Bytes(b) => b,
                other => return Err(format!("{fp}: xor key is {}", other.kind())),
            };
            Processor::Xor(&key)
        }
        Some(Process::Rol(e)) => Processor::Rol(ev_int(e)?),
        Some(Process::Ror(e)) => Processor::Ror(ev_int(e)?),
        Some(Process::Custom { name, args }) => {
            let mut vals = Vec::with_capacity(args.len());
            for a in args {
                let v = eval(a, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", a.src))?;
                vals.push(v.into_owned());
            }
            let p = s
                .ext
                .make_processor(name, &vals)
                .map_err(|m| format!("{fp}: {m}"))?;
            return statepack_runtime::process::reprocess_custom(p.as_ref(), data, None)
                .map(|b| b.into_owned())
                .map_err(|e| format!("{fp}: {e}"));
        }
        _ => return Err(format!("{fp}: this `process` is not written by encode")),
    };
    if let (Processor::Zlib, Some(n)) = (p, want) {
        let found = [9, 6, 1, 0, 2, 3, 4, 5, 7, 8]
            .into_iter()
            .map(|level| statepack_runtime::zlib::deflate(data, level))
            .find(|z| z.len() == n);
        if let Some(z) = found {
            return Ok(z);
        }
    }
    Ok(statepack_runtime::io::reprocess(p, data, None).into_owned())
}

/// Writes one element of a processed field with a terminator (bytes or a user type) or of a
/// processed switch with a size: the value written on its own, without its terminator or
/// size, processed ([`reprocessed`]), and the stored bytes then terminated and padded, or
/// checked against the size.
#[allow(clippy::too_many_arguments)]
fn write_processed(
    s: &Trees<'_>,
    w: &mut ByteWriter,
    frame: &Frame<'_>,
    f: &Field,
    g: &Given,
    fp: &str,
    index: Option<usize>,
    depth: usize,
    room: Option<usize>,
) -> W<DynValue> {
    let mut bare = f.clone();
    bare.process = None;
    bare.term = None;
    let size = match &mut bare.kind {
        FieldKind::Bytes(sz) => Some(std::mem::replace(sz, Size::Eos)),
        FieldKind::User { size, .. } | FieldKind::Switch { size, .. } => size.take(),
        _ => return Err(format!("{fp}: this `process` is not written by encode")),
    };
    let mut inner = ByteWriter::new();
    let v = write_elem(s, &mut inner, frame, &bare, g, fp, index, depth, None)?;
    inner.align_to_byte();
    let data = inner
        .into_stream_bytes(w)
        .map_err(|e| format!("{fp}: {e}"))?;
    let sc = Scope {
        io: io_here(w, 0),
        elem: None,
        index: index.map(|i| i as i128),
        ..Scope::plain(s, frame, None)
    };
    let n = match &size {
        Some(Size::Expr(e)) if !uses_io_size(e) => {
            let n = eval_int(e, &sc).map_err(|m| format!("{fp}: in `{}`: {m}", e.src))?;
            Some(usize::try_from(n).map_err(|_| format!("{fp}: size {n} is negative"))?)
        }
        _ => None,
    };
    let want = if f.term.is_some() { None } else { n };
    let stored = reprocessed(s, w, frame, f, &data, (index, want), fp)?;
    if f.term.is_some() {
        let mut term_only = f.clone();
        term_only.process = None;
        put_sized(w, &term_only, &stored, n, room, fp)?;
    } else {
        if let Some(n) = n {
            if stored.len() != n {
                return Err(format!(
                    "{fp}: the processed value takes {} byte(s) but the size is {n}",
                    stored.len()
                ));
            }
        }
        w.write_bytes(&stored);
    }
    Ok(v)
}

/// Writes one element of an integer, float or bit field from `g`, as `write_elem`.
fn write_number(
    s: &Trees<'_>,
    w: &mut ByteWriter,
    frame: &Frame<'_>,
    f: &Field,
    g: &Given,
    fp: &str,
) -> W<DynValue> {
    match &f.kind {
        FieldKind::Int {
            bytes,
            signed,
            endian,
            enum_name,
        } => {
            let (raw, v) = match enum_name {
                Some(e) => enum_given(s, s.enum_name(e), g, fp)?,
                None => {
                    let i = as_int(g, fp)?;
                    (i, DynValue::Int(i))
                }
            };
            let endian = frame.order(*endian).map_err(|m| format!("{fp}: {m}"))?;
            put_int(w, raw, *bytes, *signed, endian, fp)?;
            Ok(v)
        }
        FieldKind::Float { bytes, endian } => {
            let endian = frame.order(*endian).map_err(|m| format!("{fp}: {m}"))?;
            put_float(w, g, *bytes, endian, fp)
        }
        FieldKind::Bits {
            width,
            offset_binary,
            le,
            enum_name,
        } => {
            let (raw, v) = match (enum_name, g) {
                (Some(e), g) => enum_given(s, s.enum_name(e), g, fp)?,
                (None, Given::Bool(b)) if *width == 1 => (i128::from(*b), DynValue::Bool(*b)),
                (None, g) => {
                    let i = as_int(g, fp)?;
                    (i, DynValue::Int(i))
                }
            };
            let wd = u32::from(*width);
            let code = if *offset_binary {
                raw + (1i128 << (wd - 1))
            } else {
                raw
            };
            if code < 0 || (wd < 64 && code >= (1i128 << wd)) || code > i128::from(u64::MAX) {
                return Err(format!("{fp}: {raw} does not fit in {wd} bit(s)"));
            }
            let r = if *le {
                w.write_bits_le(code as u64, wd)
            } else {
                w.write_bits_be(code as u64, wd)
            };
            r.map_err(|e| format!("{fp}: {e}"))?;
            Ok(v)
        }
        _ => unreachable!("a number field"),
    }
}

/// Writes integer `raw` in `bytes` bytes (two's complement when `signed`) in byte order
/// `endian` (not [`Endian::Computed`]: the caller resolves it). Errors: `raw` out of the
/// type's range, named by `fp`.
fn put_int(
    w: &mut ByteWriter,
    raw: i128,
    bytes: u8,
    signed: bool,
    endian: Endian,
    fp: &str,
) -> W<()> {
    let (lo, hi) = int_range(bytes, signed);
    if raw < lo || raw > hi {
        return Err(format!("{fp}: {raw} does not fit in {lo}..={hi}"));
    }
    let n = usize::from(bytes);
    let le = (raw as u128).to_le_bytes();
    let mut b = le[..n].to_vec();
    if endian == Endian::Be {
        b.reverse();
    }
    w.write_bytes(&b);
    Ok(())
}

/// Writes the number `g` as an `f4` or `f8` in byte order `endian` (resolved) and gives the
/// value as it reads back. Errors: `g` is not a number (or `"NaN"`, `"inf"`, `"-inf"`), or
/// a finite number an `f4` cannot hold.
fn put_float(w: &mut ByteWriter, g: &Given, bytes: u8, endian: Endian, fp: &str) -> W<DynValue> {
    let x = match g {
        Given::Float(x) => *x,
        Given::Int(i) => *i as f64,
        Given::Str(t) if t == "NaN" => f64::NAN,
        Given::Str(t) if t.starts_with("nan:0x") => t[6..]
            .parse::<HexBits>()
            .ok()
            .map(|b| f64::from_bits(b.0))
            .filter(|x| x.is_nan())
            .ok_or_else(|| {
                format!("{fp}: `{t}` is not the bits of a NaN (nan:0x and 16 hex digits)")
            })?,
        Given::Str(t) if t == "inf" => f64::INFINITY,
        Given::Str(t) if t == "-inf" => f64::NEG_INFINITY,
        other => {
            return Err(format!(
            "{fp}: expected a number (or \"NaN\", \"nan:0x<bits>\", \"inf\", \"-inf\"), found {}",
            other.describe()
        ))
        }
    };
    // A finite number that an `f4` cannot hold would be written as infinity.
    if bytes == 4 && x.is_finite() && !(x as f32).is_finite() {
        return Err(format!(
            "{fp}: {x} does not fit f4 (its largest finite value is {:e})",
            f32::MAX
        ));
    }
    let b: Vec<u8> = match (bytes, endian) {
        (4, Endian::Be) => narrow(x).to_be_bytes().to_vec(),
        (4, _) => narrow(x).to_le_bytes().to_vec(),
        (_, Endian::Be) => x.to_be_bytes().to_vec(),
        (_, _) => x.to_le_bytes().to_vec(),
    };
    w.write_bytes(&b);
    Ok(DynValue::Float(if bytes == 4 {
        super::read::widen(narrow(x))
    } else {
        x
    }))
}

/// Refuses a value of `len` bytes shorter than the size `n` of field `f` when `f` has
/// neither a terminator nor `pad-right` and its `size` is an expression, as the generated
/// writer refuses it (a size mismatch): nothing says what would fill the rest. A longer
/// value is refused by [`put_sized`].
fn fills(f: &Field, size: Option<&Size>, len: usize, n: Option<usize>, fp: &str) -> W<()> {
    match (n, size) {
        (Some(n), Some(Size::Expr(e))) if f.term.is_none() && len < n => {
            let size = match e.src.trim() == n.to_string() {
                true => format!("the size is {n}"),
                false => format!("the size `{}` is {n}", e.src),
            };
            Err(format!(
                "{fp}: {len} byte(s) given, but {size} (only a field with `pad-right` or a terminator is padded)"
            ))
        }
        _ => Ok(()),
    }
}

/// An `f64` as an `f4`: by rounding, and a NaN with its sign and the top of its payload
/// (the inverse of [`super::read::widen`]; a payload only in the low bits gives the quiet
/// NaN of that sign, never an infinity).
fn narrow(x: f64) -> f32 {
    if !x.is_nan() {
        return x as f32;
    }
    let b = x.to_bits();
    let sign = ((b >> 63) as u32) << 31;
    let payload = ((b >> 29) & 0x007f_ffff) as u32;
    let payload = if payload == 0 { 0x0040_0000 } else { payload };
    f32::from_bits(sign | 0x7f80_0000 | payload)
}

/// A 64-bit pattern written in hex (`fff8000000000000`).
struct HexBits(u64);

impl std::str::FromStr for HexBits {
    type Err = std::num::ParseIntError;
    fn from_str(h: &str) -> Result<Self, Self::Err> {
        u64::from_str_radix(h, 16).map(HexBits)
    }
}

/// How `decode --schema` prints a float JSON numbers cannot hold, and the writer takes back:
/// `"inf"`, `"-inf"`, `"NaN"` (the quiet NaN `0x7ff8000000000000`, an `f4`'s `0x7fc00000`)
/// and `"nan:0x<16 hex digits>"` for any other NaN, its bits as the interpreter holds it (an
/// `f4` widened with its sign and payload), so that every stored bit is written back.
/// `None` for a finite value.
pub fn nonfinite_text(x: f64) -> Option<String> {
    if x.is_finite() {
        None
    } else if x.is_nan() {
        Some(match x.to_bits() {
            0x7ff8_0000_0000_0000 => "NaN".to_owned(),
            b => format!("nan:{b:#018x}"),
        })
    } else if x > 0.0 {
        Some("inf".to_owned())
    } else {
        Some("-inf".to_owned())
    }
}

/// Writes `value` with the field's terminator and padding. Without a size: the value, then
/// the terminator when it is consumed and not part of the value (a value that includes it
/// and is not consumed leaves it to the next field); with `eos-error: false` the terminator
/// is left out where the enclosing sized field (`room` bytes left) has no room for it. With
/// a size: the value, the terminator when there is room, then `pad-right` (or zero) bytes.
fn put_sized(
    w: &mut ByteWriter,
    f: &Field,
    value: &[u8],
    size: Option<usize>,
    room: Option<usize>,
    fp: &str,
) -> W<()> {
    let mut out = value.to_vec();
    if let Some(t) = f.term {
        if let Some(term) = t.terminator {
            let width = usize::from(t.width.max(1));
            let has = out.len() >= width && out[out.len() - width..].iter().all(|b| *b == term);
            match size {
                Some(n) => {
                    if !(t.include && has) && out.len() + width <= n {
                        out.extend(std::iter::repeat_n(term, width));
                    }
                }
                None => {
                    let fits = room.is_none_or(|r| out.len() + width <= r);
                    if t.include {
                        if !has && fits {
                            out.extend(std::iter::repeat_n(term, width));
                        }
                        if !t.consume && out.len() >= width {
                            out.truncate(out.len() - width);
                        }
                    } else if t.consume && (t.eos_error || fits) {
                        out.extend(std::iter::repeat_n(term, width));
                    }
                }
            }
        }
    }
    if let Some(n) = size {
        if out.len() > n {
            return Err(format!(
                "{fp}: {} byte(s) do not fit in the size {n}",
                out.len()
            ));
        }
        let pad = f.term.and_then(|t| t.pad_right).unwrap_or(0);
        out.resize(n, pad);
    }
    if !w.bit_len().is_multiple_of(8) {
        w.align_to_byte();
    }
    w.write_bytes(&out);
    Ok(())
}

/// The params a nested type is written with, as on read.
fn args(
    s: &Trees<'_>,
    sc: &Scope<'_>,
    f: &Field,
    tn: &TypeRef,
    fp: &str,
) -> W<Vec<(&'static str, Option<DynValue>)>> {
    if opaque_of(s, tn).is_some() {
        // An opaque type takes no params (`super::unsupported_with` refuses arguments).
        return Ok(Vec::new());
    }
    let t = s
        .type_of(tn)
        .ok_or_else(|| format!("{fp}: no type `{}`", s.type_name(tn)))?;
    let mut given: Vec<Option<&SrcExpr>> = match &f.kind {
        FieldKind::User { .. } => f.args.iter().map(Some).collect(),
        _ => f
            .switch_args
            .iter()
            .find(|(n, _)| n == tn)
            .map(|(_, a)| a.iter().map(Some).collect())
            .unwrap_or_default(),
    };
    if let Some((_, ctx)) = f.ctx_args.iter().find(|(n, _)| Some(*n) == tn.id()) {
        given.extend(ctx.iter().map(Option::as_ref));
    }
    let mut out = Vec::with_capacity(t.params.len());
    for (i, p) in t.params.iter().enumerate() {
        let v = match given.get(i).copied().flatten() {
            None => None,
            // A stream is not known while writing (its size is not): not computed.
            Some(_) if is_io(&p.kind) => None,
            Some(e) => {
                let v = eval(e, sc)
                    .map_err(|m| format!("{fp}: in `{}`: {m}", e.src))?
                    .into_owned();
                Some(match (&p.kind, v) {
                    (ParamKind::Float, DynValue::Int(x)) => DynValue::Float(x as f64),
                    (ParamKind::Enum(en), DynValue::Int(x)) => enum_value(s, s.enum_name(en), x)?,
                    (_, v) => v,
                })
            }
        };
        out.push((intern(&p.id), v));
    }
    Ok(out)
}
