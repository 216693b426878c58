//! MSB-first bit writer and reader, LEB128 varints in byte-aligned and bit-aligned positions,
//! and offset-binary signed values.
//!
//! Portability rules (world snapshot spec, "Portability"), held by construction:
//!
//! - Bits are assembled into bytes with shifts and masks only, most significant bit first; no
//!   multi-byte native integer is ever copied, so host byte order never reaches the output.
//! - The accumulator is a `u64`; every step moves at most 32 bits onto at most 7 pending
//!   bits, so the running width stays at or below 39 bits and no shift reaches the full width
//!   of its operand. Wider values (up to 64 bits) are moved as two halves.
//! - Signed values are stored as offset binary (`code = value + 2^(width-1)`), so only
//!   unsigned shifts are applied.
//! - Reads past the end fail before anything is consumed ([`BitError::Eof`]).
//!
//! LEB128 groups are eight bits each: a continuation bit (most significant) and seven value
//! bits, least-significant group first. In a byte-aligned position a group is one byte; in a
//! bit-aligned position the same eight bits simply continue the bit stream. Readers accept only
//! the shortest encoding (no trailing zero group) of at most 64 value bits, so decoding then
//! encoding gives back the same bits.
//!
//! [`lsb`] holds the least-significant-bit-first pair (the generated `bit-endian: le` fields
//! and hand-written layouts share it).

pub mod lsb;

/// What went wrong in a bit-level read or write. Offsets are in bits from the start of the
/// buffer the reader or writer works on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BitError {
    /// The input ends inside a field.
    #[error("input ends early at bit {bit_offset}: {needed} bit(s) needed, {available} left")]
    Eof {
        /// Bit offset of the read.
        bit_offset: u64,
        /// Bits the field needs.
        needed: u32,
        /// Bits left in the input.
        available: u64,
    },
    /// A value does not fit its bit width (writers refuse instead of wrapping).
    #[error("value {value} does not fit in {width} bit(s)")]
    TooWide {
        /// The value as given (signed values as given, not as their code).
        value: i128,
        /// The field's width in bits.
        width: u32,
    },
    /// A LEB128 varint has more than 10 groups or more than 64 value bits.
    #[error("varint at bit {bit_offset} is longer than 64 value bits")]
    VarintTooLong {
        /// Bit offset of the varint's first group.
        bit_offset: u64,
    },
    /// A LEB128 varint ends with a zero group after other groups (not the shortest form).
    #[error("varint at bit {bit_offset} is not in its shortest form")]
    VarintNotShortest {
        /// Bit offset of the varint's first group.
        bit_offset: u64,
    },
    /// Bits skipped to reach a byte boundary are not all zero.
    #[error("padding bits before bit {bit_offset} are not zero")]
    NonZeroPadding {
        /// Bit offset of the byte boundary.
        bit_offset: u64,
    },
}

#[inline(always)]
const fn mask(width: u32) -> u64 {
    // width <= 39 at every call site, so the shift is always narrower than 64.
    (1u64 << width) - 1
}

/// Appends `width` (1..=32) bits of `value` (already known to fit) most significant first
/// onto `npending` (0..=7) pending bits held in the low bits of `pending`, pushing every
/// completed byte onto `buf`; returns the new pending bits and their count (0..=7).
///
/// The one MSB-first packing step of the workspace: [`BitWriter`] and the generated writers'
/// [`crate::io::ByteWriter::write_bits_be`] both run it. The accumulator never holds more than
/// 39 bits, so no shift reaches 64.
#[inline(always)]
pub fn msb_push(
    buf: &mut Vec<u8>,
    pending: u64,
    npending: u32,
    value: u64,
    width: u32,
) -> (u64, u32) {
    debug_assert!((1..=32).contains(&width) && npending < 8 && value <= mask(width));
    let acc = (pending << width) | value;
    let mut n = npending + width;
    while n >= 8 {
        n -= 8;
        buf.push((acc >> n) as u8);
    }
    (acc & mask(n), n)
}

/// Takes `width` (1..=32) bits most significant first: first the `npending` (0..=7) pending
/// bits in the low bits of `pending`, then whole bytes of `buf` from `*pos` (advanced past
/// each byte fetched). Returns the value and the new pending bits and count. The caller has
/// checked that `npending + 8 × (buf.len() − *pos)` is at least `width`.
///
/// The one MSB-first unpacking step of the workspace: [`BitReader`] and the generated readers'
/// [`crate::io::ByteReader::read_bits_be`] both run it.
#[inline(always)]
pub fn msb_pull(
    buf: &[u8],
    pos: &mut usize,
    pending: u64,
    npending: u32,
    width: u32,
) -> (u64, u64, u32) {
    debug_assert!((1..=32).contains(&width) && npending < 8);
    let mut acc = pending;
    let mut n = npending;
    while n < width {
        acc = (acc << 8) | u64::from(buf[*pos]);
        *pos += 1;
        n += 8;
    }
    n -= width;
    (acc >> n, acc & mask(n), n)
}

/// The LEB128 groups of `value`, least significant first, shortest form: seven value bits
/// each with the continuation bit (`0x80`) set on every group but the last. The one LEB128
/// encoder of the workspace: [`push_varint`], [`BitWriter::put_varint`], [`put_varint_slice`]
/// and the generated writers of `-sp-varint: leb128` fields use it.
#[inline]
pub fn leb128_groups(value: u64) -> Leb128Groups {
    Leb128Groups {
        rest: value,
        done: false,
    }
}

/// Iterator returned by [`leb128_groups`].
#[derive(Debug, Clone)]
pub struct Leb128Groups {
    rest: u64,
    done: bool,
}

impl Iterator for Leb128Groups {
    type Item = u8;

    #[inline(always)]
    fn next(&mut self) -> Option<u8> {
        if self.done {
            return None;
        }
        let low = (self.rest & 0x7f) as u8;
        self.rest >>= 7;
        if self.rest == 0 {
            self.done = true;
            Some(low)
        } else {
            Some(low | 0x80)
        }
    }
}

/// Why a LEB128 varint was refused (see [`Leb128Decoder`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Leb128Fault {
    /// More than 10 groups, or a tenth group with more than one value bit.
    #[error("LEB128 varint longer than 64 value bits")]
    TooLong,
    /// The last group is zero after other groups.
    #[error("LEB128 varint not in its shortest form (ends with a zero group)")]
    NotShortest,
}

/// The one LEB128 decoder of the workspace, fed one group at a time (so that readers trace
/// or bound each group as they like): [`BitReader::read_varint`] and the generated readers of
/// `-sp-varint: leb128` fields use it. It accepts only the shortest form of at most 64 value
/// bits, so decoding then encoding with [`leb128_groups`] gives back the same groups.
#[derive(Debug, Clone, Copy, Default)]
pub struct Leb128Decoder {
    value: u64,
    groups: u32,
}

impl Leb128Decoder {
    /// A decoder before the first group.
    #[inline]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the next group: `Ok(Some(value))` when it was the last, `Ok(None)` when more
    /// follow. Errors: [`Leb128Fault`].
    #[inline(always)]
    pub fn push(&mut self, group: u8) -> Result<Option<u64>, Leb128Fault> {
        let i = self.groups;
        let low = u64::from(group & 0x7f);
        if i == 9 && group > 1 {
            return Err(Leb128Fault::TooLong);
        }
        self.value |= low << (7 * i);
        if group < 0x80 {
            if i > 0 && low == 0 {
                return Err(Leb128Fault::NotShortest);
            }
            return Ok(Some(self.value));
        }
        self.groups += 1;
        Ok(None)
    }
}

/// Writes the LEB128 groups of `value` at the start of `dst` and returns how many were
/// written ([`leb128_len`]). `dst` must hold at least `leb128_len(value)` bytes: callers size
/// it first (it panics otherwise, a bug in the caller, never a property of the input).
#[inline]
pub fn put_varint_slice(dst: &mut [u8], value: u64) -> usize {
    let mut n = 0;
    for g in leb128_groups(value) {
        dst[n] = g;
        n += 1;
    }
    n
}

/// Number of LEB128 groups (bytes) `value` takes: 1 for 0..=127, up to 10 for `u64::MAX`.
#[inline]
pub const fn leb128_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// The offset-binary code of a signed `value` in `width` bits (1..=64): `value + 2^(width-1)`.
/// Errors: [`BitError::TooWide`] when `value` is outside `-2^(width-1) ..= 2^(width-1) - 1`.
#[inline]
pub fn to_offset_binary(value: i64, width: u32) -> Result<u64, BitError> {
    let bias = 1i128 << (width - 1);
    let code = value as i128 + bias;
    if !(1..=64).contains(&width) || code < 0 || code >= bias * 2 {
        return Err(BitError::TooWide {
            value: value as i128,
            width,
        });
    }
    Ok(code as u64)
}

/// The signed value of an offset-binary `code` in `width` bits (1..=64): `code - 2^(width-1)`.
/// Bits of `code` above `width` are ignored.
#[inline]
pub fn from_offset_binary(code: u64, width: u32) -> i64 {
    let bias = 1i128 << (width - 1);
    let code = if width == 64 {
        code
    } else {
        code & ((1u64 << width) - 1)
    };
    (code as i128 - bias) as i64
}

/// An MSB-first bit writer appending to a byte vector.
#[derive(Debug, Clone, Default)]
pub struct BitWriter {
    buf: Vec<u8>,
    acc: u64,
    n: u32,
}

impl BitWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer with room for `n` bytes.
    pub fn with_capacity(n: usize) -> Self {
        Self {
            buf: Vec::with_capacity(n),
            acc: 0,
            n: 0,
        }
    }

    /// A writer continuing after the bytes of `buf` (byte-aligned).
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self { buf, acc: 0, n: 0 }
    }

    /// Forgets everything written, keeping the buffer.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.acc = 0;
        self.n = 0;
    }

    /// Bits written so far.
    #[inline]
    pub fn bit_len(&self) -> u64 {
        self.buf.len() as u64 * 8 + u64::from(self.n)
    }

    /// True when the next bit starts a byte.
    #[inline]
    pub fn is_aligned(&self) -> bool {
        self.n == 0
    }

    #[inline(always)]
    fn put32(&mut self, v: u64, width: u32) {
        (self.acc, self.n) = msb_push(&mut self.buf, self.acc, self.n, v, width);
    }

    /// Appends the low `width` bits (1..=64) of `value`, most significant first, without a
    /// range check: bits of `value` above `width` must be zero (callers that mask or clamp
    /// first use this on their hot path; [`BitWriter::write_bits`] checks).
    #[inline(always)]
    pub fn put(&mut self, value: u64, width: u32) {
        if width <= 32 {
            self.put32(value, width);
        } else {
            self.put32(value >> 32, width - 32);
            self.put32(value & mask(32), 32);
        }
    }

    /// Appends `value` in `width` bits (1..=64). Errors: [`BitError::TooWide`] when it does
    /// not fit (nothing is written).
    #[inline]
    pub fn write_bits(&mut self, value: u64, width: u32) -> Result<(), BitError> {
        if !(1..=64).contains(&width) || (width < 64 && value >> width != 0) {
            return Err(BitError::TooWide {
                value: value as i128,
                width,
            });
        }
        self.put(value, width);
        Ok(())
    }

    /// Appends a signed `value` as offset binary in `width` bits. Errors: [`BitError::TooWide`].
    #[inline]
    pub fn write_signed(&mut self, value: i64, width: u32) -> Result<(), BitError> {
        let code = to_offset_binary(value, width)?;
        self.put(code, width);
        Ok(())
    }

    /// Appends one bit.
    #[inline(always)]
    pub fn put_bool(&mut self, b: bool) {
        self.put32(u64::from(b), 1);
    }

    /// Appends zero bits up to the next byte boundary (nothing when aligned).
    #[inline]
    pub fn align(&mut self) {
        if self.n > 0 {
            let pad = 8 - self.n;
            self.put32(0, pad);
        }
    }

    /// Appends a LEB128 varint at the current bit position (eight bits per group).
    #[inline]
    pub fn put_varint(&mut self, value: u64) {
        for g in leb128_groups(value) {
            self.put32(u64::from(g), 8);
        }
    }

    /// Aligns to the next byte, then appends a LEB128 varint as whole bytes.
    #[inline]
    pub fn put_varint_aligned(&mut self, value: u64) {
        self.align();
        push_varint(&mut self.buf, value);
    }

    /// Aligns, then appends whole bytes.
    #[inline]
    pub fn put_bytes(&mut self, bytes: &[u8]) {
        self.align();
        self.buf.extend_from_slice(bytes);
    }

    /// Aligns (zero padding) and returns the bytes.
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.align();
        self.buf
    }

    /// The whole bytes written so far (pending bits of an unfinished byte are not included).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf
    }
}

/// Appends a LEB128 varint to a byte vector (byte-aligned form).
#[inline]
pub fn push_varint(out: &mut Vec<u8>, value: u64) {
    out.extend(leb128_groups(value));
}

/// An MSB-first bit reader over a byte slice; fails closed at the end.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    buf: &'a [u8],
    pos: usize,
    acc: u64,
    n: u32,
}

impl<'a> BitReader<'a> {
    /// A reader at the first bit of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            acc: 0,
            n: 0,
        }
    }

    /// Bits consumed so far.
    #[inline]
    pub fn bit_offset(&self) -> u64 {
        self.pos as u64 * 8 - u64::from(self.n)
    }

    /// Bits left.
    #[inline]
    pub fn bits_left(&self) -> u64 {
        (self.buf.len() - self.pos) as u64 * 8 + u64::from(self.n)
    }

    /// Bytes fetched so far (a partly read byte counts as fetched), the byte offset Kaitai
    /// Struct reports for a bit field.
    #[inline]
    pub fn byte_pos(&self) -> usize {
        self.pos
    }

    #[cold]
    fn eof(&self, needed: u32) -> BitError {
        BitError::Eof {
            bit_offset: self.bit_offset(),
            needed,
            available: self.bits_left(),
        }
    }

    #[inline(always)]
    fn get32(&mut self, width: u32) -> Result<u64, BitError> {
        debug_assert!((1..=32).contains(&width));
        if self.n < width && u64::from(width) > self.bits_left() {
            return Err(self.eof(width));
        }
        let v;
        (v, self.acc, self.n) = msb_pull(self.buf, &mut self.pos, self.acc, self.n, width);
        Ok(v)
    }

    /// Reads `width` bits (1..=64) as an unsigned value. Errors: [`BitError::Eof`], with
    /// nothing consumed.
    #[inline(always)]
    pub fn read_bits(&mut self, width: u32) -> Result<u64, BitError> {
        if width <= 32 {
            self.get32(width)
        } else {
            if u64::from(width) > self.bits_left() {
                return Err(self.eof(width));
            }
            let hi = self.get32(width - 32)?;
            let lo = self.get32(32)?;
            Ok((hi << 32) | lo)
        }
    }

    /// Reads one bit. Errors: [`BitError::Eof`].
    #[inline(always)]
    pub fn read_bool(&mut self) -> Result<bool, BitError> {
        Ok(self.get32(1)? == 1)
    }

    /// Reads an offset-binary signed value of `width` bits. Errors: [`BitError::Eof`].
    #[inline]
    pub fn read_signed(&mut self, width: u32) -> Result<i64, BitError> {
        Ok(from_offset_binary(self.read_bits(width)?, width))
    }

    /// Skips to the next byte boundary; the skipped bits must be zero. Errors:
    /// [`BitError::NonZeroPadding`].
    #[inline]
    pub fn align(&mut self) -> Result<(), BitError> {
        if self.n > 0 {
            let pad = self.acc & mask(self.n);
            self.n = 0;
            self.acc = 0;
            if pad != 0 {
                return Err(BitError::NonZeroPadding {
                    bit_offset: self.bit_offset(),
                });
            }
        }
        Ok(())
    }

    /// Reads a LEB128 varint at the current bit position (eight bits per group). Errors:
    /// [`BitError::Eof`], [`BitError::VarintTooLong`], [`BitError::VarintNotShortest`].
    #[inline]
    pub fn read_varint(&mut self) -> Result<u64, BitError> {
        let start = self.bit_offset();
        let mut dec = Leb128Decoder::new();
        loop {
            match dec.push(self.get32(8)? as u8) {
                Ok(Some(value)) => return Ok(value),
                Ok(None) => {}
                Err(Leb128Fault::TooLong) => {
                    return Err(BitError::VarintTooLong { bit_offset: start })
                }
                Err(Leb128Fault::NotShortest) => {
                    return Err(BitError::VarintNotShortest { bit_offset: start })
                }
            }
        }
    }

    /// Aligns (zero padding checked), then reads a byte-aligned LEB128 varint. Errors: as
    /// [`BitReader::align`] and [`BitReader::read_varint`].
    #[inline]
    pub fn read_varint_aligned(&mut self) -> Result<u64, BitError> {
        self.align()?;
        self.read_varint()
    }

    /// Aligns (zero padding checked), then takes `n` whole bytes. Errors: as
    /// [`BitReader::align`], and [`BitError::Eof`].
    pub fn take_bytes(&mut self, n: usize) -> Result<&'a [u8], BitError> {
        self.align()?;
        if n > self.buf.len() - self.pos {
            return Err(self.eof(u32::try_from(n.saturating_mul(8)).unwrap_or(u32::MAX)));
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn msb_first_and_aligned_padding() {
        let mut w = BitWriter::new();
        w.put(0b101, 3);
        w.put(0b1, 1);
        w.put(0xabc, 12);
        w.put(1, 1);
        assert_eq!(w.bit_len(), 17);
        let b = w.into_bytes();
        assert_eq!(b, vec![0b1011_1010, 0b1011_1100, 0b1000_0000]);
        let mut r = BitReader::new(&b);
        assert_eq!(r.read_bits(3).unwrap(), 0b101);
        assert!(r.read_bool().unwrap());
        assert_eq!(r.read_bits(12).unwrap(), 0xabc);
        assert_eq!(r.read_bits(1).unwrap(), 1);
        assert_eq!(r.bit_offset(), 17);
        r.align().unwrap();
        assert_eq!(r.bits_left(), 0);
    }

    #[test]
    fn every_width_round_trips_at_every_phase() {
        for phase in 0..8u32 {
            for width in 1..=64u32 {
                let vals: Vec<u64> = if width == 64 {
                    vec![0, 1, u64::MAX, 0x8000_0000_0000_0000, 0x0123_4567_89ab_cdef]
                } else {
                    vec![
                        0,
                        1,
                        (1u64 << width) - 1,
                        (1u64 << (width - 1)),
                        0x5555_5555_5555_5555 & ((1u64 << width) - 1),
                    ]
                };
                for v in vals {
                    let mut w = BitWriter::new();
                    if phase > 0 {
                        w.put(0, phase);
                    }
                    w.write_bits(v, width).unwrap();
                    w.put(1, 1);
                    let b = w.into_bytes();
                    assert_eq!(b.len() as u32, (phase + width + 1).div_ceil(8));
                    let mut r = BitReader::new(&b);
                    if phase > 0 {
                        assert_eq!(r.read_bits(phase).unwrap(), 0);
                    }
                    assert_eq!(r.read_bits(width).unwrap(), v, "w{width} p{phase}");
                    assert_eq!(r.read_bits(1).unwrap(), 1);
                }
            }
        }
    }

    #[test]
    fn writer_refuses_wide_values() {
        let mut w = BitWriter::new();
        assert_eq!(
            w.write_bits(8, 3),
            Err(BitError::TooWide { value: 8, width: 3 })
        );
        assert_eq!(w.bit_len(), 0);
        assert!(w.write_signed(4, 3).is_err());
        assert!(w.write_signed(-5, 3).is_err());
        w.write_signed(-4, 3).unwrap();
        w.write_signed(3, 3).unwrap();
        let b = w.into_bytes();
        let mut r = BitReader::new(&b);
        assert_eq!(r.read_signed(3).unwrap(), -4);
        assert_eq!(r.read_signed(3).unwrap(), 3);
    }

    #[test]
    fn offset_binary_edges() {
        assert_eq!(to_offset_binary(0, 22).unwrap(), 1 << 21);
        assert_eq!(to_offset_binary(-(1 << 21), 22).unwrap(), 0);
        assert_eq!(to_offset_binary((1 << 21) - 1, 22).unwrap(), (1 << 22) - 1);
        assert!(to_offset_binary(1 << 21, 22).is_err());
        assert_eq!(to_offset_binary(i64::MIN, 64).unwrap(), 0);
        assert_eq!(to_offset_binary(i64::MAX, 64).unwrap(), u64::MAX);
        assert_eq!(from_offset_binary(0, 64), i64::MIN);
        assert_eq!(from_offset_binary(u64::MAX, 64), i64::MAX);
        for width in 1..=16u32 {
            for code in 0..(1u64 << width) {
                let v = from_offset_binary(code, width);
                assert_eq!(to_offset_binary(v, width).unwrap(), code);
            }
        }
    }

    #[test]
    fn reads_fail_closed() {
        let b = [0xffu8, 0x01];
        let mut r = BitReader::new(&b);
        assert_eq!(r.read_bits(5).unwrap(), 0x1f);
        let e = r.read_bits(12).unwrap_err();
        assert_eq!(
            e,
            BitError::Eof {
                bit_offset: 5,
                needed: 12,
                available: 11
            }
        );
        // Nothing was consumed by the failed read.
        assert_eq!(r.read_bits(11).unwrap(), 0b111_0000_0001);
        assert!(r.read_bool().is_err());
        assert!(BitReader::new(&[]).read_bits(64).is_err());
        assert!(BitReader::new(&[0; 7]).read_bits(64).is_err());
    }

    #[test]
    fn nonzero_padding_is_refused() {
        let mut r = BitReader::new(&[0b1010_0001, 0]);
        r.read_bits(3).unwrap();
        assert_eq!(r.align(), Err(BitError::NonZeroPadding { bit_offset: 8 }));
        let mut r = BitReader::new(&[0b1010_0000, 0]);
        r.read_bits(3).unwrap();
        r.align().unwrap();
        assert_eq!(r.bit_offset(), 8);
    }

    #[test]
    fn varints_both_forms() {
        let vals = [
            0u64,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            u32::MAX as u64,
            u64::MAX,
        ];
        for &v in &vals {
            let mut bytes = Vec::new();
            push_varint(&mut bytes, v);
            assert_eq!(bytes.len(), leb128_len(v));
            for phase in 0..8u32 {
                let mut w = BitWriter::new();
                if phase > 0 {
                    w.put(0, phase);
                }
                w.put_varint(v);
                w.put_varint_aligned(v);
                let b = w.into_bytes();
                let mut r = BitReader::new(&b);
                if phase > 0 {
                    r.read_bits(phase).unwrap();
                }
                let start = r.bit_offset();
                assert_eq!(r.read_varint().unwrap(), v);
                assert_eq!(r.bit_offset() - start, 8 * leb128_len(v) as u64);
                assert_eq!(r.read_varint_aligned().unwrap(), v);
                assert_eq!(r.bits_left(), 0);
                if phase == 0 {
                    assert_eq!(&b[..bytes.len()], &bytes[..]);
                }
            }
        }
        assert_eq!(leb128_len(u64::MAX), 10);
        // 300 is AC 02.
        let mut b = Vec::new();
        push_varint(&mut b, 300);
        assert_eq!(b, vec![0xac, 0x02]);
    }

    #[test]
    fn varints_refuse_overlong_and_padded_forms() {
        let too_long = [0xffu8; 10];
        assert!(matches!(
            BitReader::new(&too_long).read_varint(),
            Err(BitError::VarintTooLong { .. })
        ));
        let mut eleven = vec![0x80u8; 10];
        eleven.push(0);
        assert!(BitReader::new(&eleven).read_varint().is_err());
        assert!(matches!(
            BitReader::new(&[0x81, 0x00]).read_varint(),
            Err(BitError::VarintNotShortest { .. })
        ));
        assert!(matches!(
            BitReader::new(&[0x80]).read_varint(),
            Err(BitError::Eof { .. })
        ));
    }
}
