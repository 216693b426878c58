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
//! Reading is bounded: instances nest at most [`MAX_INSTANCE_DEPTH`] deep and one decode reads
//! at most [`instance_budget`] of them.

use crate::io::{
    ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, Placement,
    Tracer,
};

pub use crate::limits::{
    instance_budget, instance_bytes_budget, processed_budget, MAX_INSTANCE_DEPTH,
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
    pos: usize,
    start: usize,
    end: usize,
    bits: u8,
    nbits: u8,
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
        Ok(w)
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
        let bytes = value.into_bytes();
        self.placed.push(Placement {
            at,
            bytes,
            what,
            whole,
            derived,
        });
        self.placed.append(&mut inner);
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
            let abs = usize::try_from(at)
                .ok()
                .and_then(|a| a.checked_add(self.start));
            if abs.is_some_and(|a| fits && self.is_free(a, bytes)) {
                return Ok(at);
            }
        }
        let here = self.origin + self.len() + reserved;
        let end = self
            .placed
            .iter()
            .filter(|p| !p.whole)
            .map(|p| p.at + p.bytes.len())
            .fold(here, usize::max);
        let end = end.saturating_sub(self.start) as i128;
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
    fn is_free(&self, at: usize, bytes: &[u8]) -> bool {
        let end = at.saturating_add(bytes.len());
        let agrees = |from: usize, other: &[u8]| {
            let lo = at.max(from);
            let hi = end.min(from.saturating_add(other.len()));
            lo >= hi || bytes[lo - at..hi - at] == other[lo - from..hi - from]
        };
        self.placed
            .iter()
            .filter(|p| !p.whole)
            .all(|p| agrees(p.at, &p.bytes))
    }

    /// Lays out every queued positional instance (called by the root type at its end, after
    /// `kept`, the bytes its reader found after its `seq` up to the furthest instance, was
    /// written), in order of position. Bytes before `kept` and bytes of an earlier instance
    /// must agree with the instance's bytes; `kept` bytes are replaced; an instance may go on
    /// past the end of the output (which grows), but may not start after it, since the bytes
    /// between would be made up.
    ///
    /// Errors: `Semantic` naming both instances (or the instance and the fields written in
    /// sequence) and the byte offset where they disagree, or the instance that starts after
    /// the end of the output.
    pub fn lay_out_positional(&mut self, kept: &[u8]) -> Result<(), EncodeError> {
        self.align_to_byte();
        let seq_end = self.buf.len();
        self.buf.extend_from_slice(kept);
        if self.placed.is_empty() {
            return Ok(());
        }
        let mut placed = std::mem::take(&mut self.placed);
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
