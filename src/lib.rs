#![warn(missing_docs)]
//! statepack: compact binary formats for game state, written once as schemas.
//!
//! - [`generated`]: raw types generated from `schema/*.ksy` (read + write, lossless).
//! - [`formats`]: one module per format, the semantic API over the raw types.
//! - `statepack_runtime` (re-exported as [`runtime`]): quantization, delta chains, curves,
//!   motion input and the byte I/O the generated code uses.
pub mod formats;
pub mod generated;
pub use statepack_runtime as runtime;
