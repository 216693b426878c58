#![warn(missing_docs)]
//! statepack-runtime: the hand-written half of statepack.
//!
//! Generated raw types (from `schema/*.ksy`) read and write bytes through [`io`]; everything a
//! layout alone cannot say lives in the other modules:
//!
//! - [`io`]: bounds-checked byte reader and writer, field-path errors with byte offsets.
//! - [`bits`]: MSB-first bit writer/reader, LEB128 varints (byte- and bit-aligned), offset
//!   binary.
//! - [`netquant`]: world snapshot quantizers (grid-origin positions, smallest-three at 10
//!   bits, symmetric fixed point, clamps of NaN/Inf and ranges).
//! - [`quant`]: the shared quantizers: one smallest-three core with a preset per format,
//!   fixed point, binary16 with its rounding and overflow rules, the rotation angle metric.
//! - [`snap_quant`]: SNAP's CFrame quantizer (axis-angle steps, smallest-three, Z packing).
//! - [`snap_delta`]: SNAP's absolute/delta chains, closed-loop against what the decoder reconstructs.
//! - [`rply_xform`]: RPLY v3 transform quantizers (axis-angle, yaw) and closed-loop deltas.
//! - [`chunk`]: splitting a blob into storage chunks and joining them back, checksum-verified.
//! - [`curve`]: interpolation (lerp, nlerp with hemisphere check).
//! - [`motion`]: motion input (BVH, the study's JSON clips, the study's walk generated in code)
//!   as one skeleton + local transforms model, with forward kinematics.
//! - [`cbtk_columns`]: column chunks (directory, typed columns), zlib framing and the column
//!   codecs (time, difference with an escape, wrapping difference) of CBTK v1.
//! - [`smallest3`]: smallest-three rotations at 8 to 16 bits with the CBTK v1 scaling.
//! - [`thin`]: tolerance-driven key selection.
//! - [`anim`]: statepack's animation clip codec (tolerance-driven keys, per-track bit widths,
//!   world-space verification) and its decoder.
//! - [`keyframe`]: the animation keyframe-compression study's pipeline (constant channels,
//!   keyframe reduction, quantisation, forward-kinematics error).
//! - [`reflect`]: a dynamic, read-only view of any generated type by member name (used by
//!   tools that work on every schema).
//! - [`process`]: custom processors (`process: name(args)`) and opaque external types,
//!   written in Rust for generated code to call.
//! - `interop` (features `binrw`, `deku`, `bitvec`): what generated binrw / deku / bitvec
//!   impls call; the features also re-export those crates as `statepack_runtime::binrw`,
//!   `statepack_runtime::deku` and `statepack_runtime::bitvec`.
//! - [`fixtures`]: finds the real input files that tests, benches and the demo read in place.
//!
//! ## Features
//!
//! What generated code needs ([`io`], [`bits`], [`reflect`], [`columns`], [`positional`],
//! [`process`], [`fixtures`] and the macros below) is always built and depends only on `thiserror` and `encoding_rs`. The rest
//! is behind cargo features, all on by default:
//!
//! | feature | adds | dependencies |
//! |---|---|---|
//! | `serde` | serde derives on generated types, through the re-export [`serde`](crate::serde) | serde |
//! | `zlib` | `process: zlib` fields, [`columns::deflate`] and [`columns::inflate`] | flate2 (pure Rust) |
//! | `formats` | `chunk`, `curve`, `delta`, `netquant`, `quant`, `replay_xform`, `smallest3`, `thin` (implies `serde`, `zlib`) | glam |
//! | `motion` | `motion`: BVH, ACL `.acl.sjson`, the study's JSON (implies `formats`) | serde_json |
//! | `gltf` | `motion::gltf`: glTF 2.0 `.gltf`/`.glb` in `motion`'s loader (implies `motion`) | gltf |
//! | `anim` | `anim` and `keyframe` (implies `motion`) | |
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
#[cfg(feature = "anim")]
pub mod anim;
pub mod bits;
#[cfg(feature = "serde")]
pub mod bytes_json;
pub mod cbtk_columns;
#[cfg(feature = "formats")]
pub mod chunk;
#[cfg(feature = "formats")]
pub mod curve;
pub mod fixtures;
pub mod format;
mod generated_support;
#[cfg(any(feature = "binrw", feature = "deku", feature = "bitvec"))]
pub mod interop;
pub mod io;
#[cfg(feature = "anim")]
pub mod keyframe;
#[cfg(feature = "motion")]
pub mod motion;
#[cfg(feature = "formats")]
pub mod netquant;
pub mod positional;
pub mod process;
#[cfg(feature = "formats")]
pub mod quant;
pub mod reflect;
#[cfg(feature = "formats")]
pub mod rply_xform;
#[cfg(feature = "formats")]
pub mod smallest3;
#[cfg(feature = "formats")]
pub mod snap_delta;
#[cfg(feature = "formats")]
pub mod snap_quant;
#[cfg(feature = "formats")]
pub mod thin;

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
