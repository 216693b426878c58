//! The one world-snapshot writer: stitches pre-encoded blobs into one peer's message, with
//! the origin table, despawn TLVs, the per-record byte budget and the optional zstd body on
//! one path.
//!
//! # How a message is laid out in memory
//!
//! The header and the origin table come first on the wire, but their size is known only once
//! every record is in. The writer therefore keeps one buffer with a gap in front:
//!
//! ```text
//! [ gap | header (24) | origin table (24 × k) | record stream | TLV block ]
//!         ^ start                               ^ stream_start
//! ```
//!
//! Records are appended at the end of the stream as they come (one index byte and one copy
//! of the blob below 128 origins). [`SnapshotWriter::message`] then writes the TLV block after
//! the stream and the origin table and header backwards into the gap, and hands out the
//! message as a slice of that buffer: the blob bytes are copied exactly once. The gap holds
//! as many origins as the tick-wide table has ([`SnapshotWriter::set_tick_origins`]) or 16 to
//! start with; a snapshot that needs more moves its stream once to make room (doubling).
//!
//! # Origins
//!
//! A record's grid origin is given either as a tick-wide id (an index into the table given to
//! [`SnapshotWriter::set_tick_origins`] or built by [`SnapshotWriter::set_entities`]: one
//! array lookup per record, the fast path) or as the origin itself
//! ([`SnapshotWriter::push_record`]: compared bit for bit, the most recent first, then the
//! others). Either way the snapshot's own table lists its origins in order of first use, so
//! both give the same bytes.
//!
//! # Budget
//!
//! [`SnapshotWriter::push_id_within`] writes a record only when the message without its TLVs
//! (header + origin table + records, [`SnapshotWriter::counted_bytes`]) stays within the
//! budget with it, counting the record's exact size (its origin-index varint, its blob, and
//! 24 bytes when its origin is new to the snapshot). Despawn TLVs are not counted.

use super::{EncodedEntity, SnapshotError, HEADER_BYTES, MAX_BODY_BYTES, MSG_TYPE, TLV_DESPAWN};
#[cfg(feature = "zstd")]
use super::{FLAG_ZSTD, MAX_ZSTD_RATIO, ZSTD_LEVEL};
use glam::DVec3;
use statepack_runtime::bits::{leb128_len, push_varint};

/// Origin slots reserved in front of the stream when no tick-wide table says how many.
const DEFAULT_RESERVED: usize = 16;
/// Slots of the by-value origin cache (a power of two).
const CACHE_SLOTS: usize = 64;

/// The cache slot of an origin's bit patterns.
#[inline(always)]
fn slot_of(k: &[u64; 3]) -> usize {
    let h =
        (k[0] ^ k[1].rotate_left(21) ^ k[2].rotate_left(42)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    (h >> 58) as usize
}

/// Largest despawn list in one TLV entry (its length is a u2).
const TLV_MAX_VALUE: usize = u16::MAX as usize;

/// The bit patterns an origin is compared by.
#[inline(always)]
fn key(o: DVec3) -> [u64; 3] {
    [o.x.to_bits(), o.y.to_bits(), o.z.to_bits()]
}

/// A reusable zstd context (level [`ZSTD_LEVEL`]), made on first use. Cloning gives a writer
/// without one (it is made again when needed).
#[derive(Default)]
#[cfg(feature = "zstd")]
struct Zstd(Option<zstd::bulk::Compressor<'static>>);

#[cfg(feature = "zstd")]
impl Clone for Zstd {
    fn clone(&self) -> Self {
        Zstd(None)
    }
}

#[cfg(feature = "zstd")]
impl std::fmt::Debug for Zstd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "zstd context"
        } else {
            "no zstd context yet"
        })
    }
}

/// Builds one peer's snapshot from pre-encoded blobs (the only writer of the format; see the
/// module documentation for the layout and the budget). Reusable: [`SnapshotWriter::clear`]
/// keeps every buffer, so a writer shared by all peers of a tick allocates nothing once warm.
#[derive(Debug, Clone)]
pub struct SnapshotWriter {
    /// Gap, header, origin table, then from `stream_start` the record stream and, after
    /// [`SnapshotWriter::message`], the TLV block.
    buf: Vec<u8>,
    /// Where the record stream starts: `HEADER_BYTES + 24 × reserved`.
    stream_start: usize,
    /// Bytes after the record stream: the TLV block a finished message left at the end of
    /// `buf` (0 while records are being pushed; the stream ends at `buf.len() - tail`).
    tail: usize,
    /// Origin slots between the header and the stream.
    reserved: usize,
    /// `24 × (reserved − origins in the table)`: the gap's unused bytes, so that
    /// [`SnapshotWriter::counted_bytes`] is `buf.len() − tail − slack`.
    slack: usize,
    /// The tick-wide origins (ids index them) and their bit patterns.
    tick: Vec<DVec3>,
    tick_keys: Vec<[u64; 3]>,
    /// How many of `tick` were given by the caller (the rest were learnt from
    /// [`SnapshotWriter::push_record`] and are forgotten by [`SnapshotWriter::clear`]).
    fixed: usize,
    /// Per tick id: the snapshot's local index + 1, or 0 when the origin is not in the
    /// snapshot yet.
    local: Vec<u32>,
    /// The snapshot's origin table, as tick ids in local order.
    table: Vec<u32>,
    /// Tick id of the most recent [`SnapshotWriter::push_record`] origin.
    last: usize,
    /// Direct-mapped cache of [`SnapshotWriter::push_record`] lookups: per hash slot, a tick
    /// id + 1 (0 = empty). Every hit is checked against the key, so stale slots are harmless.
    cache: [u32; CACHE_SLOTS],
    /// Per entity of [`SnapshotWriter::set_entities`]: its tick id.
    entity_ids: Vec<u32>,
    records: u32,
    despawns: Vec<u32>,
    #[cfg(feature = "zstd")]
    zstd: Zstd,
    /// The compressed message of the last [`SnapshotWriter::message`] with compression.
    zbuf: Vec<u8>,
}

impl Default for SnapshotWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl SnapshotWriter {
    /// An empty writer.
    pub fn new() -> Self {
        let stream_start = HEADER_BYTES + 24 * DEFAULT_RESERVED;
        Self {
            buf: vec![0; stream_start],
            stream_start,
            tail: 0,
            reserved: DEFAULT_RESERVED,
            slack: 24 * DEFAULT_RESERVED,
            tick: Vec::new(),
            tick_keys: Vec::new(),
            fixed: 0,
            local: Vec::new(),
            table: Vec::new(),
            last: 0,
            cache: [0; CACHE_SLOTS],
            entity_ids: Vec::new(),
            records: 0,
            despawns: Vec::new(),
            #[cfg(feature = "zstd")]
            zstd: Zstd::default(),
            zbuf: Vec::new(),
        }
    }

    /// Forgets every record, despawn and the snapshot's origin table, keeping the buffers and
    /// the tick-wide origins given by [`SnapshotWriter::set_tick_origins`] or
    /// [`SnapshotWriter::set_entities`] (their ids stay valid); origins learnt by
    /// [`SnapshotWriter::push_record`] are forgotten.
    pub fn clear(&mut self) {
        self.tick.truncate(self.fixed);
        self.tick_keys.truncate(self.fixed);
        self.local.clear();
        self.local.resize(self.fixed, 0);
        self.table.clear();
        self.last = 0;
        self.records = 0;
        self.despawns.clear();
        self.buf.truncate(self.stream_start);
        self.tail = 0;
        self.slack = 24 * self.reserved;
    }

    /// Sets the tick-wide origin table (an origin id is an index into `origins`) and clears
    /// the writer. The gap in front of the stream is sized for all of them (at most 65 535).
    pub fn set_tick_origins(&mut self, origins: &[DVec3]) {
        self.tick.clear();
        self.tick.extend_from_slice(origins);
        self.tick_keys.clear();
        self.tick_keys.extend(origins.iter().map(|o| key(*o)));
        self.fixed = origins.len();
        self.entity_ids.clear();
        self.reserve_origins(origins.len().min(usize::from(u16::MAX)));
        self.clear();
    }

    /// Sets the tick-wide origin table to the distinct origins of `entities` (as
    /// [`tick_origins`]) and clears the writer; [`SnapshotWriter::entity_origin_id`] then
    /// gives each entity's id. When every entity's origin is where the previous call put it
    /// (the same tick's entities, as when one writer serves every peer of a tick), the table
    /// is kept, at the cost of one comparison per entity.
    pub fn set_entities(&mut self, entities: &[EncodedEntity]) {
        let same = self.fixed == self.tick.len()
            && self.entity_ids.len() == entities.len()
            && entities
                .iter()
                .zip(&self.entity_ids)
                .all(|(e, &id)| self.tick_keys.get(id as usize) == Some(&key(e.origin)));
        if !same {
            let (table, ids) = tick_origins(entities);
            self.set_tick_origins(&table);
            self.entity_ids = ids;
        } else {
            self.clear();
        }
    }

    /// The tick-wide origin id of entity `i` of the last [`SnapshotWriter::set_entities`];
    /// `u32::MAX` (which every push refuses) for an index beyond those entities.
    #[inline]
    pub fn entity_origin_id(&self, i: usize) -> u32 {
        self.entity_ids.get(i).copied().unwrap_or(u32::MAX)
    }

    /// Makes room for at least `slots` origins between the header and the stream, moving the
    /// stream if it has started.
    fn reserve_origins(&mut self, slots: usize) {
        if slots <= self.reserved {
            return;
        }
        self.drop_tail();
        let new_start = HEADER_BYTES + 24 * slots;
        let len = self.buf.len() - self.stream_start;
        self.buf.resize(new_start + len, 0);
        self.buf
            .copy_within(self.stream_start..self.stream_start + len, new_start);
        self.stream_start = new_start;
        self.reserved = slots;
        self.slack = 24 * slots.saturating_sub(self.table.len());
    }

    /// Removes the TLV block a finished message left after the stream.
    #[cold]
    fn drop_tail(&mut self) {
        let end = self.buf.len() - self.tail;
        self.buf.truncate(end);
        self.tail = 0;
    }

    /// The tick id of `origin`, adding it to the tick-wide table (as a learnt origin) when it
    /// is not there. The most recent origin is tried first, as neighbours share cells.
    #[inline]
    fn id_of(&mut self, origin: DVec3) -> u32 {
        let k = key(origin);
        if self.tick_keys.get(self.last) == Some(&k) {
            return self.last as u32;
        }
        let slot = slot_of(&k);
        let cached = self.cache[slot].wrapping_sub(1) as usize;
        let id = if self.tick_keys.get(cached) == Some(&k) {
            cached
        } else {
            let id = self.find_or_learn(origin, k);
            self.cache[slot] = id as u32 + 1;
            id
        };
        self.last = id;
        id as u32
    }

    /// The tick id of `origin` by linear search, learnt when absent.
    #[cold]
    fn find_or_learn(&mut self, origin: DVec3, k: [u64; 3]) -> usize {
        match self.tick_keys.iter().position(|x| *x == k) {
            Some(i) => i,
            None => {
                self.tick.push(origin);
                self.tick_keys.push(k);
                self.local.push(0);
                self.tick.len() - 1
            }
        }
    }

    /// The origin-table index `origin` has in this snapshot, or would get as the next new
    /// one (origins compare bit for bit).
    pub fn origin_index(&self, origin: DVec3) -> u32 {
        let k = key(origin);
        match self.tick_keys.iter().position(|x| *x == k) {
            Some(id) if self.local[id] > 0 => self.local[id] - 1,
            _ => self.table.len() as u32,
        }
    }

    /// Appends a record whose origin is given by value: the origin-index varint (the origin
    /// joins the snapshot's table if new), then the blob as it is. Errors:
    /// [`SnapshotError::TooManyOrigins`].
    #[inline]
    pub fn push_record(&mut self, origin: DVec3, blob: &[u8]) -> Result<(), SnapshotError> {
        let id = self.id_of(origin);
        self.push_inner(id, blob, usize::MAX).map(|_| ())
    }

    /// [`SnapshotWriter::push_record`] within a byte budget (see
    /// [`SnapshotWriter::push_id_within`]). Returns whether the record was written.
    #[inline]
    pub fn push_record_within(
        &mut self,
        origin: DVec3,
        blob: &[u8],
        budget_bytes: usize,
    ) -> Result<bool, SnapshotError> {
        let id = self.id_of(origin);
        self.push_inner(id, blob, budget_bytes)
    }

    /// Appends a record whose origin is the tick-wide id `origin_id`. Errors:
    /// [`SnapshotError::BadBlob`] for an id outside the tick-wide table,
    /// [`SnapshotError::TooManyOrigins`].
    #[inline]
    pub fn push_id(&mut self, origin_id: u32, blob: &[u8]) -> Result<(), SnapshotError> {
        self.push_inner(origin_id, blob, usize::MAX).map(|_| ())
    }

    /// Appends a record whose origin is the tick-wide id `origin_id` when the message without
    /// TLVs stays within `budget_bytes` with it ([`SnapshotWriter::counted_bytes`] plus the
    /// record's exact size: its origin-index varint, the blob, and 24 bytes for an origin new
    /// to the snapshot). Returns whether it was written; a record that does not fit changes
    /// nothing. Errors: as [`SnapshotWriter::push_id`].
    #[inline]
    pub fn push_id_within(
        &mut self,
        origin_id: u32,
        blob: &[u8],
        budget_bytes: usize,
    ) -> Result<bool, SnapshotError> {
        self.push_inner(origin_id, blob, budget_bytes)
    }

    /// The one push path.
    #[inline(always)]
    fn push_inner(&mut self, id: u32, blob: &[u8], budget: usize) -> Result<bool, SnapshotError> {
        let Some(&slot) = self.local.get(id as usize) else {
            return Err(bad_origin_id(id));
        };
        let new = slot == 0;
        let idx = if new {
            self.table.len() as u32
        } else {
            slot - 1
        };
        let head = if idx < 128 {
            1
        } else {
            leb128_len(u64::from(idx))
        };
        let need = head + blob.len() + if new { 24 } else { 0 };
        if self.counted_bytes().saturating_add(need) > budget {
            return Ok(false);
        }
        if new {
            self.add_origin(id)?;
        }
        if self.tail != 0 {
            self.drop_tail();
        }
        if idx < 128 {
            self.buf.push(idx as u8);
        } else {
            push_varint(&mut self.buf, u64::from(idx));
        }
        self.buf.extend_from_slice(blob);
        self.records += 1;
        Ok(true)
    }

    /// Puts tick id `id` into the snapshot's table (the next local index), making room in
    /// the gap when needed. Errors: [`SnapshotError::TooManyOrigins`].
    #[cold]
    fn add_origin(&mut self, id: u32) -> Result<(), SnapshotError> {
        if self.table.len() == usize::from(u16::MAX) {
            return Err(SnapshotError::TooManyOrigins);
        }
        self.local[id as usize] = self.table.len() as u32 + 1;
        self.table.push(id);
        if self.table.len() > self.reserved {
            self.reserve_origins((self.reserved * 2).max(self.table.len()));
        }
        self.slack = 24 * (self.reserved - self.table.len());
        Ok(())
    }

    /// Adds an entity to the despawn list.
    pub fn push_despawn(&mut self, entity_index: u32) {
        self.despawns.push(entity_index);
    }

    /// Distinct origins in this snapshot so far.
    pub fn origin_count(&self) -> usize {
        self.table.len()
    }

    /// Records stitched so far.
    pub fn record_count(&self) -> u32 {
        self.records
    }

    /// What the budget counts: header + origin table + records (the message without its TLVs
    /// and without compression).
    #[inline]
    pub fn counted_bytes(&self) -> usize {
        // = HEADER_BYTES + 24 × origins + stream bytes, as stream_start = HEADER_BYTES + 24 ×
        // reserved.
        self.buf.len() - self.tail - self.slack
    }

    /// Raw body bytes so far (origin table + record stream + despawn TLVs).
    pub fn body_bytes(&self) -> usize {
        self.counted_bytes() - HEADER_BYTES + tlv_block_len(&self.despawns)
    }

    /// The finished snapshot for `tick`, as a slice of the writer's buffer (valid until the
    /// writer is changed): header, then the raw body, or the body as one zstd frame (level
    /// [`ZSTD_LEVEL`](super::ZSTD_LEVEL), flag bit 0) when `compress` is set and the frame is
    /// strictly smaller and at least 1/[`MAX_ZSTD_RATIO`](super::MAX_ZSTD_RATIO) of the body
    /// (what [`super::decode`] accepts; a build without the `zstd` feature always gives the
    /// raw body). More records can be pushed afterwards, and the message asked for again.
    /// Errors: [`SnapshotError::TooLarge`] for a body above [`MAX_BODY_BYTES`].
    pub fn message(&mut self, tick: u32, compress: bool) -> Result<&[u8], SnapshotError> {
        if self.tail != 0 {
            self.drop_tail();
        }
        let stream_end = self.buf.len();
        write_tlv_block(&mut self.buf, &self.despawns);
        self.tail = self.buf.len() - stream_end;
        let stream_len = stream_end - self.stream_start;
        let tlv_len = self.tail;
        let k = self.table.len();
        let body_len = 24 * k + stream_len + tlv_len;
        if body_len > MAX_BODY_BYTES {
            return Err(SnapshotError::TooLarge(body_len));
        }
        let start = self.stream_start - 24 * k - HEADER_BYTES;
        let origins = &mut self.buf[start + HEADER_BYTES..self.stream_start];
        for (dst, &id) in origins.chunks_exact_mut(24).zip(&self.table) {
            let o = self.tick[id as usize];
            dst[0..8].copy_from_slice(&o.x.to_le_bytes());
            dst[8..16].copy_from_slice(&o.y.to_le_bytes());
            dst[16..24].copy_from_slice(&o.z.to_le_bytes());
        }
        let header = header_bytes(
            0,
            k as u16,
            tick,
            self.records,
            stream_len as u32,
            tlv_len as u32,
            body_len as u32,
        );
        self.buf[start..start + HEADER_BYTES].copy_from_slice(&header);
        if compress && self.compress_body(start, body_len) {
            return Ok(&self.zbuf);
        }
        Ok(&self.buf[start..])
    }

    /// A build without the `zstd` feature compresses nothing: always false (the raw message
    /// is sent).
    #[cfg(not(feature = "zstd"))]
    fn compress_body(&mut self, _start: usize, _body_len: usize) -> bool {
        false
    }

    /// Compresses the raw message at `buf[start..]` into `zbuf` (header with the zstd flag,
    /// then the frame); false, leaving the raw message to be sent, when zstd fails or the
    /// frame is not smaller than the body or compresses past [`MAX_ZSTD_RATIO`].
    #[cfg(feature = "zstd")]
    fn compress_body(&mut self, start: usize, body_len: usize) -> bool {
        if self.zstd.0.is_none() {
            self.zstd.0 = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
        }
        let Some(ctx) = self.zstd.0.as_mut() else {
            return false;
        };
        let body = &self.buf[start + HEADER_BYTES..];
        self.zbuf.clear();
        self.zbuf
            .extend_from_slice(&self.buf[start..start + HEADER_BYTES]);
        self.zbuf[1] = FLAG_ZSTD;
        self.zbuf
            .reserve(zstd::zstd_safe::compress_bound(body.len()));
        let mut cur = std::io::Cursor::new(&mut self.zbuf);
        cur.set_position(HEADER_BYTES as u64);
        let Ok(frame) = ctx.compress_to_buffer(body, &mut cur) else {
            return false;
        };
        // Readers refuse a frame that claims more than MAX_ZSTD_RATIO times its size, so a
        // body that compresses further than that is sent raw.
        frame < body_len && body_len <= frame * MAX_ZSTD_RATIO
    }

    /// [`SnapshotWriter::message`] as a new vector.
    /// Errors: [`SnapshotError::TooLarge`].
    pub fn finish(&mut self, tick: u32, compress: bool) -> Result<Vec<u8>, SnapshotError> {
        self.message(tick, compress).map(<[u8]>::to_vec)
    }
}

#[cold]
fn bad_origin_id(id: u32) -> SnapshotError {
    SnapshotError::BadBlob(format!("origin id {id} is not in the tick's table"))
}

/// The 24-byte header (layout in `docs/formats/world_snapshot.md`).
fn header_bytes(
    flags: u8,
    origin_count: u16,
    tick: u32,
    records: u32,
    stream: u32,
    tlv: u32,
    body: u32,
) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[0] = MSG_TYPE;
    h[1] = flags;
    h[2..4].copy_from_slice(&origin_count.to_le_bytes());
    h[4..8].copy_from_slice(&tick.to_le_bytes());
    h[8..12].copy_from_slice(&records.to_le_bytes());
    h[12..16].copy_from_slice(&stream.to_le_bytes());
    h[16..20].copy_from_slice(&tlv.to_le_bytes());
    h[20..24].copy_from_slice(&body.to_le_bytes());
    h
}

/// Appends the TLV block of `despawns` to `out`: despawn lists (type 1, u2 length, entity
/// index varints) of at most 65 535 bytes each, split between entities.
fn write_tlv_block(out: &mut Vec<u8>, despawns: &[u32]) {
    let mut entry = None::<usize>;
    for &e in despawns {
        let n = leb128_len(u64::from(e));
        let fits = entry.is_some_and(|at| out.len() - at - 3 + n <= TLV_MAX_VALUE);
        if !fits {
            close_tlv(out, entry);
            entry = Some(out.len());
            out.extend_from_slice(&[TLV_DESPAWN, 0, 0]);
        }
        push_varint(out, u64::from(e));
    }
    close_tlv(out, entry);
}

/// Writes the length of the entry that starts at `at`.
fn close_tlv(out: &mut [u8], at: Option<usize>) {
    if let Some(at) = at {
        let len = (out.len() - at - 3) as u16;
        out[at + 1..at + 3].copy_from_slice(&len.to_le_bytes());
    }
}

/// Length of the TLV block [`write_tlv_block`] writes.
fn tlv_block_len(despawns: &[u32]) -> usize {
    let mut total = 0;
    let mut value = None::<usize>;
    for &e in despawns {
        let n = leb128_len(u64::from(e));
        value = match value {
            Some(v) if v + n <= TLV_MAX_VALUE => Some(v + n),
            Some(v) => {
                total += 3 + v;
                Some(n)
            }
            None => Some(n),
        };
    }
    total + value.map_or(0, |v| 3 + v)
}

/// A whole raw snapshot from known records and despawns, through [`SnapshotWriter`] (one
/// call for a message built at once). Errors: as [`SnapshotWriter::push_record`] and
/// [`SnapshotWriter::message`].
pub fn stitch(
    tick: u32,
    records: &[(DVec3, &[u8])],
    despawns: &[u32],
) -> Result<Vec<u8>, SnapshotError> {
    let mut w = SnapshotWriter::new();
    for (o, blob) in records {
        w.push_record(*o, blob)?;
    }
    for &d in despawns {
        w.push_despawn(d);
    }
    w.finish(tick, false)
}

/// The tick's distinct grid origins (in order of first appearance), and for each entity the
/// index of its origin among them: the tick-wide origin ids of
/// [`SnapshotWriter::set_tick_origins`] / [`SnapshotWriter::push_id`].
pub fn tick_origins(entities: &[EncodedEntity]) -> (Vec<DVec3>, Vec<u32>) {
    let mut origins: Vec<DVec3> = Vec::new();
    let mut keys: Vec<[u64; 3]> = Vec::new();
    let mut last = 0usize;
    let ids = entities
        .iter()
        .map(|e| {
            let k = key(e.origin);
            if keys.get(last) == Some(&k) {
                return last as u32;
            }
            last = match keys.iter().position(|x| *x == k) {
                Some(i) => i,
                None => {
                    keys.push(k);
                    origins.push(e.origin);
                    keys.len() - 1
                }
            };
            last as u32
        })
        .collect();
    (origins, ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The TLV block splits at 65 535 bytes exactly as its length function counts.
    #[test]
    fn tlv_split_and_length_agree() {
        for n in [0usize, 1, 5, 13_107, 13_108, 40_000] {
            // 5-byte varints: 13 107 of them fill one entry (65 535 bytes).
            let d: Vec<u32> = (0..n as u32).map(|i| u32::MAX - i).collect();
            let mut out = Vec::new();
            write_tlv_block(&mut out, &d);
            assert_eq!(out.len(), tlv_block_len(&d), "{n}");
            let mut at = 0;
            let mut seen = 0;
            while at < out.len() {
                assert_eq!(out[at], TLV_DESPAWN);
                let len = usize::from(u16::from_le_bytes([out[at + 1], out[at + 2]]));
                assert!(len <= TLV_MAX_VALUE && len % 5 == 0);
                seen += len / 5;
                at += 3 + len;
            }
            assert_eq!(seen, n);
        }
    }

    /// Moving the stream to make room for more origins keeps the bytes.
    #[test]
    fn growing_the_origin_gap_keeps_the_stream() {
        let mut w = SnapshotWriter::new();
        let mut pairs = Vec::new();
        for i in 0..100u32 {
            let o = DVec3::new(f64::from(i) * 65_536.0, 0.0, 0.0);
            pairs.push((o, vec![i as u8; 3]));
        }
        for (o, b) in &pairs {
            w.push_record(*o, b).unwrap();
        }
        let a = w.finish(3, false).unwrap();
        assert_eq!(a.len(), HEADER_BYTES + 100 * 24 + 100 * 4);
        let stream = &a[HEADER_BYTES + 2400..];
        for (i, rec) in stream.chunks(4).enumerate() {
            assert_eq!(rec, [i as u8, i as u8, i as u8, i as u8]);
        }
    }
}
