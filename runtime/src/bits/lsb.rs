//! LSB-first bit packing: bits fill each byte from its lowest bit up, and later bytes hold
//! the higher bits of a value (KS `bit-endian: le`; statepack's animation clip bit stream).
//!
//! [`lsb_push`] and [`lsb_pull`] are the one LSB-first packing and unpacking step of the
//! workspace: the generated readers and writers run them through
//! [`crate::io::ByteReader::read_bits_le`] and [`crate::io::ByteWriter::write_bits_le`]
//! (which add field paths and range checks), and the hand-written [`LsbWriter`] runs
//! [`lsb_push`] directly. The hand-written [`LsbReader`] reads by bit position instead (no
//! pending-bit state; the clip reader is faster that way), and a test holds it to the same
//! bytes as the generated pair. The accumulator rules of the MSB-first pair hold here
//! too: at most 32 bits move onto at most 7 pending bits, so the accumulator never holds more
//! than 39 bits and no shift reaches 64; wider values move as two halves, low half first.
//!
//! Values are appended least significant bit first: the first value's bit 0 is bit 0 of the
//! first byte. The final byte is padded with zero bits above the last value.

#[inline(always)]
const fn mask(width: u32) -> u64 {
    // width <= 39 at every call site, so the shift is always narrower than 64.
    (1u64 << width) - 1
}

/// Appends `width` (1..=32) bits of `value` (already known to fit) least significant first
/// above `npending` (0..=7) pending bits held in the low bits of `pending`, pushing every
/// completed byte onto `buf`; returns the new pending bits (in the low bits) and their count
/// (0..=7).
#[inline(always)]
pub fn lsb_push(
    buf: &mut Vec<u8>,
    pending: u64,
    npending: u32,
    value: u64,
    width: u32,
) -> (u64, u32) {
    debug_assert!((1..=32).contains(&width) && npending < 8 && value <= mask(width));
    let mut acc = pending | (value << npending);
    let mut n = npending + width;
    while n >= 8 {
        buf.push(acc as u8);
        acc >>= 8;
        n -= 8;
    }
    (acc, n)
}

/// Takes `width` (1..=32) bits least significant first: first the `npending` (0..=7)
/// pending bits in the low bits of `pending`, then whole bytes of `buf` from `*pos`
/// (advanced past each byte fetched), each above the bits before it. Returns the value and
/// the new pending bits (in the low bits) and count. The caller has checked that
/// `npending + 8 × (buf.len() − *pos)` is at least `width`.
#[inline(always)]
pub fn lsb_pull(
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
        acc |= u64::from(buf[*pos]) << n;
        *pos += 1;
        n += 8;
    }
    (acc & mask(width), acc >> width, n - width)
}

/// An LSB-first bit writer (widths 0..=64 per value; 0 writes nothing).
#[derive(Debug, Clone, Default)]
pub struct LsbWriter {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl LsbWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends the low `bits` (0..=32) bits of `v`; bits of `v` above `bits` are ignored.
    #[inline]
    pub fn put(&mut self, v: u32, bits: u8) {
        if bits == 0 {
            return;
        }
        debug_assert!(bits <= 32);
        let w = u32::from(bits.min(32));
        let v = u64::from(v) & mask(w);
        (self.acc, self.n) = lsb_push(&mut self.out, self.acc, self.n, v, w);
    }

    /// Appends the low `bits` (0..=64) bits of `v`, as two halves above 32 bits.
    #[inline]
    pub fn put64(&mut self, v: u64, bits: u8) {
        if bits > 32 {
            self.put(v as u32, 32);
            self.put((v >> 32) as u32, bits - 32);
        } else {
            self.put(v as u32, bits);
        }
    }

    /// Bits written so far.
    pub fn bit_len(&self) -> u64 {
        self.out.len() as u64 * 8 + u64::from(self.n)
    }

    /// The bytes, the last one padded with zero bits.
    pub fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

/// An LSB-first bit reader over a byte slice; a read past the end returns `None` and
/// consumes nothing.
#[derive(Debug, Clone)]
pub struct LsbReader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> LsbReader<'a> {
    /// A reader at bit 0 of `b`.
    pub fn new(b: &'a [u8]) -> Self {
        Self { b, pos: 0 }
    }

    /// Bits left.
    #[inline]
    pub fn left(&self) -> usize {
        self.b.len() * 8 - self.pos
    }

    /// Bits consumed so far.
    #[inline]
    pub fn bit_pos(&self) -> usize {
        self.pos
    }

    /// Reads `bits` bits and returns the low 32 of them; `None` when fewer are left
    /// (nothing consumed).
    #[inline]
    pub fn get(&mut self, bits: u8) -> Option<u32> {
        self.get_low64(bits).map(|v| v as u32)
    }

    /// Reads `bits` bits and returns the low 64 of them (the value read least significant
    /// bit first); `None` when fewer are left (nothing consumed).
    #[inline]
    fn get_low64(&mut self, bits: u8) -> Option<u64> {
        let bits = usize::from(bits);
        if bits > self.left() {
            return None;
        }
        let mut v = 0u64;
        let mut done = 0;
        // A run of bits of one byte at a time.
        while done < bits {
            let p = self.pos + done;
            let take = (8 - p % 8).min(bits - done);
            if done < 64 {
                let chunk = (u64::from(self.b[p / 8]) >> (p % 8)) & ((1u64 << take) - 1);
                v |= chunk << done;
            }
            done += take;
        }
        self.pos += bits;
        Some(v)
    }

    /// Reads `bits` (0..=64) bits, as two halves above 32; `None` when fewer are left
    /// (nothing consumed).
    #[inline]
    pub fn get64(&mut self, bits: u8) -> Option<u64> {
        if bits > 32 {
            if usize::from(bits) > self.left() {
                return None;
            }
            let lo = u64::from(self.get(32)?);
            let hi = u64::from(self.get(bits - 32)?);
            Some(lo | (hi << 32))
        } else {
            self.get(bits).map(u64::from)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lsb_first_layout() {
        let mut w = LsbWriter::new();
        w.put(0b101, 3);
        w.put(0x1f, 5);
        w.put(1, 1);
        assert_eq!(w.bit_len(), 9);
        assert_eq!(w.finish(), vec![0b1111_1101, 0b0000_0001]);
    }

    /// Every width from 0 to 64 at every bit phase, several values each, including the ends.
    #[test]
    fn every_width_at_every_phase() {
        for phase in 0..8u8 {
            for width in 0..=64u8 {
                let top = if width == 64 {
                    u64::MAX
                } else {
                    (1u64 << width) - 1
                };
                for v in [0, 1 & top, top, top >> 1, 0x5555_5555_5555_5555 & top] {
                    let mut w = LsbWriter::new();
                    w.put(0x5a, phase);
                    w.put64(v, width);
                    w.put(1, 1);
                    let b = w.finish();
                    let mut r = LsbReader::new(&b);
                    assert_eq!(r.get(phase), Some(0x5a & ((1 << phase) - 1)));
                    assert_eq!(r.get64(width), Some(v), "w{width} p{phase}");
                    assert_eq!(r.get(1), Some(1));
                    assert!(r.left() < 8);
                }
            }
        }
    }

    #[test]
    fn reads_past_the_end_consume_nothing() {
        let b = [0xffu8, 0x01];
        let mut r = LsbReader::new(&b);
        assert_eq!(r.get(5), Some(0x1f));
        assert_eq!(r.get(12), None);
        assert_eq!(r.bit_pos(), 5);
        assert_eq!(r.get(11), Some(0b1111));
        assert_eq!(r.get(1), None);
        // A wide read that does not fit consumes nothing, not even its first half.
        let mut r = LsbReader::new(&b);
        assert_eq!(r.get64(40), None);
        assert_eq!(r.bit_pos(), 0);
        assert_eq!(r.get(0), Some(0));
    }

    /// The generated code's pair ([`crate::io`]) and the hand-written one give the same bytes
    /// for the same run of widths at every phase, and each reads the other's output.
    #[test]
    fn generated_pair_matches_the_hand_written_one() {
        use crate::io::{ByteReader, ByteWriter};
        for phase in 1..8u8 {
            let widths = [phase, 1, 7, 8, 9, 13, 24, 31, 32, 33, 47, 64, 3];
            let vals: Vec<u64> = widths
                .iter()
                .enumerate()
                .map(|(i, &w)| {
                    let top = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
                    0x9e37_79b9_7f4a_7c15u64.rotate_left(i as u32 * 7) & top
                })
                .collect();
            let mut hw = LsbWriter::new();
            let mut gw = ByteWriter::new();
            for (&w, &v) in widths.iter().zip(&vals) {
                hw.put64(v, w);
                gw.write_bits_le(v, u32::from(w)).unwrap();
            }
            let hb = hw.finish();
            let gb = gw.into_bytes();
            assert_eq!(hb, gb, "phase {phase}");
            let mut hr = LsbReader::new(&gb);
            let mut gr = ByteReader::new(&hb);
            for (&w, &v) in widths.iter().zip(&vals) {
                assert_eq!(hr.get64(w), Some(v));
                assert_eq!(gr.read_bits_le(u32::from(w)).unwrap(), v);
            }
        }
    }
}
