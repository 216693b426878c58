//! Generated types as binrw, deku and bitvec citizens.
//!
//! With the generator's `binrw`, `deku` and `bitvec` options on, generated types implement
//! binrw's `BinRead`/`BinWrite`, deku's `DekuReader`/`DekuWriter` and read from a bitvec
//! `BitSlice<u8, Msb0>`. Every one of those impls is a thin call into this module, which runs
//! the native [`ByteReader`](crate::io::ByteReader) / [`ByteWriter`](crate::io::ByteWriter)
//! code on the library's stream and puts the stream where the native code stopped: the native
//! path stays the engine, the libraries are the way in and out.
//!
//! Each part is behind the runtime feature of the same name, which also re-exports the
//! library (`statepack_runtime::binrw`, `statepack_runtime::deku`, `statepack_runtime::bitvec`)
//! so that generated code needs no direct dependency of the user's crate:
//!
//! - [`binrw`] (feature `binrw`): byte streams (`Read + Seek`, `Write + Seek`).
//! - [`deku`] (feature `deku`, turns on `bitvec`): deku's bit-level reader and writer,
//!   most significant bit first; a value may start inside a byte.
//! - [`bits`] (feature `bitvec`): a `BitSlice<u8, Msb0>` as input, a `BitVec<u8, Msb0>` as
//!   output.
//!
//! Errors keep the native error (field path and kind) with its offset moved to the position
//! in the library's stream; see each part.

#[cfg(feature = "binrw")]
pub mod binrw;
#[cfg(feature = "bitvec")]
pub mod bits;
#[cfg(feature = "deku")]
pub mod deku;
