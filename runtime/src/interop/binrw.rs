//! binrw streams in and out of the native reader and writer.
//!
//! Generated `BinRead` impls call [`read`], generated `BinWrite` impls call [`write()`]. The
//! byte order is the schema's: the [`Endian`](::binrw::Endian) binrw passes in is not used
//! (a schema fixes the order of every number), so `read_le`, `read_be` and `read` give the
//! same value.
//!
//! Errors are `binrw::Error::Custom` whose `pos` is the absolute
//! stream position of the failing field and whose error is the native
//! [`DecodeError`] (offset moved to that stream position, field path
//! kept) or [`EncodeError`]; get it back with
//! `err.custom_err::<DecodeError>()`. A stream that ends early is such an error with
//! [`UnexpectedEof`](crate::io::DecodeErrorKind::UnexpectedEof), never a
//! panic. I/O failures of the stream itself are `binrw::Error::Io`.

use crate::io::{ByteReader, ByteWriter, DecodeError, EncodeError};
use std::io::{Read, Seek, SeekFrom, Write};

/// Reads one value with `parse` from `reader`'s position: the rest of the stream is read
/// into memory (the native reader works on a byte slice), parsed, and the stream is left
/// just after the bytes the value took. On error the stream is back where it was.
///
/// Cost: each call reads the whole rest of the stream, so many small values read one by one
/// from a long stream (a binrw `count` of generated elements) copy the stream many times;
/// read a list as a generated type where the schema has one.
///
/// Errors: see the [module docs](self).
pub fn read<R, V>(
    reader: &mut R,
    parse: impl FnOnce(&mut ByteReader<'_>) -> Result<V, DecodeError>,
) -> ::binrw::BinResult<V>
where
    R: Read + Seek + ?Sized,
{
    let start = reader.stream_position()?;
    let mut buf = Vec::new();
    if let Err(e) = reader.read_to_end(&mut buf) {
        reader.seek(SeekFrom::Start(start))?;
        return Err(e.into());
    }
    let mut r = ByteReader::new(&buf);
    match parse(&mut r) {
        Ok(v) => {
            reader.seek(SeekFrom::Start(start + r.offset()))?;
            Ok(v)
        }
        Err(mut e) => {
            reader.seek(SeekFrom::Start(start))?;
            e.offset += start;
            Err(::binrw::Error::Custom {
                pos: e.offset,
                err: Box::new(e),
            })
        }
    }
}

/// Writes one value with `emit` at `writer`'s position: encoded by the native writer into a
/// buffer of `capacity` bytes (a hint), then written in one `write_all`. Nothing is written
/// when encoding fails.
///
/// Errors: [`EncodeError`] (a value that does not fit, a schema rule broken) as
/// `binrw::Error::Custom` at the stream position the value would have started at;
/// `binrw::Error::Io` when the stream fails.
pub fn write<W>(
    writer: &mut W,
    capacity: usize,
    emit: impl FnOnce(&mut ByteWriter) -> Result<(), EncodeError>,
) -> ::binrw::BinResult<()>
where
    W: Write + Seek + ?Sized,
{
    let mut w = ByteWriter::with_capacity(capacity);
    if let Err(e) = emit(&mut w) {
        let pos = writer.stream_position()?;
        return Err(::binrw::Error::Custom {
            pos,
            err: Box::new(e),
        });
    }
    writer.write_all(&w.into_bytes())?;
    Ok(())
}

/// The binrw impls of a generated type without `params`: `BinRead` through [`read`] and
/// the type's `read_from`, `BinWrite` through [`write()`] and its `write_to`, and
/// `ReadEndian`/`WriteEndian` as `EndianKind::None` (the schema fixes the byte order of every
/// number, binrw's `endian` argument is not used). `binrw_impls!(Type)` starts the writer's
/// buffer at `Type::encoded_len()`; `binrw_impls!(Type, bits)` (a type with bit fields,
/// whose length is counted by writing) at zero.
///
/// Errors: as [`read`] and [`write()`].
#[doc(hidden)]
#[macro_export]
macro_rules! binrw_impls {
    ($name:ident) => {
        $crate::binrw_impls!(@impls $name, |v: &$name| v.encoded_len());
    };
    ($name:ident, bits) => {
        $crate::binrw_impls!(@impls $name, |_v: &$name| 0);
    };
    (@impls $name:ident, $cap:expr) => {
        impl $crate::binrw::BinRead for $name {
            type Args<'__a> = ();
            fn read_options<__R: ::std::io::Read + ::std::io::Seek>(
                reader: &mut __R,
                _endian: $crate::binrw::Endian,
                _args: Self::Args<'_>,
            ) -> $crate::binrw::BinResult<Self> {
                $crate::interop::binrw::read(reader, Self::read_from)
            }
        }
        impl $crate::binrw::meta::ReadEndian for $name {
            const ENDIAN: $crate::binrw::meta::EndianKind = $crate::binrw::meta::EndianKind::None;
        }
        impl $crate::binrw::BinWrite for $name {
            type Args<'__a> = ();
            fn write_options<__W: ::std::io::Write + ::std::io::Seek>(
                &self,
                writer: &mut __W,
                _endian: $crate::binrw::Endian,
                _args: Self::Args<'_>,
            ) -> $crate::binrw::BinResult<()> {
                $crate::interop::binrw::write(writer, ($cap)(self), |__w| self.write_to(__w))
            }
        }
        impl $crate::binrw::meta::WriteEndian for $name {
            const ENDIAN: $crate::binrw::meta::EndianKind = $crate::binrw::meta::EndianKind::None;
        }
    };
}
