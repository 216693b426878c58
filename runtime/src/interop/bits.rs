//! A bitvec `BitSlice<u8, Msb0>` as the input of a generated bit-level reader, and a
//! `BitVec<u8, Msb0>` as the output of its writer.
//!
//! Bit 0 of the slice is the first bit of the value, read most significant bit first as the
//! schema's `bN` fields are (`bit-endian: be`, the default); the slice may start anywhere in
//! its memory. Byte-aligned fields of the value align to whole bytes counted from the
//! slice's first bit.

use crate::io::{ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError, FieldPath};
use crate::io::{PathSeg, TraceValue, Tracer};
use ::bitvec::prelude::{BitSlice, BitVec, Msb0};

/// The tracer of [`read`]: keeps the open field path and notes the first field that ends
/// past the slice's last bit (the bytes behind the reader are the slice rounded up to whole
/// bytes, padded with zero bits).
#[derive(Debug, Default)]
pub struct BitLimit {
    limit: u64,
    /// Open fields with their start (byte offset, bit offset).
    open: Vec<(PathSeg, u64, u64)>,
    /// The first field that ended past the limit: its path, start byte, start bit, end bit.
    overrun: Option<(FieldPath, u64, u64, u64)>,
}

impl Tracer for BitLimit {
    fn enter(&mut self, seg: PathSeg, offset: u64) {
        self.open.push((seg, offset, offset * 8));
    }
    fn leave(&mut self, offset: u64, value: Option<TraceValue>) {
        self.leave_at(offset, offset * 8, value);
    }
    fn wants_values(&self) -> bool {
        false
    }
    fn enter_at(&mut self, seg: PathSeg, offset: u64, bit_offset: u64) {
        self.open.push((seg, offset, bit_offset));
    }
    fn leave_at(&mut self, _offset: u64, bit_offset: u64, _value: Option<TraceValue>) {
        if bit_offset > self.limit && self.overrun.is_none() {
            if let Some(&(_, at, bit)) = self.open.last() {
                let path = FieldPath::from_segments(self.open.iter().map(|(s, _, _)| s.clone()));
                self.overrun = Some((path, at, bit, bit_offset));
            }
        }
        self.open.pop();
    }
}

/// The `UnexpectedEof` of a read from `start_bit` to `end_bit` over a slice of `limit` bits.
fn eof(path: FieldPath, at: u64, start_bit: u64, end_bit: u64, limit: u64) -> DecodeError {
    DecodeError::at(
        path,
        at,
        DecodeErrorKind::UnexpectedEof {
            needed: (end_bit.saturating_sub(start_bit).div_ceil(8) as usize).max(1),
            available: (limit.saturating_sub(start_bit) / 8) as usize,
        },
    )
}

/// Reads one value with `parse` from the start of `bits`. Returns the value and the number
/// of bits it took (at most `bits.len()`).
///
/// The slice's bits are copied into whole bytes first (`bits.len() / 8` rounded up), so the
/// value's own end-of-data checks (`size-eos`, `repeat: eos`) see the slice rounded up to a
/// whole byte.
///
/// Errors: the value's [`DecodeError`] (field path, byte offset counted from the slice's
/// first bit); reading past the slice's last bit is `UnexpectedEof` naming the first field
/// that went past it (`needed`: the bytes that field takes, `available`: the whole bytes
/// left where it starts), even where the zero padding behind the slice would have parsed.
pub fn read<V>(
    bits: &BitSlice<u8, Msb0>,
    parse: impl FnOnce(&mut ByteReader<'_, BitLimit>) -> Result<V, DecodeError>,
) -> Result<(V, usize), DecodeError> {
    let mut owned: BitVec<u8, Msb0> = BitVec::with_capacity(bits.len());
    owned.extend_from_bitslice(bits);
    owned.set_uninitialized(false);
    let bytes = owned.into_vec();
    let limit = bits.len() as u64;
    let mut r = ByteReader::with_tracer(
        &bytes,
        BitLimit {
            limit,
            ..BitLimit::default()
        },
    );
    let parsed = parse(&mut r);
    let used = r.bit_offset();
    if let Some((path, at, start, end)) = r.tracer.overrun.take() {
        return Err(eof(path, at, start, end, limit));
    }
    let v = parsed?;
    if used > limit {
        // Past the end without a traced field ending there.
        return Err(eof(FieldPath::new(), limit / 8, limit / 8 * 8, used, limit));
    }
    Ok((v, used as usize))
}

/// Writes one value with `emit` and returns exactly its bits (a value may end inside a
/// byte; nothing is padded). Errors: the writer's [`EncodeError`].
pub fn write(
    emit: impl FnOnce(&mut ByteWriter) -> Result<(), EncodeError>,
) -> Result<BitVec<u8, Msb0>, EncodeError> {
    let mut w = ByteWriter::new();
    emit(&mut w)?;
    let n = w.bit_len() as usize;
    let mut out = BitVec::<u8, Msb0>::from_vec(w.into_bytes());
    out.truncate(n);
    Ok(out)
}
