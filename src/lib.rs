#![warn(missing_docs)]
//! statepack: compact binary formats for game state, written once as schemas.
//!
//! - [`generated`]: raw types generated from `schema/*.ksy` (read + write, lossless).
//! - [`formats`]: one module per format, the semantic API over the raw types.
//! - [`sim`]: simulations and reports built on the format APIs.
//! - `statepack_runtime` (re-exported as [`runtime`]): what the generated code calls (byte and
//!   bit I/O, errors, the dynamic view).
//! - `statepack_codecs` (re-exported as [`codecs`]): quantization, delta chains, curves,
//!   thinning, motion input, the animation clip codec.
//!
//! Features (all on by default): `binrw`, `deku`, `bitvec`. With them the generated types
//! also implement binrw's `BinRead`/`BinWrite` (every byte-aligned type), deku's
//! `DekuReader`/`DekuWriter` (every type with bit fields) and read from a bitvec
//! `BitSlice<u8, Msb0>` (`read_bits`, `to_bits`), all through the native reader and writer:
//! a generated type can be a field of a hand-written `#[binrw]` or `#[deku]` struct. Errors
//! keep the native field path, with the position in the library's stream. The libraries are
//! re-exported as `runtime::binrw`, `runtime::deku`, `runtime::bitvec`. Build with
//! `default-features = false` for none of them. Details: `docs/architecture.md`, "binrw, deku
//! and bitvec".
pub mod formats;
pub mod generated;
pub mod sim;
pub use statepack_codecs as codecs;
pub use statepack_runtime as runtime;
