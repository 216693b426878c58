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
//! instance's bytes, else the writer refuses naming both; past the end the output grows, with
//! the bytes the reader found there (kept by the root type) under the instances.

use crate::io::{
    ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, Tracer,
};

/// How deep positional instances may nest (an instance whose type has an instance whose
/// type has one, ...). Deeper is refused as `Semantic`, so that a chain of positions in
/// hostile data ends with an error rather than a stack overflow.
pub const MAX_INSTANCE_DEPTH: u32 = 64;

/// The reader's state before a positional instance was read, given back to
/// [`ByteReader::leave_instance`].
#[derive(Debug, Clone, Copy)]
pub struct Saved {
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
    /// Errors: `UnexpectedEof` at the wanted offset when `pos` is negative or beyond the end
    /// of the stream; `Semantic` when positional instances nest deeper than
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
                let offset = if pos < 0 {
                    start as u64
                } else {
                    u64::try_from(start as i128 + pos).unwrap_or(u64::MAX)
                };
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
        self.inst_depth += 1;
        let saved = Saved {
            pos: self.pos,
            start: self.start,
            end: self.end,
            bits: self.bits,
            nbits: self.nbits,
        };
        self.pos = at;
        self.start = start;
        self.end = end;
        self.bits = 0;
        self.nbits = 0;
        Ok(saved)
    }

    /// Comes back from a positional instance read after [`ByteReader::enter_instance`].
    pub fn leave_instance(&mut self, saved: Saved) {
        self.pos_hi = self.pos_hi.max(self.pos);
        self.inst_depth = self.inst_depth.saturating_sub(1);
        self.pos = saved.pos;
        self.start = saved.start;
        self.end = saved.end;
        self.bits = saved.bits;
        self.nbits = saved.nbits;
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

/// One positional instance, encoded and waiting to be laid out.
#[derive(Debug, Clone)]
pub struct Placement {
    /// Absolute offset in the output.
    at: usize,
    bytes: Vec<u8>,
    /// The instance's key path in the schema (`types.entry.instances.name`).
    what: &'static str,
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
        Ok(w)
    }

    /// Queues the positional instance written into `value` (made by
    /// [`ByteWriter::instance_writer`]) with the instances it queued itself; `what` is the
    /// instance's key path in the schema, named when it overlaps other bytes.
    pub fn place(&mut self, mut value: ByteWriter, what: &'static str) {
        let at = value.origin;
        let mut inner = std::mem::take(&mut value.placed);
        let bytes = value.into_bytes();
        self.placed.push(Placement { at, bytes, what });
        self.placed.append(&mut inner);
    }
    /// Lays out every queued positional instance (called by the root type at its end, after
    /// `kept`, the bytes its reader found after its `seq` up to the furthest instance, was
    /// written). Bytes before `kept` and bytes of an earlier instance must agree with the
    /// instance's bytes; `kept` bytes are replaced; past the end the output grows (with zero
    /// bytes in a gap no instance covers).
    ///
    /// Errors: `Semantic` naming both instances (or the instance and the fields written in
    /// sequence) and the byte offset where they disagree.
    pub fn lay_out_positional(&mut self, kept: &[u8]) -> Result<(), EncodeError> {
        self.align_to_byte();
        let seq_end = self.buf.len();
        self.buf.extend_from_slice(kept);
        if self.placed.is_empty() {
            return Ok(());
        }
        // For each byte from `seq_end` on: 0 while only kept bytes are there, else the
        // placement's index + 1.
        let mut owner: Vec<u32> = vec![0; self.buf.len() - seq_end];
        let placed = std::mem::take(&mut self.placed);
        for (k, p) in placed.iter().enumerate() {
            if p.bytes.is_empty() {
                // An absent instance (`if` false) or one that takes no bytes.
                continue;
            }
            let end = p.at.checked_add(p.bytes.len()).ok_or_else(|| {
                EncodeError::new(EncodeErrorKind::OutOfRange {
                    value: p.at.to_string(),
                    ty: "a position in the stream",
                })
            })?;
            if end > self.buf.len() {
                self.buf.resize(end, 0);
                owner.resize(end - seq_end, 0);
            }
            for (i, &b) in p.bytes.iter().enumerate() {
                let at = p.at + i;
                let by = if at < seq_end {
                    Some("the fields written in sequence")
                } else {
                    match owner[at - seq_end] {
                        0 => None,
                        o => Some(placed[o as usize - 1].what),
                    }
                };
                match by {
                    Some(other) if self.buf[at] != b => {
                        return Err(EncodeError::new(EncodeErrorKind::Semantic(format!(
                            "positional instance `{}` overlaps {}{other}{} at byte offset {at}, and their bytes differ ({:02X} there, {b:02X} from the instance)",
                            p.what,
                            if at < seq_end { "" } else { "`" },
                            if at < seq_end { "" } else { "`" },
                            self.buf[at],
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
