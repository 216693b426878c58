//! deku's bit-level reader and writer in and out of the native reader and writer.
//!
//! Generated `DekuReader` impls call [`read`], `DekuWriter` impls call [`write()`]. Bits go
//! most significant bit first (deku's `Msb0`, the schema's `bit-endian: be`), and a value
//! may start inside a byte, where the deku stream is: a type whose first field is a bit
//! field goes on from that bit (as it would after another bit field of the same schema); any
//! other type starts on the next byte, as Kaitai Struct's rule puts a byte-aligned field
//! after bits, so the bits skipped must be zero on read and are written as zero.
//!
//! Errors: decoding failures are [`DekuError::Parse`] with the native
//! [`DecodeError`]'s text: the field path and the absolute byte
//! offset in the deku reader's underlying stream (a stream that ends early is an
//! `UnexpectedEof` there, never a panic); encoding failures are [`DekuError::InvalidParam`]
//! with the [`EncodeError`]'s text and the bit position in the output. On a read error the
//! deku reader is left where it was.

use crate::io::{ByteReader, ByteWriter, DecodeError, EncodeError};
use ::bitvec::prelude::{BitVec, Msb0};
use ::bitvec::view::BitView;
use ::deku::reader::{Leftover, Reader};
use ::deku::writer::Writer;
use ::deku::DekuError;
use std::io::{Read, Seek, SeekFrom, Write};

fn io_err(e: std::io::Error) -> DekuError {
    DekuError::Io(e.kind())
}

/// Reads one value with `parse` at the deku reader's position (possibly inside a byte). The
/// bits deku holds from its last read and the rest of the underlying stream are put in one
/// buffer for the native reader; afterwards the underlying stream and deku's leftover bits
/// are set to just after the value and `bits_read` grows by the bits it took.
/// `bits_first`: the type's first field is a bit field (see the [module docs](self)).
///
/// Cost: each call reads the whole rest of the underlying stream (as
/// [`super::binrw::read`]).
///
/// Errors: see the [module docs](self).
pub fn read<R, V>(
    reader: &mut Reader<R>,
    bits_first: bool,
    parse: impl FnOnce(&mut ByteReader<'_>) -> Result<V, DecodeError>,
) -> Result<V, DekuError>
where
    R: Read + Seek,
{
    let leftover = reader.leftover.take();
    let inner_at = match reader.as_mut().stream_position() {
        Ok(p) => p,
        Err(e) => {
            reader.leftover = leftover;
            return Err(io_err(e));
        }
    };
    // The held bits, right-aligned in whole bytes (`skip` zero bits in front of them).
    let (mut buf, skip): (Vec<u8>, usize) = match &leftover {
        None => (Vec::new(), 0),
        Some(Leftover::Byte(b)) => (vec![*b], 0),
        Some(Leftover::Bits(bits)) => {
            let skip = (8 - bits.len() % 8) % 8;
            let mut v: BitVec<u8, Msb0> = BitVec::with_capacity(skip + bits.len());
            v.resize(skip, false);
            v.extend_from_bitslice(bits);
            (v.into_vec(), skip)
        }
    };
    let held = buf.len() as u64;
    let buf_at = inner_at.saturating_sub(held);
    let restore = |reader: &mut Reader<R>, leftover: Option<Leftover>| {
        reader.leftover = leftover;
        reader.as_mut().seek(SeekFrom::Start(inner_at)).map(|_| ())
    };
    if let Err(e) = reader.as_mut().read_to_end(&mut buf) {
        let _ = restore(reader, leftover);
        return Err(io_err(e));
    }
    let mut r = ByteReader::new(&buf);
    let parsed = (|| {
        if skip > 0 {
            r.read_bits_be(skip as u32)?;
        }
        if !bits_first {
            r.align_to_byte()?;
        }
        parse(&mut r)
    })();
    match parsed {
        Ok(v) => {
            let end = r.bit_offset();
            let (byte, bit) = ((end / 8) as usize, (end % 8) as usize);
            let next = if bit == 0 {
                reader.leftover = None;
                byte as u64
            } else {
                let rest = &buf[byte..=byte].view_bits::<Msb0>()[bit..];
                reader.leftover = Some(Leftover::Bits(rest.to_bitvec()));
                byte as u64 + 1
            };
            reader
                .as_mut()
                .seek(SeekFrom::Start(buf_at + next))
                .map_err(io_err)?;
            reader.bits_read += end as usize - skip;
            Ok(v)
        }
        Err(mut e) => {
            restore(reader, leftover).map_err(io_err)?;
            e.offset += buf_at;
            Err(DekuError::Parse(e.to_string().into()))
        }
    }
}

/// Writes one value with `emit` at the deku writer's position (possibly inside a byte): the
/// native writer starts at the same bit phase, and exactly the bits the value takes go to
/// deku (a value may end inside a byte; deku keeps those bits for its next write).
/// `bits_first`: as for [`read`].
///
/// Errors: see the [module docs](self); nothing is written when encoding fails.
pub fn write<W>(
    writer: &mut Writer<W>,
    bits_first: bool,
    emit: impl FnOnce(&mut ByteWriter) -> Result<(), EncodeError>,
) -> Result<(), DekuError>
where
    W: Write + Seek,
{
    let phase = writer.leftover.0.len() % 8;
    let mut w = ByteWriter::new();
    if phase > 0 {
        w.write_bits_be(0, phase as u32)
            .map_err(|e| DekuError::InvalidParam(e.to_string().into()))?;
    }
    if !bits_first {
        w.align_to_byte();
    }
    if let Err(e) = emit(&mut w) {
        let at = writer.bits_written + writer.leftover.0.len();
        return Err(DekuError::InvalidParam(
            format!("{e} (value starting at bit {at} of the output)").into(),
        ));
    }
    let n = w.bit_len() as usize;
    let bytes = w.into_bytes();
    if phase == 0 && n.is_multiple_of(8) && writer.leftover.0.is_empty() {
        writer.write_bytes(&bytes)
    } else {
        writer.write_bits(&bytes.view_bits::<Msb0>()[phase..n])
    }
}
