//! The file's structure as a stream of events, one chunk at a time: what `inspect`,
//! `decode --offsets` and `view` print for a CBTK file.
//!
//! The schema's root type [`CbtrackV1`] keeps every chunk it reads (stored bytes, inflated
//! bytes and column values) until the whole file is read. [`decode_events`] reads the same
//! fields in the same order with the same generated readers and budgets, and reports the
//! same events, offsets, values and errors, but keeps nothing between fields: the header
//! and index are read with the generated [`CbtkHead`] reader, then each chunk (info,
//! features, each window's main and terrain chunk) is inflated on its own, its directory
//! read one entry at a time with the generated [`raw::ColumnEntry`] reader (an entry reads
//! its column's values), and each entry and chunk dropped once its events are out.
//!
//! Memory: the header and index, one inflated chunk (at most 64 times its stored bytes,
//! checked first by [`check_raw_limits`]) and one column's values (at most the inflated
//! chunk's bytes), besides what the tracer keeps.

use super::*;
use crate::formats::events::SinkTracer;
use statepack_runtime::io::{unprocess_within, Processor, Tracer};

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
        // What the root type keeps after the directory (the columns' bytes) is not kept.
        sub.align_to_byte_keep();
        sub.take_rest();
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
        let entry =
            raw::ColumnEntry::read_from(r).map_err(|e| e.in_index(i).in_field("columns"))?;
        drop(entry);
        r.leave::<()>(None);
    }
    r.leave::<()>(None);
    Ok(())
}
