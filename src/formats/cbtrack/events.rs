//! The file's structure as a stream of events, one chunk at a time: what `inspect`,
//! `decode --offsets` and `view` print for a CBTK file.
//!
//! The schema's root type [`CbtrackV1`] keeps every chunk it reads (stored bytes, inflated
//! bytes and column values) until the whole file is read. [`decode_events`] reads the same
//! fields in the same order with the same generated readers and budgets, and reports the
//! same events, offsets, values and errors, but keeps nothing between fields: the header
//! and index are read with the generated [`CbtkHead`] reader, then each chunk (info,
//! features, each window's main and terrain chunk) is inflated on its own and its column
//! directory read entry by entry, each entry's column values sent to the tracer one at a
//! time where they lie, as the generated `ColumnDirectory` and `ColumnEntry` readers read
//! them (same fields, checks, error paths and messages; `tests/hostile_sweeps.rs` compares
//! the two event streams), and nothing kept once its events are out.
//!
//! Memory: the header and index and one inflated chunk (at most 64 times its stored bytes,
//! checked first by [`check_raw_limits`]), besides what the tracer keeps.

use super::*;
use crate::formats::events::SinkTracer;
use statepack_runtime::io::{unprocess_within, Processor, TraceLeaf, Tracer};

/// Reads `bytes` as the schema's root type does, sending every field to `tracer`, one chunk
/// at a time (module docs). Gives the result and the byte offset where reading stopped, as
/// [`crate::formats::FormatSpec::decode_events`] does: the chunk limits are checked first
/// ([`check_raw_limits`]), and a file that breaks them is refused before any event.
///
/// Errors: the raw layer's, with the same field path and byte offset.
pub fn decode_events(bytes: &[u8], tracer: SinkTracer<'_>) -> (Result<(), DecodeError>, u64) {
    if let Err(e) = check_raw_limits(bytes) {
        let at = e.offset;
        return (Err(e), at);
    }
    read_with(bytes, tracer)
}

/// The traced decode ([`crate::formats::FormatSpec::decode_traced`]) read one chunk at a
/// time: the events of [`decode_events`] built into a tree within
/// [`trace::trace_budget`](crate::formats::trace::trace_budget), the same tree, node for
/// node, as the root type's traced decode gives (a test compares them). A file that breaks
/// the chunk limits ([`check_raw_limits`]) gives its error and a tree of the root alone.
///
/// Memory: what [`decode_events`] keeps (the header and index, one inflated chunk: at most
/// 64 times its stored bytes and 16,777,215 bytes) and the tree (at most 24 MiB plus 16
/// bytes per input byte). The root type's traced decode kept every chunk at once besides the
/// tree (about 1,100 bytes per input byte at most).
///
/// Errors: the raw layer's, with the same field path and byte offset.
pub fn decode_traced(bytes: &[u8]) -> crate::formats::TracedDecode {
    use crate::formats::trace::{Feed, TreeBuilder};
    use statepack_runtime::format::RootType;
    let mut b = TreeBuilder::new(CbtrackV1::SCHEMA_ID, bytes.len());
    if let Err(e) = check_raw_limits(bytes) {
        return (Err(e), b.finish(0));
    }
    let (res, end) = read_with(bytes, Feed::new(&mut b));
    (res, b.finish(end))
}

/// [`decode_events`] with any tracer, once the chunk limits are checked.
fn read_with<T: Tracer>(bytes: &[u8], tracer: T) -> (Result<(), DecodeError>, u64) {
    let mut r = ByteReader::with_tracer(bytes, tracer);
    let res = read_root(&mut r).and_then(|()| r.finish());
    (res, r.offset())
}

/// The root type's fields: `head`, `info`, `features`, then `windows` (each with its `main`
/// and, when its length is not 0, its `terrain`), then the bytes up to the furthest chunk.
fn read_root<T: Tracer>(r: &mut ByteReader<'_, T>) -> Result<(), DecodeError> {
    r.enter(PathSeg::Field("head"));
    let head = CbtkHead::read_from(r).map_err(|e| e.in_field("head"))?;
    r.leave::<()>(None);
    let at = |block: u32| (block as i128).wrapping_mul(64);
    chunk(r, "info", at(head.info_block), false, head.info_len)?;
    chunk(
        r,
        "features",
        at(head.features_block),
        false,
        head.features_len,
    )?;
    let saved = r
        .enter_instance(0, false)
        .map_err(|e| e.in_field("windows"))?;
    r.enter(PathSeg::Field("windows"));
    let n = r
        .check_count(head.index.len() as i128, raw::Window::MIN_LEN)
        .map_err(|e| e.in_field("windows"))?;
    for (i, e) in head.index.iter().take(n).enumerate() {
        r.enter(PathSeg::Index(i));
        window(r, e).map_err(|e| e.in_index(i).in_field("windows"))?;
        r.leave::<()>(None);
    }
    r.leave::<()>(None);
    r.leave_instance(saved);
    r.take_positional_tail();
    Ok(())
}

/// One window's chunks, read from the whole input as its index entry places them.
fn window<T: Tracer>(r: &mut ByteReader<'_, T>, e: &WindowEntry) -> Result<(), DecodeError> {
    let at = |block: u32| (block as i128).wrapping_mul(64);
    chunk(r, "main", at(e.main_block), true, e.main_len)?;
    if e.terrain_len != 0 {
        chunk(r, "terrain", at(e.terrain_block), true, e.terrain_len)?;
    }
    Ok(())
}

/// The chunk `name` of `len` stored bytes at byte `pos` (of the stream being read, or with
/// `whole` of the whole input): inflated within the file's processed-bytes budget and read
/// as a chunk body by a reader over the inflated bytes that reports to `r`'s tracer. The
/// inflated bytes are dropped on return.
fn chunk<T: Tracer>(
    r: &mut ByteReader<'_, T>,
    name: &'static str,
    pos: i128,
    whole: bool,
    len: u32,
) -> Result<(), DecodeError> {
    let saved = r.enter_instance(pos, whole).map_err(|e| e.in_field(name))?;
    r.enter(PathSeg::Field(name));
    let at = r.offset();
    let stored = r.take_sized(len as i128).map_err(|e| e.in_field(name))?;
    let inflated = unprocess_within(Processor::Zlib, stored, at, r.processed_room())
        .map_err(|e| e.in_field(name))?;
    r.charge_processed(inflated.len(), at)
        .map_err(|e| e.in_field(name))?;
    let share = r.processed_share();
    let used = {
        let mut sub = ByteReader::with_tracer(&inflated, r.relay()).sharing(share);
        chunk_body(&mut sub).map_err(|e| e.in_field(name))?;
        // The chunk must be laid out as the writer lays out the columns (the generated
        // reader's check, with its error).
        cbtk_columns::check_laid_out(&inflated).map_err(|e| e.in_field(name))?;
        sub.processed_used()
    };
    drop(inflated);
    r.add_processed(used);
    r.leave::<()>(None);
    r.leave_instance(saved);
    Ok(())
}

/// A chunk body (`directory`: `num_columns`, then `columns`), each directory entry read
/// with the generated reader and dropped before the next.
fn chunk_body<T: Tracer>(r: &mut ByteReader<'_, T>) -> Result<(), DecodeError> {
    r.enter(PathSeg::Field("directory"));
    directory(r).map_err(|e| e.in_field("directory"))?;
    r.leave::<()>(None);
    Ok(())
}

/// The column directory's fields, as the generated `ColumnDirectory` reads them.
fn directory<T: Tracer>(r: &mut ByteReader<'_, T>) -> Result<(), DecodeError> {
    let num_columns: u32 = r.leaf("num_columns", |r| r.read_u32le())?;
    r.enter(PathSeg::Field("columns"));
    let n = r
        .check_count(num_columns as i128, raw::ColumnEntry::MIN_LEN)
        .map_err(|e| e.in_field("columns"))?;
    for i in 0..n {
        r.enter(PathSeg::Index(i));
        column_entry(r).map_err(|e| e.in_index(i).in_field("columns"))?;
        r.leave::<()>(None);
    }
    r.leave::<()>(None);
    Ok(())
}

/// What the Lua profile allows in a stored u4 (`valid: max`) and s4 (`valid: min, max`).
const U4_RULE: &str = "must be at most 16777215";
const S4_RULE: &str = "must be in -16777215..=16777215";
const LUA_MAGNITUDE: i128 = 16_777_215;

/// One directory entry's fields and its column's values (the instance its type code
/// selects), as the generated `ColumnEntry` reader reads them, each value sent to the
/// tracer and dropped: nothing of the column is kept.
fn column_entry<T: Tracer>(r: &mut ByteReader<'_, T>) -> Result<(), DecodeError> {
    let _id: u16 = r.leaf("id", |r| r.read_u16le())?;
    let type_code: u16 = r.leaf("type_code", |r| r.read_u16le())?;
    let in_lua = |v: &u32| i128::from(*v) <= LUA_MAGNITUDE;
    let offset = value(r, "offset", ByteReader::read_u32le, U4_RULE, in_lua)?;
    let count = value(r, "count", ByteReader::read_u32le, U4_RULE, in_lua)?;
    let at = (offset as i128, count as i128);
    match type_code {
        1 => values(r, "u1_values", at, 1, ByteReader::read_u8, "", any),
        2 => values(r, "u2_values", at, 2, ByteReader::read_u16le, "", any),
        3 => values(r, "s2_values", at, 2, ByteReader::read_i16le, "", any),
        4 => values(
            r,
            "u4_values",
            at,
            4,
            ByteReader::read_u32le,
            U4_RULE,
            in_lua,
        ),
        5 => values(
            r,
            "s4_values",
            at,
            4,
            ByteReader::read_i32le,
            S4_RULE,
            |v| i128::from(*v).abs() <= LUA_MAGNITUDE,
        ),
        6 => values(r, "f4_values", at, 4, ByteReader::read_f32le, "", any),
        // A reader skips other codes: the entry has no values.
        _ => Ok(()),
    }
}

/// Any value: a field without a `valid` rule.
fn any<V>(_: &V) -> bool {
    true
}

/// A field `name` read by `read` and checked with `ok` (`rule` names what it breaks).
fn value<'a, T: Tracer, V: TraceLeaf + std::fmt::Debug>(
    r: &mut ByteReader<'a, T>,
    name: &'static str,
    read: impl Fn(&mut ByteReader<'a, T>) -> Result<V, DecodeError>,
    rule: &'static str,
    ok: impl Fn(&V) -> bool,
) -> Result<V, DecodeError> {
    r.enter(PathSeg::Field(name));
    let at = r.offset();
    let v = read(r).map_err(|e| e.in_field(name))?;
    if !ok(&v) {
        return Err(not_valid(at, &v, rule).in_field(name));
    }
    r.leave(Some(&v));
    Ok(v)
}

/// The `count` values of `size` bytes of the column `name` at byte `offset` of the chunk
/// (`(offset, count)`), each read by `read`, checked with `ok`, sent and dropped.
fn values<'a, T: Tracer, V: TraceLeaf + std::fmt::Debug>(
    r: &mut ByteReader<'a, T>,
    name: &'static str,
    (offset, count): (i128, i128),
    size: usize,
    read: impl Fn(&mut ByteReader<'a, T>) -> Result<V, DecodeError>,
    rule: &'static str,
    ok: impl Fn(&V) -> bool,
) -> Result<(), DecodeError> {
    let saved = r
        .enter_instance(offset, false)
        .map_err(|e| e.in_field(name))?;
    r.enter(PathSeg::Field(name));
    let n = r.check_count(count, size).map_err(|e| e.in_field(name))?;
    for i in 0..n {
        r.enter(PathSeg::Index(i));
        let at = r.offset();
        let v = read(r).map_err(|e| e.in_index(i).in_field(name))?;
        if !ok(&v) {
            return Err(not_valid(at, &v, rule).in_index(i).in_field(name));
        }
        r.leave(Some(&v));
    }
    r.leave::<()>(None);
    r.leave_instance(saved);
    Ok(())
}

/// The error of a value at byte `at` that breaks its `valid` rule.
fn not_valid(at: u64, v: &impl std::fmt::Debug, rule: &'static str) -> DecodeError {
    DecodeError::new(
        at,
        DecodeErrorKind::NotValid {
            value: format!("{v:?}"),
            rule,
        },
    )
}
