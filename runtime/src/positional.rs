//! Positional instances and `_io` (Kaitai Struct `instances` with `pos`, and `_io.pos`,
//! `_io.size`, `_io.eof`): the reader side jumps to a position of a stream and comes back, the
//! writer side lays the instances out once everything in sequence has been written.
//!
//! Positions are relative to the stream being read: the type's own substream when it was
//! read in a sized field (which starts at 0), else the enclosing stream, up to the whole input.
//! With `io: _root._io` the stream is the whole input.
//!
//! On write a type's positional instances are encoded on their own and queued in the
//! [`ByteWriter`]; the root type lays them out at its end ([`ByteWriter::lay_out_positional`]):
//! bytes already written (by `seq` fields or by an earlier instance) must agree with the
//! instance's bytes, else the writer refuses naming both; the bytes the reader found after the
//! root's `seq` (kept by the root type) lie under the instances, and the output grows where an
//! instance goes on past its end.
//!
//! Reading is bounded: instances nest at most [`MAX_INSTANCE_DEPTH`] deep (at most
//! [`MAX_SAME_OFFSET`] in a row at one byte offset) and one decode reads at most
//! [`instance_budget`] of them.

use crate::io::{
    AlignedSlot, ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError,
    EncodeErrorKind, Placement, Tracer,
};

pub use crate::limits::{
    instance_budget, instance_bytes_budget, processed_budget, MAX_INSTANCE_DEPTH, MAX_SAME_OFFSET,
};

/// A reader's share of its file's processed-bytes budget ([`processed_budget`]), handed to
/// the reader of a processed field's bytes.
#[derive(Debug, Clone, Copy)]
pub struct ProcessedShare {
    total: u64,
    pub(crate) base: u64,
}

/// The reader's state before a positional instance was read, given back to
/// [`ByteReader::leave_instance`].
#[derive(Debug, Clone, Copy)]
pub struct Saved {
    /// Where the instance started (absolute), to count the bytes it read.
    at: usize,
    /// The reader's `inst_at` before the instance.
    inst_at: (usize, u8),
    pos: usize,
    start: usize,
    end: usize,
    bits: u8,
    nbits: u8,
}

/// How the writer places a positional instance of a nested type
/// ([`ByteWriter::place_floating`]): where it was read, the form of its position and the
/// integer field it writes the position into, `(position - offset) / step`.
#[derive(Debug, Clone, Copy)]
pub struct Floating {
    /// Where the instance was read (position in its stream, bytes read), for a decoded value.
    pub kept: Option<(i128, u64)>,
    /// The multiplier of the position (positive).
    pub step: i128,
    /// The literal added to the position.
    pub offset: i128,
    /// The field's first byte, as [`ByteWriter::len`] before it was written.
    pub member_at: usize,
    /// The field's width in bytes (1 to 8).
    pub width: usize,
    /// Whether the field is signed.
    pub signed: bool,
    /// Whether the field is big-endian.
    pub big_endian: bool,
    /// The field's Rust type (`u32`), for a number that does not fit.
    pub ty: &'static str,
    /// The field's path (`pointer_to_raw_data`, `head.ofs_body`), for messages.
    pub member: &'static str,
}

impl Floating {
    /// `n` in the field's width and byte order.
    ///
    /// Errors: `OutOfRange` naming the field when `n` does not fit it.
    fn number_bytes(&self, n: i128) -> Result<Vec<u8>, EncodeError> {
        let bits = (self.width.clamp(1, 8) * 8) as u32;
        let (lo, hi) = if self.signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        if n < lo || n > hi {
            return Err(EncodeError::new(EncodeErrorKind::OutOfRange {
                value: n.to_string(),
                ty: self.ty,
            })
            .in_field(self.member));
        }
        let le = n.to_le_bytes();
        let mut b = le[..self.width.clamp(1, 8)].to_vec();
        if self.big_endian {
            b.reverse();
        }
        Ok(b)
    }
}

/// A [`Floating`] instance as queued: its kept place and the field's byte, absolute.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FloatAt {
    pub(crate) f: Floating,
    pub(crate) kept: Option<(usize, u64)>,
    pub(crate) start: usize,
    pub(crate) member_at: usize,
}

/// Whether `bytes` at `at` agree with `other` at `from` where they overlap.
fn overlap_agrees(at: usize, bytes: &[u8], from: usize, other: &[u8]) -> bool {
    let end = at.saturating_add(bytes.len());
    let lo = at.max(from);
    let hi = end.min(from.saturating_add(other.len()));
    lo >= hi || bytes[lo - at..hi - at] == other[lo - from..hi - from]
}

impl<'a, T: Tracer> ByteReader<'a, T> {
    /// `_io.pos`: the position of the next byte, from the start of the stream being read.
    #[inline]
    pub fn io_pos(&self) -> i128 {
        (self.pos - self.start) as i128
    }

    /// `_io.size`: the size in bytes of the stream being read.
    #[inline]
    pub fn io_size(&self) -> i128 {
        (self.end - self.start) as i128
    }

    /// Moves to byte `pos` of the stream being read (with `whole`, of the whole input) to read
    /// a positional instance; the reader reads from there up to that stream's end.
    ///
    /// Errors: `UnexpectedEof` when `pos` is negative (at the stream's start) or beyond the
    /// end of the stream (at its end; `needed` is `pos`); `Semantic` when positional instances nest deeper than
    /// [`MAX_INSTANCE_DEPTH`].
    pub fn enter_instance(&mut self, pos: i128, whole: bool) -> Result<Saved, DecodeError> {
        let (start, end) = if whole {
            (0, self.buf.len())
        } else {
            (self.start, self.end)
        };
        let size = end - start;
        let at = match usize::try_from(pos) {
            Ok(p) if p <= size => start + p,
            _ => {
                // The error's offset stays inside the input: the stream's start for a
                // negative position, its end for one past the end (the message gives the
                // position wanted).
                let offset = if pos < 0 { start as u64 } else { end as u64 };
                return Err(DecodeError::new(
                    offset,
                    DecodeErrorKind::UnexpectedEof {
                        needed: usize::try_from(pos).unwrap_or(usize::MAX),
                        available: size,
                    },
                ));
            }
        };
        if self.inst_depth >= MAX_INSTANCE_DEPTH {
            return Err(DecodeError::new(
                at as u64,
                DecodeErrorKind::Semantic(format!(
                    "positional instances nest more than {MAX_INSTANCE_DEPTH} deep (does one point back at itself?)"
                )),
            ));
        }
        // The same position as the instances enclosing it, again and again: a read of the
        // same bytes as the same thing (the root type held again at a fixed position), which
        // would nest to the depth limit with nothing new.
        let same = if self.inst_at.0 == at {
            self.inst_at.1.saturating_add(1)
        } else {
            0
        };
        if same >= MAX_SAME_OFFSET {
            return Err(DecodeError::new(
                at as u64,
                DecodeErrorKind::Semantic(format!(
                    "positional instances nest more than {MAX_SAME_OFFSET} deep at byte offset {at} (does one point back at itself?)"
                )),
            ));
        }
        if self.inst_bytes > instance_bytes_budget(self.buf.len()) {
            return Err(DecodeError::new(
                at as u64,
                DecodeErrorKind::Semantic(format!(
                    "positional instances read more than {} bytes of an input of {} byte(s) (do they overlap?)",
                    instance_bytes_budget(self.buf.len()),
                    self.buf.len()
                )),
            ));
        }
        self.inst_reads += 1;
        if self.inst_reads > instance_budget(self.buf.len()) {
            return Err(DecodeError::new(
                at as u64,
                DecodeErrorKind::Semantic(format!(
                    "more than {} positional instance reads for an input of {} byte(s) (do instances point back at each other?)",
                    instance_budget(self.buf.len()),
                    self.buf.len()
                )),
            ));
        }
        self.inst_depth += 1;
        let saved = Saved {
            at,
            inst_at: std::mem::replace(&mut self.inst_at, (at, same)),
            pos: self.pos,
            start: self.start,
            end: self.end,
            bits: self.bits,
            nbits: self.nbits,
        };
        self.pos = at;
        self.start = start;
        self.set_end(end);
        self.bits = 0;
        self.nbits = 0;
        Ok(saved)
    }

    /// Counts `n` bytes produced by a processed field read at byte `at` against the file's
    /// [`processed_budget`].
    ///
    /// Errors: `Semantic` at `at` once the processed bytes of the file pass the budget.
    pub fn charge_processed(&mut self, n: usize, at: u64) -> Result<(), DecodeError> {
        self.processed = self.processed.saturating_add(n as u64);
        if self.processed_base.saturating_add(self.processed) > self.processed_total {
            return Err(DecodeError::new(
                at,
                DecodeErrorKind::Semantic(format!(
                    "processed fields produced more than {} bytes for one file, its budget of 65,536 plus 1,032 per input byte (nested compression, or stored bytes shared by many instances?)",
                    self.processed_total,
                )),
            ));
        }
        Ok(())
    }

    /// The bytes processed fields may still produce within the file's [`processed_budget`]
    /// (what [`crate::io::unprocess_within`] is given).
    pub fn processed_room(&self) -> u64 {
        self.processed_total
            .saturating_sub(self.processed_base.saturating_add(self.processed))
    }

    /// This reader's share of the file's budget, for the reader of a processed field's
    /// bytes ([`ByteReader::sharing`]).
    pub fn processed_share(&self) -> ProcessedShare {
        ProcessedShare {
            total: self.processed_total,
            base: self.processed_base.saturating_add(self.processed),
        }
    }

    /// This reader (made over a processed field's bytes) with the budget of the reader that
    /// read the field: what it produces counts against what is left of the file's.
    pub fn sharing(mut self, share: ProcessedShare) -> Self {
        self.processed_total = share.total;
        self.processed_base = share.base;
        self
    }

    /// The bytes processed fields produced through this reader so far.
    pub fn processed_used(&self) -> u64 {
        self.processed
    }

    /// Counts `n` bytes that a reader made over a processed field's bytes produced (its
    /// [`ByteReader::processed_used`]), so that later processed fields see them.
    pub fn add_processed(&mut self, n: u64) {
        self.processed = self.processed.saturating_add(n);
    }

    /// Comes back from a positional instance read after [`ByteReader::enter_instance`].
    pub fn leave_instance(&mut self, saved: Saved) {
        self.pos_hi = self.pos_hi.max(self.pos);
        self.inst_bytes = self
            .inst_bytes
            .saturating_add(self.pos.saturating_sub(saved.at) as u64);
        self.inst_depth = self.inst_depth.saturating_sub(1);
        self.inst_at = saved.inst_at;
        self.pos = saved.pos;
        self.start = saved.start;
        self.set_end(saved.end);
        self.bits = saved.bits;
        self.nbits = saved.nbits;
    }

    /// The furthest byte of the stream read so far, by the `seq` or by a positional
    /// instance (absolute offset, one past the last byte).
    pub fn furthest_read(&self) -> usize {
        self.pos.max(self.pos_hi)
    }

    /// At the end of the root type's `seq`, in a schema with positional instances read on
    /// first use (`crate::lazy`), whose reach is not known yet: for the root read at the top
    /// (no instance or recursive type being read), every byte left in its stream, consumed (the
    /// root keeps them, and its writer puts them back under its instances); elsewhere as
    /// [`ByteReader::take_positional_tail`].
    pub fn take_lazy_tail(&mut self) -> &'a [u8] {
        if self.inst_depth == 0 && self.depth == 0 && self.nbits == 0 {
            let s = &self.buf[self.pos..self.end];
            self.pos = self.end;
            s
        } else {
            self.take_positional_tail()
        }
    }

    /// Takes the bytes from the reader's position to the furthest byte a positional instance
    /// read (none when no instance read past here): the root type ends there, and keeps them
    /// so that its writer puts back the bytes between and under its instances.
    pub fn take_positional_tail(&mut self) -> &'a [u8] {
        let hi = self.pos_hi.min(self.end);
        if hi > self.pos && self.nbits == 0 {
            let s = &self.buf[self.pos..hi];
            self.pos = hi;
            s
        } else {
            &[]
        }
    }
}

impl<'a, T: Tracer> ByteReader<'a, T> {
    /// Notes an `-sp-align` positional instance read from `from` to `to` (absolute), for
    /// [`ByteReader::check_packed_rest`].
    pub fn note_aligned(&mut self, from: u64, to: u64, align: u32) {
        self.aligned
            .push((from as usize, to.saturating_sub(from) as usize, align));
    }

    /// Where the notes of [`ByteReader::note_aligned`] stand: taken where a type with
    /// `-sp-end-zeros` starts.
    pub fn aligned_mark(&self) -> usize {
        self.aligned.len()
    }

    /// Drops the notes taken since `mark` (a reader that reads an instance again).
    pub fn drop_aligned_since(&mut self, mark: usize) {
        self.aligned.truncate(mark);
    }

    /// At the end of a type with `-sp-end-zeros` whose `seq` ended at byte `seq_end`: the
    /// `-sp-align` instances noted since `mark` (in the order read, which is the order the
    /// writer queues them) must each start where the writer places it (the first multiple
    /// of its alignment, from the stream's start, at or after the end of the one before, or
    /// of the `seq`), every byte between and after them up to that multiple must be zero,
    /// and `zeros` zero bytes must end the stream. The rest is then consumed, and the notes
    /// since `mark` dropped. This is what the type's writer writes from the value read, for
    /// instances that write back the bytes they read (numbers, bytes, strings): decode then
    /// encode is byte-identical, with nothing kept.
    ///
    /// Errors: `Semantic` at the first byte out of place (`crate::cbtk_columns::check_laid_out`
    /// gives the same for a CBTK chunk).
    pub fn check_packed_rest(
        &mut self,
        mark: usize,
        seq_end: usize,
        zeros: usize,
    ) -> Result<(), DecodeError> {
        let placed = self.aligned.split_off(mark.min(self.aligned.len()));
        check_packed(
            &self.buf[..self.end],
            self.start,
            seq_end,
            placed.into_iter(),
            zeros,
        )?;
        self.pos = self.end;
        Ok(())
    }
}

/// The check of [`ByteReader::check_packed_rest`] over `buf` (the stream's bytes up to its
/// end), the stream starting at `base`: the instances `placed` (absolute start, length,
/// alignment) in the writer's order after `seq_end`, zero bytes between and after them up
/// to each alignment, then `zeros` zero bytes and the end of `buf`.
///
/// Errors: `Semantic` at the first byte out of place, naming the byte found and the byte
/// the writer puts there.
pub fn check_packed(
    buf: &[u8],
    base: usize,
    seq_end: usize,
    placed: impl Iterator<Item = (usize, usize, u32)>,
    zeros: usize,
) -> Result<(), DecodeError> {
    let layout = |at: usize, what: String| {
        DecodeError::new(
            at as u64,
            DecodeErrorKind::Semantic(format!(
                "the bytes after the fields are not the layout the writer derives from the values ({what}): positional instances packed in order at their alignment, zero bytes between, then the trailing zero bytes"
            )),
        )
    };
    let bad = |at: usize, want: Option<u8>| {
        let show = |b: Option<u8>| b.map_or("the end".to_owned(), |b| format!("{b:02X}"));
        layout(
            at,
            format!(
                "{} here, {} derived",
                show(buf.get(at).copied()),
                show(want)
            ),
        )
    };
    let zero_until = |from: usize, to: usize| -> Result<(), DecodeError> {
        match (from..to).find(|&k| buf.get(k) != Some(&0)) {
            Some(k) => Err(bad(k, Some(0))),
            None => Ok(()),
        }
    };
    let up = |at: usize, a: usize| base + (at.saturating_sub(base)).div_ceil(a) * a;
    let mut end = seq_end;
    for (at, len, align) in placed {
        let a = align.max(1) as usize;
        let derived = up(end, a);
        if at != derived {
            zero_until(end, derived.min(at))?;
            return Err(layout(
                at.min(derived),
                format!("an instance at byte {at}, where the writer places it at byte {derived}"),
            ));
        }
        end = at + len;
        let padded = up(end, a);
        zero_until(end, padded)?;
        end = padded;
    }
    zero_until(end, end + zeros)?;
    if buf.len() > end + zeros {
        return Err(bad(end + zeros, None));
    }
    Ok(())
}

impl ByteWriter {
    /// `_io.pos` while writing: the bytes written since the start of the stream being written.
    #[inline]
    pub fn io_pos(&self) -> i128 {
        (self.origin + self.len()) as i128 - self.start as i128
    }

    /// Starts the substream of a sized field here; returns the outer start for
    /// [`ByteWriter::pop_io`].
    #[inline]
    pub fn push_io(&mut self) -> usize {
        let here = self.origin + self.len();
        std::mem::replace(&mut self.start, here)
    }

    /// Ends a substream started with [`ByteWriter::push_io`].
    #[inline]
    pub fn pop_io(&mut self, outer: usize) {
        self.start = outer;
    }

    /// A writer for the positional instance at byte `pos` of the stream being written (with
    /// `whole`, of the whole output): its bytes go there once laid out, and the instances it
    /// queues itself are placed in the same stream.
    ///
    /// Errors: `OutOfRange` when `pos` is negative or too large.
    pub fn instance_writer(&self, pos: i128, whole: bool) -> Result<ByteWriter, EncodeError> {
        let base = if whole { 0 } else { self.start };
        let at = usize::try_from(pos)
            .ok()
            .and_then(|p| p.checked_add(base))
            .ok_or_else(|| {
                EncodeError::new(EncodeErrorKind::OutOfRange {
                    value: pos.to_string(),
                    ty: "a position in the stream",
                })
            })?;
        let mut w = ByteWriter::new();
        w.origin = at;
        w.start = self.start;
        w.whole = whole;
        w.floor = self.floor;
        w.instance = true;
        Ok(w)
    }

    /// A writer to encode a positional instance whose position the writer derives once, to
    /// learn its bytes and where the instances it places itself go: after everything written
    /// or queued so far (with `reserved` bytes after this writer's own, the bytes the root
    /// type keeps after its `seq`), as they will when it is encoded again at its place
    /// ([`ByteWriter::derive_placed`], [`ByteWriter::placed_writer`]). With `whole`, an
    /// instance of the whole output (`io: _root._io`).
    pub fn probe_writer(&self, reserved: usize, whole: bool) -> ByteWriter {
        let mut w = ByteWriter::new();
        w.start = self.start;
        w.whole = whole;
        w.floor = self.frontier(reserved, whole);
        w.moves = true;
        w.instance = true;
        w
    }

    /// Where the writer places the positional instance encoded in `probe` (made by
    /// [`ByteWriter::probe_writer`]) and whether that is the place it was read at: as
    /// [`ByteWriter::derive_position_in`], but a moved instance also goes after the instances
    /// it places itself, so that a directory follows the entries it points at.
    ///
    /// Errors: as [`ByteWriter::derive_position`].
    pub fn derive_placed(
        &self,
        kept: Option<(i128, u64)>,
        probe: &ByteWriter,
        step: i128,
        offset: i128,
        reserved: usize,
        whole: bool,
    ) -> Result<(i128, bool), EncodeError> {
        let bytes = probe.as_bytes();
        let at = self.derive_position_in(kept, bytes, step, offset, reserved, whole)?;
        if kept.is_some_and(|(k, _)| k == at) {
            return Ok((at, true));
        }
        let base = if whole { 0 } else { self.start };
        let after = probe
            .placed
            .iter()
            .map(|p| p.at + p.bytes.len())
            .fold(0, usize::max)
            .saturating_sub(base) as i128;
        if at >= after {
            return Ok((at, false));
        }
        let n = (after.max(offset) - offset + step - 1) / step;
        Ok((n * step + offset, false))
    }

    /// The writer for the positional instance at `pos` whose position the writer chose
    /// ([`ByteWriter::derive_placed`]; `kept`: the place it was read at) and whose bytes are
    /// `len` long: the instances it places itself go where they went in its probe
    /// ([`ByteWriter::probe_writer`]), and, when it kept its place, after its own bytes.
    ///
    /// Errors: those of [`ByteWriter::instance_writer`].
    pub fn placed_writer(
        &self,
        pos: i128,
        kept: bool,
        len: usize,
        reserved: usize,
        whole: bool,
    ) -> Result<ByteWriter, EncodeError> {
        let mut w = self.instance_writer(pos, whole)?;
        w.floor = self.frontier(reserved, whole);
        if kept {
            w.floor = w.floor.max(w.origin.saturating_add(len));
        } else {
            w.moves = true;
        }
        Ok(w)
    }

    /// A writer for a trailer: a positional instance of the root type at `pos: _io.size - k`
    /// (the last `k` bytes of the file, such as a ZIP archive's end-of-central-directory
    /// record). It goes after everything else ([`ByteWriter::place_trailer`]), so the
    /// instances it places itself go after everything written or queued so far, including
    /// `reserved` bytes after the root's `seq` (the bytes the root type keeps, `__beyond`).
    pub fn trailer_writer(&self, reserved: usize) -> ByteWriter {
        let at = self.frontier(reserved, false);
        let mut w = ByteWriter::new();
        w.origin = at;
        w.start = self.start;
        w.floor = at;
        w.moves = true;
        w.instance = true;
        w
    }

    /// Queues the trailer written into `value` (made by [`ByteWriter::trailer_writer`]),
    /// `k` bytes long, zero-padded when its bytes are fewer, with the instances it queued
    /// itself. [`ByteWriter::lay_out_positional`] puts it at `read_at` (where a decoded value
    /// found it, from the start of the stream; 0 for a value built by hand) or, when the
    /// `seq` or another instance now reaches further, right after the furthest of them, and
    /// ends the output with it.
    ///
    /// Errors: `Semantic` when its bytes are more than `k`, or a trailer is queued already.
    pub fn place_trailer(
        &mut self,
        mut value: ByteWriter,
        k: i128,
        read_at: i128,
        what: &'static str,
    ) -> Result<(), EncodeError> {
        let bad = |m: String| EncodeError::new(EncodeErrorKind::Semantic(m));
        if self.placed.iter().any(|p| p.trailer) {
            return Err(bad(format!(
                "trailer `{what}`: a trailer is queued already, and only one can end the output"
            )));
        }
        value.align_to_byte();
        let n = value.buf.len();
        let k = usize::try_from(k)
            .ok()
            .filter(|k| n <= *k)
            .ok_or_else(|| {
                bad(format!(
                    "trailer `{what}` takes {n} byte(s), but its position leaves {k} at the end of the stream"
                ))
            })?;
        value.buf.resize(k, 0);
        let start = self.placed.len();
        self.queue(value, what, true);
        self.placed[start].trailer = true;
        self.placed[start].at = usize::try_from(read_at)
            .unwrap_or(0)
            .saturating_add(self.start);
        Ok(())
    }

    /// The first absolute offset after this writer's bytes (not counted when they move
    /// after what it places), `reserved` bytes after them, its floor and the instances it
    /// queued (of the whole output too when `whole`; never a trailer).
    fn frontier(&self, reserved: usize, whole: bool) -> usize {
        let own = if self.moves {
            0
        } else {
            self.origin + self.len()
        };
        self.placed
            .iter()
            .filter(|p| (whole || !p.whole) && !p.trailer && p.float.is_none() && p.slot.is_none())
            .map(|p| p.at + p.bytes.len())
            .fold((own + reserved).max(self.floor), usize::max)
    }

    /// Queues the positional instance written into `value` (made by
    /// [`ByteWriter::instance_writer`]) with the instances it queued itself; `what` is the
    /// instance's key path in the schema, named when it overlaps other bytes.
    pub fn place(&mut self, value: ByteWriter, what: &'static str) {
        self.queue(value, what, false);
    }

    /// As [`ByteWriter::place`], for an instance at a position the writer chose
    /// ([`ByteWriter::derive_position`]): the bytes between the end of the output and the
    /// instance, if any, are zero.
    pub fn place_derived(&mut self, value: ByteWriter, what: &'static str) {
        self.queue(value, what, true);
    }

    fn queue(&mut self, mut value: ByteWriter, what: &'static str, derived: bool) {
        let at = value.origin;
        let whole = value.whole;
        let mut inner = std::mem::take(&mut value.placed);
        // The numbers of aligned instances queued inside go where the value's bytes go.
        for p in &mut inner {
            if let Some(s) = &mut p.slot {
                s.at = s.at.saturating_add(at);
            }
        }
        let bytes = value.into_bytes();
        self.placed.push(Placement {
            at,
            bytes,
            what,
            whole,
            derived,
            float: None,
            trailer: false,
            slot: None,
        });
        self.placed.append(&mut inner);
    }

    /// Queues a positional instance whose position the writer chooses when the stream is
    /// laid out (`-sp-align`): `value` holds its bytes (made by
    /// [`ByteWriter::instance_writer`] at position 0, queuing nothing itself). Instances
    /// queued this way go in the order they were queued, each at the first position of the
    /// slot's form at or after everything before it (the bytes written in sequence, every
    /// instance at a position of its own, the aligned instances before it), followed by
    /// zero bytes up to the next multiple of the alignment; the slot's field is written
    /// then. `present` false (an instance whose `if` does not hold) queues nothing.
    pub fn place_aligned(
        &mut self,
        value: ByteWriter,
        slot: AlignedSlot,
        present: bool,
        what: &'static str,
    ) {
        if !present {
            return;
        }
        let at = self.start;
        let whole = false;
        let bytes = value.into_bytes();
        self.placed.push(Placement {
            at,
            bytes,
            what,
            whole,
            derived: true,
            float: None,
            trailer: false,
            slot: Some(slot),
        });
    }

    /// The number of positional instances queued so far: where a type that lays out its
    /// own (`-sp-end-zeros`) starts, for [`ByteWriter::end_with_zeros`].
    pub fn placed_mark(&self) -> usize {
        self.placed.len()
    }

    /// At the end of a type with `-sp-end-zeros`: lays out the positional instances queued
    /// since `mark` (see [`ByteWriter::lay_out_positional`]), then writes `zeros` zero
    /// bytes. The instances queued before `mark` stay queued.
    ///
    /// Errors: those of [`ByteWriter::lay_out_positional`].
    pub fn end_with_zeros(&mut self, mark: usize, zeros: usize) -> Result<(), EncodeError> {
        let mine = self.placed.split_off(mark.min(self.placed.len()));
        let earlier = std::mem::replace(&mut self.placed, mine);
        let laid = self.lay_out_positional(&[]);
        self.placed = earlier;
        laid?;
        self.buf.resize(self.buf.len() + zeros, 0);
        Ok(())
    }

    /// Gives every aligned instance (see [`ByteWriter::place_aligned`]) its position, in
    /// the order they were queued, pads it to its alignment and writes its field.
    fn resolve_aligned(&mut self, placed: &mut [Placement]) -> Result<(), EncodeError> {
        let mut end = placed
            .iter()
            .filter(|p| p.slot.is_none() && !p.whole)
            .map(|p| p.at + p.bytes.len())
            .fold(self.buf.len(), usize::max);
        for p in placed.iter_mut() {
            let Some(s) = p.slot else {
                continue;
            };
            let base = p.at;
            let bad = |v: String| {
                EncodeError::new(EncodeErrorKind::OutOfRange {
                    value: v,
                    ty: "a position in the stream",
                })
                .in_field(s.member)
            };
            let from = end.saturating_sub(base) as i128;
            let align = i128::from(s.align.max(1));
            // The first position at or after `from` of the form offset + step × n (n ≥ 0)
            // that is a multiple of `align`: one of the next `align` candidates, if any.
            let first = (from.max(s.offset) - s.offset + s.step - 1) / s.step;
            let pos = (first..first + align)
                .map(|n| s.offset + s.step * n)
                .find(|q| q % align == 0)
                .ok_or_else(|| {
                    bad(format!(
                        "no multiple of {align} of the form {} + {} x n",
                        s.offset, s.step
                    ))
                })?;
            let pad = (align - p.bytes.len() as i128 % align) % align;
            p.bytes.resize(p.bytes.len() + pad as usize, 0);
            p.at = base + usize::try_from(pos).map_err(|_| bad(pos.to_string()))?;
            end = p.at + p.bytes.len();
            let n = (pos - s.offset) / s.step;
            let bits = u32::from(s.width) * 8;
            let (lo, hi) = if s.signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            let (lo, hi) = (
                s.min.map_or(lo, |m| m.max(lo)),
                s.max.map_or(hi, |m| m.min(hi)),
            );
            if n < lo || n > hi {
                return Err(EncodeError::new(EncodeErrorKind::OutOfRange {
                    value: n.to_string(),
                    ty: "the field's range",
                })
                .in_field(s.member));
            }
            let le = n.to_le_bytes();
            let mut b = le[..s.width as usize].to_vec();
            if s.big {
                b.reverse();
            }
            self.patch_bytes(s.at, &b)
                .map_err(|e| e.in_field(s.member))?;
        }
        Ok(())
    }

    /// Whether this writer encodes a positional instance on its own (a trailer, an instance
    /// placed or probed): a positional instance of a nested type written into it is placed
    /// as it is written ([`ByteWriter::derive_placed`]) rather than queued with
    /// [`ByteWriter::place_floating`], whose offset field must be in the root's output.
    pub fn in_instance(&self) -> bool {
        self.instance
    }

    /// Queues the positional instance written into `value` (made by
    /// [`ByteWriter::instance_writer`] at any position) of a type that is not the root, whose
    /// position the writer derives (`pos: ofs_body` in the type of a list element): its place
    /// is chosen when the root lays out the output ([`ByteWriter::lay_out_positional`]), once
    /// every byte and every other instance is known, by the rule of
    /// [`ByteWriter::derive_position`], and the number `f` describes is then written over the
    /// bytes written for it. Instances queued by `value` itself keep their own positions.
    pub fn place_floating(&mut self, mut value: ByteWriter, what: &'static str, f: Floating) {
        let kept = f.kept.and_then(|(p, n)| {
            usize::try_from(p)
                .ok()
                .and_then(|p| p.checked_add(self.start))
                .map(|a| (a, n))
        });
        let float = FloatAt {
            f,
            kept,
            start: self.start,
            member_at: self.origin.saturating_add(f.member_at),
        };
        let mut inner = std::mem::take(&mut value.placed);
        let bytes = value.into_bytes();
        self.placed.push(Placement {
            at: 0,
            bytes,
            what,
            whole: false,
            derived: true,
            float: Some(float),
            trailer: false,
            slot: None,
        });
        self.placed.append(&mut inner);
    }

    /// Chooses the place of each instance queued by [`ByteWriter::place_floating`], in the
    /// order queued, and writes its number: a kept place while its bytes fit there and agree
    /// with every instance placed so far, else the first position of the form `offset + step
    /// × n` at or after the end of the output and of every instance placed so far.
    fn resolve_floating(
        &mut self,
        placed: &mut [Placement],
        seq_end: usize,
    ) -> Result<(), EncodeError> {
        let fixed = |p: &Placement| !p.whole && p.float.is_none() && p.slot.is_none();
        for i in 0..placed.len() {
            let Some(fa) = placed[i].float else {
                continue;
            };
            let (step, offset) = (fa.f.step, fa.f.offset);
            let bytes = &placed[i].bytes;
            let agrees = |at: usize| {
                placed
                    .iter()
                    .filter(|p| fixed(p))
                    .all(|p| overlap_agrees(at, bytes, p.at, &p.bytes))
            };
            let bad = |v: String| {
                EncodeError::new(EncodeErrorKind::OutOfRange {
                    value: v,
                    ty: "a position in the stream",
                })
            };
            if step <= 0 {
                return Err(bad(format!("a step of {step}")).in_field(placed[i].what));
            }
            let at = match fa.kept {
                Some((a, read)) if bytes.len() as u64 <= read && agrees(a) => a,
                _ => {
                    let end = placed
                        .iter()
                        .filter(|p| fixed(p))
                        .map(|p| p.at.saturating_add(p.bytes.len()))
                        .fold(self.buf.len(), usize::max);
                    let rel = end.saturating_sub(fa.start) as i128;
                    let from = rel.max(offset) - offset;
                    let n = from.checked_add(step - 1).map(|x| x / step);
                    n.and_then(|n| n.checked_mul(step))
                        .and_then(|x| x.checked_add(offset))
                        .and_then(|x| usize::try_from(x).ok())
                        .and_then(|x| x.checked_add(fa.start))
                        .ok_or_else(|| bad(end.to_string()).in_field(placed[i].what))?
                }
            };
            let number = ((at - fa.start) as i128 - offset) / step;
            let b = fa.f.number_bytes(number)?;
            let m = fa.member_at;
            let end = m.saturating_add(b.len());
            // The field is in the bytes written in sequence or in an instance (which lies
            // over the kept bytes after them).
            let holder = placed.iter_mut().find(|p| {
                !p.whole && p.float.is_none() && p.at <= m && end <= p.at + p.bytes.len()
            });
            match holder {
                Some(h) if end > seq_end => {
                    let k = m - h.at;
                    h.bytes[k..k + b.len()].copy_from_slice(&b);
                }
                _ if end <= seq_end => self.buf[m..end].copy_from_slice(&b),
                _ => {
                    return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                        "`{}`, the position of `{}`, is not in the output",
                        fa.f.member, placed[i].what
                    ))))
                }
            }
            placed[i].at = at;
            placed[i].float = None;
        }
        Ok(())
    }
    /// Where the writer places a positional instance (its encoded `bytes`) whose position it
    /// derives (`pos: ofs_index`, `pos: block * 64`): the position in the stream being
    /// written, from its start, of the form `offset + step × n` (n ≥ 0). A decoded value keeps
    /// the place it was read at (`kept`: position and the number of bytes read there) while
    /// that place is still free and its bytes still fit there: no more bytes than were read,
    /// and none that differ from those of an instance queued so far over the same place.
    /// Otherwise (a value built by hand, or one that grew or was overtaken) it goes at the
    /// first such position at or after everything written so far: the bytes written in
    /// sequence, `reserved` bytes after them (the bytes the root type keeps after its `seq`,
    /// which other instances may keep their places in) and every instance queued so far.
    ///
    /// Errors: `OutOfRange` when `step` is not positive or the position does not fit.
    pub fn derive_position(
        &self,
        kept: Option<(i128, u64)>,
        bytes: &[u8],
        step: i128,
        offset: i128,
        reserved: usize,
    ) -> Result<i128, EncodeError> {
        self.derive_position_in(kept, bytes, step, offset, reserved, false)
    }

    /// As [`ByteWriter::derive_position`], for an instance of the stream being written or,
    /// with `whole`, of the whole output (`io: _root._io`): the position is then from the
    /// start of the output, and every instance queued so far counts.
    ///
    /// Errors: as [`ByteWriter::derive_position`].
    pub fn derive_position_in(
        &self,
        kept: Option<(i128, u64)>,
        bytes: &[u8],
        step: i128,
        offset: i128,
        reserved: usize,
        whole: bool,
    ) -> Result<i128, EncodeError> {
        let base = if whole { 0 } else { self.start };
        let bad = |v: String| {
            EncodeError::new(EncodeErrorKind::OutOfRange {
                value: v,
                ty: "a position in the stream",
            })
        };
        if step <= 0 {
            return Err(bad(format!("a step of {step}")));
        }
        if let Some((at, read)) = kept {
            let fits = u64::try_from(bytes.len()).is_ok_and(|n| n <= read);
            let abs = usize::try_from(at).ok().and_then(|a| a.checked_add(base));
            if abs.is_some_and(|a| fits && self.is_free(a, bytes, whole)) {
                return Ok(at);
            }
        }
        let end = self.frontier(reserved, whole);
        let end = end.saturating_sub(base) as i128;
        let from = end.max(offset) - offset;
        let n = from
            .checked_add(step - 1)
            .map(|x| x / step)
            .ok_or_else(|| bad(end.to_string()))?;
        n.checked_mul(step)
            .and_then(|x| x.checked_add(offset))
            .ok_or_else(|| bad(end.to_string()))
    }

    /// Whether `bytes` at absolute offset `at` agree with every instance queued so far that
    /// they overlap. (Bytes written in sequence are not asked: there an instance may lie over
    /// bytes its type keeps, such as the unread tail of a lenient sized type, and the lay-out
    /// refuses it, naming both, when they differ.)
    fn is_free(&self, at: usize, bytes: &[u8], whole: bool) -> bool {
        let end = at.saturating_add(bytes.len());
        let agrees = |from: usize, other: &[u8]| {
            let lo = at.max(from);
            let hi = end.min(from.saturating_add(other.len()));
            lo >= hi || bytes[lo - at..hi - at] == other[lo - from..hi - from]
        };
        self.placed
            .iter()
            .filter(|p| (whole || !p.whole) && !p.trailer && p.float.is_none() && p.slot.is_none())
            .all(|p| agrees(p.at, &p.bytes))
    }

    /// Lays out every queued positional instance (called by the root type at its end, after
    /// `kept`, the bytes its reader found after its `seq` up to the furthest instance, was
    /// written), in order of position. Bytes before `kept` and bytes of an earlier instance
    /// must agree with the instance's bytes; `kept` bytes are replaced; an instance may go on
    /// past the end of the output (which grows), but may not start after it, since the bytes
    /// between would be made up.
    ///
    /// A trailer ([`ByteWriter::place_trailer`]) comes last, where it was read or right
    /// after the furthest byte of the `seq` and of the other instances, and ends the output.
    ///
    /// Errors: `Semantic` naming both instances (or the instance and the fields written in
    /// sequence) and the byte offset where they disagree, or the instance that starts after
    /// the end of the output.
    ///
    /// In the writer of a positional instance placed after the output's first byte (the root
    /// type held again at a position, [`ByteWriter::instance_writer`]), nothing is laid out:
    /// its queued instances, at positions of the whole stream, go with it to the writer it is
    /// placed in ([`ByteWriter::place`]), which lays them out.
    pub fn lay_out_positional(&mut self, kept: &[u8]) -> Result<(), EncodeError> {
        self.align_to_byte();
        let seq_end = self.buf.len();
        self.buf.extend_from_slice(kept);
        if self.placed.is_empty() || self.origin != 0 {
            return Ok(());
        }
        let (trailers, mut placed): (Vec<_>, Vec<_>) = std::mem::take(&mut self.placed)
            .into_iter()
            .partition(|p| p.trailer);
        self.resolve_floating(&mut placed, seq_end)?;
        self.resolve_aligned(&mut placed)?;
        // An absent instance (`if` false) or one that takes no bytes has nothing to lay out.
        placed.retain(|p| !p.bytes.is_empty());
        placed.sort_by_key(|p| p.at);
        // For each byte from `seq_end` on: 0 while only kept bytes are there, else the
        // placement's index + 1.
        let mut owner: Vec<u32> = vec![0; self.buf.len() - seq_end];
        for (k, p) in placed.iter().enumerate() {
            if p.derived && p.at > self.buf.len() {
                self.buf.resize(p.at, 0);
                owner.resize(p.at - seq_end, 0);
            }
            if p.at > self.buf.len() {
                return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                    "positional instance `{}` starts at byte offset {}, after the end of the output ({} bytes): the bytes between are not known",
                    p.what,
                    p.at,
                    self.buf.len()
                ))));
            }
            let end = p.at + p.bytes.len();
            if end > self.buf.len() {
                self.buf.resize(end, 0);
                owner.resize(end - seq_end, 0);
            }
            for (i, &b) in p.bytes.iter().enumerate() {
                let at = p.at + i;
                let by = if at < seq_end {
                    Some(None)
                } else {
                    match owner[at - seq_end] {
                        0 => None,
                        o => Some(Some(placed[o as usize - 1].what)),
                    }
                };
                match by {
                    Some(other) if self.buf[at] != b => {
                        let other = match other {
                            Some(w) => format!("`{w}`"),
                            None => "the fields written in sequence".to_owned(),
                        };
                        return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                            "positional instance `{}` overlaps {other} at byte offset {at}, and their bytes differ ({:02X} there, {b:02X} from the instance)",
                            p.what, self.buf[at],
                        ))));
                    }
                    Some(_) => {}
                    None => {
                        self.buf[at] = b;
                        owner[at - seq_end] = k as u32 + 1;
                    }
                }
            }
        }
        // A trailer goes where it was read while that place is free: nothing (the `seq`, an
        // instance) reaching past its end, and the bytes written in sequence or by an
        // instance over it the same as its own there (a file read keeps its layout, where
        // the trailer may share bytes with the last field or an instance); else after the
        // `seq` and every other instance. It ends the output (kept bytes past it are dropped).
        for t in trailers {
            let reach = placed
                .iter()
                .map(|p| p.at + p.bytes.len())
                .fold(seq_end, usize::max);
            let over_seq = t.at.min(seq_end)..seq_end.min(t.at + t.bytes.len());
            let free = reach <= t.at + t.bytes.len()
                && over_seq
                    .clone()
                    .all(|k| self.buf.get(k) == t.bytes.get(k - t.at))
                && placed
                    .iter()
                    .all(|p| overlap_agrees(t.at, &t.bytes, p.at, &p.bytes));
            let at = if free { t.at } else { reach.max(t.at) };
            self.buf.resize(at, 0);
            self.buf.extend_from_slice(&t.bytes);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_relative_to_the_stream_and_checked() {
        let buf = [1u8, 2, 3, 4, 5, 6];
        let mut r = ByteReader::new(&buf);
        r.take(1).unwrap();
        let outer = r.push_limit(4).unwrap();
        assert_eq!((r.io_pos(), r.io_size()), (0, 4));
        let s = r.enter_instance(2, false).unwrap();
        assert_eq!(
            r.read_u8().unwrap(),
            4,
            "byte 2 of the substream that starts at 1"
        );
        r.leave_instance(s);
        assert_eq!(r.io_pos(), 0, "back where it was");
        let s = r.enter_instance(0, true).unwrap();
        assert_eq!(r.read_u8().unwrap(), 1, "`_root._io` is the whole input");
        r.leave_instance(s);
        let e = r.enter_instance(5, false).unwrap_err();
        assert_eq!(e.offset, 5, "at the end of the substream (bytes 1..5)");
        assert!(matches!(e.kind, DecodeErrorKind::UnexpectedEof { .. }));
        assert!(r.enter_instance(-1, false).is_err());
        r.pop_limit_skip(outer).unwrap();
        assert_eq!(r.offset(), 5);
    }

    #[test]
    fn instance_reads_are_bounded() {
        let buf = [0u8; 4];
        let mut r = ByteReader::new(&buf);
        let budget = instance_budget(buf.len());
        for _ in 0..budget {
            let s = r.enter_instance(0, false).unwrap();
            r.leave_instance(s);
        }
        let e = r.enter_instance(0, false).unwrap_err();
        assert!(matches!(e.kind, DecodeErrorKind::Semantic(_)), "{e}");
    }

    fn floating(kept: Option<(i128, u64)>, step: i128, width: usize) -> Floating {
        Floating {
            kept,
            step,
            offset: 0,
            member_at: 0,
            width,
            signed: false,
            big_endian: true,
            ty: if width == 1 { "u8" } else { "u16" },
            member: "ofs",
        }
    }

    #[test]
    fn a_floating_instance_is_placed_once_everything_is_written() {
        // The number at byte 0 (u16 big-endian), the instance queued before a byte written
        // after it, on a 4-byte step: it goes after that byte, at 4, block 1.
        let mut w = ByteWriter::new();
        w.write_bytes(&[0xff, 0xff]);
        let mut i = w.instance_writer(0, false).unwrap();
        i.write_bytes(b"abc");
        w.place_floating(i, "types.t.instances.x", floating(None, 4, 2));
        w.write_bytes(&[9]);
        w.lay_out_positional(&[]).unwrap();
        assert_eq!(w.into_bytes(), [0, 1, 9, 0, b'a', b'b', b'c']);
        // A kept place that its bytes still fit is kept, over the kept bytes.
        let mut w = ByteWriter::new();
        w.write_bytes(&[0, 0, 9]);
        let mut i = w.instance_writer(0, false).unwrap();
        i.write_bytes(b"ab");
        w.place_floating(i, "types.t.instances.x", floating(Some((4, 3)), 1, 2));
        w.lay_out_positional(&[0xee, 1, 2, 3]).unwrap();
        assert_eq!(w.into_bytes(), [0, 4, 9, 0xee, b'a', b'b', 3]);
        // One that grew goes after everything.
        let mut w = ByteWriter::new();
        w.write_bytes(&[0, 0, 9]);
        let mut i = w.instance_writer(0, false).unwrap();
        i.write_bytes(b"abcd");
        w.place_floating(i, "types.t.instances.x", floating(Some((4, 3)), 1, 2));
        w.lay_out_positional(&[0xee, 1, 2, 3]).unwrap();
        assert_eq!(
            w.into_bytes(),
            [0, 7, 9, 0xee, 1, 2, 3, b'a', b'b', b'c', b'd']
        );
        // A number that does not fit its field is refused, naming it.
        let mut w = ByteWriter::new();
        w.write_bytes(&[0; 300]);
        let mut i = w.instance_writer(0, false).unwrap();
        i.write_bytes(b"a");
        w.place_floating(i, "types.t.instances.x", floating(None, 1, 1));
        let e = w.lay_out_positional(&[]).unwrap_err().to_string();
        assert!(
            e.contains("ofs") && e.contains("300") && e.contains("u8"),
            "{e}"
        );
    }

    #[test]
    fn an_instance_may_not_start_after_the_output() {
        let mut w = ByteWriter::new();
        w.write_u8(7);
        let mut i = w.instance_writer(3, false).unwrap();
        i.write_u8(9);
        w.place(i, "instances.late");
        let e = w.lay_out_positional(&[]).unwrap_err().to_string();
        assert!(
            e.contains(
                "`instances.late` starts at byte offset 3, after the end of the output (1 bytes)"
            ),
            "{e}"
        );
        // Kept bytes cover the gap: the instance replaces what they hold there.
        let mut w = ByteWriter::new();
        w.write_u8(7);
        let mut i = w.instance_writer(3, false).unwrap();
        i.write_u8(9);
        w.place(i, "instances.late");
        w.lay_out_positional(&[1, 2, 3]).unwrap();
        assert_eq!(w.into_bytes(), [7, 1, 2, 9]);
    }

    #[test]
    fn derived_positions_keep_their_place_or_follow_everything() {
        let mut w = ByteWriter::new();
        w.write_bytes(&[1, 2, 3, 4, 5]);
        // Built by hand: after the 5 bytes written, on the step from the offset.
        assert_eq!(w.derive_position(None, &[9; 4], 1, 0, 0).unwrap(), 5);
        assert_eq!(w.derive_position(None, &[9; 4], 4, 0, 0).unwrap(), 8);
        assert_eq!(w.derive_position(None, &[9; 4], 1, 16, 0).unwrap(), 16);
        assert_eq!(w.derive_position(None, &[9; 4], 8, 2, 0).unwrap(), 10);
        // After the kept bytes (`reserved`) and the instances queued so far.
        assert_eq!(w.derive_position(None, &[9], 1, 0, 3).unwrap(), 8);
        let mut i = w.instance_writer(6, false).unwrap();
        i.write_bytes(&[8, 8, 8]);
        w.place_derived(i, "instances.a");
        assert_eq!(w.derive_position(None, &[9], 1, 0, 0).unwrap(), 9);
        // Decoded: kept while no longer than read and agreeing with the queued instance.
        assert_eq!(
            w.derive_position(Some((6, 3)), &[8, 8], 1, 0, 0).unwrap(),
            6
        );
        assert_eq!(
            w.derive_position(Some((6, 1)), &[8, 8], 1, 0, 0).unwrap(),
            9
        );
        assert_eq!(
            w.derive_position(Some((6, 3)), &[7, 7], 1, 0, 0).unwrap(),
            9
        );
        assert!(w.derive_position(None, &[9], 0, 0, 0).is_err());
        // The gap before a derived instance is zero.
        let mut i = w.instance_writer(12, false).unwrap();
        i.write_u8(6);
        w.place_derived(i, "instances.b");
        w.lay_out_positional(&[]).unwrap();
        assert_eq!(w.into_bytes(), [1, 2, 3, 4, 5, 0, 8, 8, 8, 0, 0, 0, 6]);
    }

    #[test]
    fn a_moved_instance_goes_after_the_instances_it_places() {
        let mut w = ByteWriter::new();
        w.write_bytes(&[1, 2, 3]);
        // A directory that grew to 4 bytes (read at 3, 2 bytes long) and an entry of it that
        // moved too (2 bytes): the entry goes first.
        let mut probe = w.probe_writer(0, false);
        probe.write_bytes(&[4, 4, 4, 4]);
        let at = probe.derive_position(None, &[6, 6], 1, 0, 0).unwrap();
        assert_eq!(
            at, 3,
            "after the 3 bytes written, the directory's own aside"
        );
        let mut e = probe.placed_writer(at, false, 2, 0, false).unwrap();
        e.write_bytes(&[6, 6]);
        probe.place_derived(e, "instances.dir.instances.entry");
        let (pos, kept) = w
            .derive_placed(Some((3, 2)), &probe, 4, 0, 0, false)
            .unwrap();
        assert_eq!((pos, kept), (8, false), "on its step of 4, after the entry");
        // Encoded again at its place, the entry goes where it went in the probe.
        let d = w.placed_writer(pos, kept, 4, 0, false).unwrap();
        assert_eq!(d.derive_position(None, &[6, 6], 1, 0, 0).unwrap(), 3);
        // Kept: what it places goes after it.
        let d = w.placed_writer(3, true, 4, 0, false).unwrap();
        assert_eq!(d.derive_position(None, &[6, 6], 1, 0, 0).unwrap(), 7);
    }

    #[test]
    fn a_trailer_ends_the_output_and_what_it_places_goes_before_it() {
        let mut w = ByteWriter::new();
        w.write_bytes(&[1, 2]);
        // Kept bytes (the root's `__beyond`: 6 bytes, an old trailer at 4..6).
        let mut t = w.trailer_writer(6);
        t.write_u8(0xee);
        // An instance the trailer places goes after everything so far, its own bytes aside.
        let at = t.derive_position(None, &[7, 7], 1, 0, 0).unwrap();
        assert_eq!(at, 8);
        let mut i = t.placed_writer(at, true, 2, 0, false).unwrap();
        i.write_bytes(&[7, 7]);
        // What that instance places in turn goes after its bytes when it kept its place.
        assert_eq!(i.derive_position(None, &[5], 1, 0, 0).unwrap(), 10);
        t.place_derived(i, "instances.t.instances.dir");
        w.place_trailer(t, 2, 6, "instances.t").unwrap();
        w.lay_out_positional(&[3, 3, 3, 3, 9, 9]).unwrap();
        assert_eq!(w.into_bytes(), [1, 2, 3, 3, 3, 3, 9, 9, 7, 7, 0xee, 0]);
        // Where it was read while nothing reaches further, the kept bytes before it kept.
        let mut w = ByteWriter::new();
        let t = w.trailer_writer(3);
        w.place_trailer(t, 1, 2, "instances.t").unwrap();
        w.lay_out_positional(&[3, 3, 9]).unwrap();
        assert_eq!(w.into_bytes(), [3, 3, 0]);
        // Built by hand: right after the rest; kept bytes past it are dropped.
        let mut w = ByteWriter::new();
        let t = w.trailer_writer(0);
        w.place_trailer(t, 1, 0, "instances.t").unwrap();
        w.lay_out_positional(&[]).unwrap();
        assert_eq!(w.into_bytes(), [0]);
        // More bytes than the position leaves are refused; so is a second trailer.
        let mut w = ByteWriter::new();
        let mut t = w.trailer_writer(0);
        t.write_bytes(&[1, 2, 3]);
        assert!(w.place_trailer(t, 2, 0, "instances.t").is_err());
        let t = w.trailer_writer(0);
        w.place_trailer(t, 2, 0, "instances.t").unwrap();
        let t = w.trailer_writer(0);
        assert!(w.place_trailer(t, 2, 0, "instances.u").is_err());
    }
}

/// Positional instances with `io: value._io`: read from, and checked against, the substream a
/// user-type value was read from. Generated code rebuilds that substream by writing the value
/// again (a sized value keeps what its type leaves unread, and a processed one is the
/// processed bytes, so its encoding is exactly the substream its reader saw).
impl<'a, T: Tracer> ByteReader<'a, T> {
    /// A reader over `stream` (another value's substream, rebuilt), for a positional
    /// instance read from it. It keeps this reader's nesting of positional instances, so
    /// that instances reading each other's streams stay within [`MAX_INSTANCE_DEPTH`].
    /// Offsets in its errors count from the start of `stream`.
    pub fn foreign_stream<'b>(&self, stream: &'b [u8]) -> ByteReader<'b, crate::io::NoTrace> {
        let mut r = ByteReader::new(stream);
        r.inst_depth = self.inst_depth;
        r
    }

    /// The decode error for a value whose substream cannot be rebuilt (its writer refused
    /// it): `Semantic` at this reader's offset, naming the value (`io`, as written).
    #[cold]
    pub fn foreign_stream_error(&self, io: &str, e: EncodeError) -> DecodeError {
        DecodeError::new(
            self.offset(),
            DecodeErrorKind::Semantic(format!(
                "`{io}._io`: the stream of `{io}` cannot be rebuilt: {e}"
            )),
        )
    }
}

impl ByteWriter {
    /// A writer for a positional instance at byte `pos` of another value's substream
    /// (`io: value._io`); pass it to [`ByteWriter::check_in_stream`] once written.
    ///
    /// Errors: `OutOfRange` when `pos` is negative or too large.
    pub fn foreign_instance_writer(pos: i128) -> Result<ByteWriter, EncodeError> {
        let at = usize::try_from(pos).map_err(|_| {
            EncodeError::new(EncodeErrorKind::OutOfRange {
                value: pos.to_string(),
                ty: "a position in the stream",
            })
        })?;
        let mut w = ByteWriter::new();
        w.origin = at;
        Ok(w)
    }

    /// Checks that the positional instance written into `value` (made by
    /// [`ByteWriter::foreign_instance_writer`]), and the instances it queued itself, agree
    /// with `stream`, the substream of the value named in `io: <value>._io` as that value
    /// writes it. The instance is not written anywhere else: its bytes are the value's.
    ///
    /// Errors: `Semantic` naming the instance (`what`), the stream (`io`) and the byte offset
    /// in the stream where they differ or where the instance would run past its end.
    pub fn check_in_stream(
        mut value: ByteWriter,
        stream: &[u8],
        what: &'static str,
        io: &'static str,
    ) -> Result<(), EncodeError> {
        let at = value.origin;
        let mut all = std::mem::take(&mut value.placed);
        all.push(Placement {
            at,
            bytes: value.into_bytes(),
            what,
            whole: false,
            derived: false,
            float: None,
            trailer: false,
            slot: None,
        });
        for p in all {
            let found = stream.get(p.at..p.at.saturating_add(p.bytes.len()));
            match found {
                Some(f) if f == p.bytes.as_slice() => {}
                Some(f) => {
                    let k = f.iter().zip(&p.bytes).take_while(|(a, b)| a == b).count();
                    return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                        "positional instance `{}` (io: `{io}._io`) differs from the bytes of `{io}` at byte offset {} of its stream",
                        p.what,
                        p.at + k
                    ))));
                }
                None => {
                    return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                        "positional instance `{}` (io: `{io}._io`) at byte offset {} runs past the end of the {} byte(s) of `{io}`",
                        p.what,
                        p.at,
                        stream.len()
                    ))))
                }
            }
        }
        Ok(())
    }
}

/// `_io.pos` of a writer as it will be once more bytes are written (see
/// [`ByteWriter::pos_after`]).
#[derive(Debug, Clone, Copy)]
pub struct PosAfter {
    pos: i128,
}

impl PosAfter {
    /// `_io.pos` at that point: bytes from the start of the stream being written.
    pub fn io_pos(&self) -> i128 {
        self.pos
    }
}

impl ByteWriter {
    /// `_io.pos` as it will be after `n` more bytes. A processed field's processor arguments
    /// are evaluated there on write, since Kaitai Struct's readers evaluate them after taking
    /// the field's stored bytes (`process: xor(_io.pos)` is keyed by the position after them).
    pub fn pos_after(&self, n: usize) -> PosAfter {
        PosAfter {
            pos: self.io_pos() + n as i128,
        }
    }
}

/// A stream as a value of the expression language (`type: io` params, `value._io`, `_io`,
/// `c ? a._io : b._io`): the stream's position and size in bytes, which is what its members
/// `pos`, `size` and `eof` give. It holds no bytes: a value read in a sized field keeps the
/// position and size its stream had when its `seq` had been read (the generated member
/// `__io_end`), and `_io` of the type being read is the reader's position and stream size
/// at that point. So an `io` value costs two integers, whatever the size of the stream.
///
/// In the dynamic view ([`crate::reflect::Reflect`]) it is a value of type `io` with the
/// members `pos`, `size` and `eof`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Stream {
    /// The position in the stream, in bytes from its start (`_io.pos`).
    pub pos: i128,
    /// The stream's size in bytes (`_io.size`).
    pub size: i128,
}

impl Stream {
    /// The stream kept as a generated type's `__io_end` member: `(pos, size)`.
    #[inline]
    pub fn of(io_end: (i128, i128)) -> Stream {
        Stream {
            pos: io_end.0,
            size: io_end.1,
        }
    }

    /// `_io.eof`: no byte left after the position.
    #[inline]
    pub fn eof(&self) -> bool {
        self.pos >= self.size
    }
}

impl<'a, T: Tracer> ByteReader<'a, T> {
    /// `_io` of the type being read as a value: the position and size of the stream.
    #[inline]
    pub fn io_stream(&self) -> Stream {
        Stream {
            pos: self.io_pos(),
            size: self.io_size(),
        }
    }
}

impl crate::reflect::Reflect for Stream {
    fn schema_type(&self) -> &'static str {
        "io"
    }

    fn member(&self, name: &str) -> Option<crate::reflect::Value<'_>> {
        use crate::reflect::Value;
        match name {
            "pos" => Some(Value::Int(self.pos)),
            "size" => Some(Value::Int(self.size)),
            "eof" => Some(Value::Bool(self.eof())),
            _ => None,
        }
    }

    fn member_names(&self) -> &'static [&'static str] {
        &["pos", "size", "eof"]
    }
}

impl crate::reflect::ToValue for Stream {
    fn to_value(&self) -> crate::reflect::Value<'_> {
        crate::reflect::Value::Struct(self)
    }
}
