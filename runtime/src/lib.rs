#![warn(missing_docs)]
//! statepack-runtime: what generated code calls.
//!
//! Generated types (from `.ksy` schemas) read and write bytes through this crate, and every
//! path generated code names is here (`::statepack_runtime::…`):
//!
//! - [`io`]: bounds-checked byte reader and writer, field-path errors with byte offsets.
//! - [`bits`]: MSB-first bit writer/reader, LEB128 varints (byte- and bit-aligned), offset
//!   binary; `bits::lsb`, the LSB-first pair.
//! - [`positional`]: positional instances and `_io` (the reader's jump to a position of a
//!   stream and back, the writer's queue of instances).
//! - [`cbtk_columns`]: column chunks (directory, typed columns), zlib framing and the column
//!   codecs (time, difference with an escape, wrapping difference) of CBTK v1.
//! - [`reflect`]: a dynamic, read-only view of any generated type by member name (used by
//!   tools that work on every schema).
//! - [`process`]: custom processors (`process: name(args)`) and opaque external types,
//!   written in Rust for generated code to call.
//! - [`format`](mod@format): `RootType`, the whole-file decode and encode of every generated root type.
//! - `bytes_json` (feature `serde`): the JSON form of byte fields in serde derives.
//! - `interop` (features `binrw`, `deku`, `bitvec`): what generated binrw / deku / bitvec
//!   impls call; the features also re-export those crates as `statepack_runtime::binrw`,
//!   `statepack_runtime::deku` and `statepack_runtime::bitvec`.
//!
//! The math of statepack's own formats (quantizers, delta chains, curves, thinning, motion
//! input, the animation clip codec) is the crate statepack-codecs; generated code never
//! calls it. The finder of the real input files tests read is the crate statepack-fixtures,
//! which no crate using generated code builds.
//!
//! ## Features
//!
//! Without features the crate depends only on `thiserror` and `encoding_rs`. `serde` and
//! `zlib` are on by default:
//!
//! | feature | adds | dependencies |
//! |---|---|---|
//! | `serde` | serde derives on generated types, through the re-export [`serde`]; `bytes_json`, `io::float_json` | serde, hex |
//! | `zlib` | `process: zlib` fields, `cbtk_columns::deflate` and `cbtk_columns::inflate` | flate2 (pure Rust) |
//! | `binrw`, `deku`, `bitvec` | `interop` and the re-export of the crate of that name (`deku` implies `bitvec`) | that crate |
//!
//! A crate that only reads and writes its own schemas depends on
//! `statepack-runtime = { ..., default-features = false, features = ["serde"] }` (or without
//! `serde`, when its build script sets `Builder::serde(false)`).
//!
//! ## Macros for generated code
//!
//! - [`include_schema!`]: includes a schema's generated module from `OUT_DIR`.
//! - `require_interface!`, `require_serde!`, `require_zlib!` (hidden): checks generated code
//!   makes at compile time, each failing with a message saying what to change.
pub mod bits;
#[cfg(feature = "serde")]
pub mod bytes_json;
pub mod cbtk_columns;
pub mod format;
mod generated_support;
#[cfg(any(feature = "binrw", feature = "deku", feature = "bitvec"))]
pub mod interop;
pub mod io;
pub mod lazy;
pub mod limits;
pub mod positional;
pub mod process;
pub mod reflect;
#[cfg(feature = "zlib")]
pub mod zlib;

pub use generated_support::GENERATED_CODE_INTERFACE;

#[cfg(feature = "binrw")]
pub use binrw;
#[cfg(feature = "bitvec")]
pub use bitvec;
#[cfg(feature = "deku")]
pub use deku;
/// The serde crate generated types derive from (`#[serde(crate = "::statepack_runtime::serde")]`),
/// so a crate using generated types needs no serde dependency of its own. Feature `serde`.
#[cfg(feature = "serde")]
pub use serde;
