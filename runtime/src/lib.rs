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
//! - [`quant`]: quantizers (smallest-three, axis-angle) with their steps and worst-case errors.
//! - [`delta`]: absolute/delta chains, closed-loop against what the decoder reconstructs.
//! - [`replay_xform`]: RPLY v3 transform quantizers (axis-angle, yaw) and closed-loop deltas.
//! - [`chunk`]: splitting a blob into storage chunks and joining them back, checksum-verified.
//! - [`curve`]: interpolation (lerp, nlerp with hemisphere check).
//! - [`motion`]: motion input (BVH, the study's JSON clips, the study's walk generated in code)
//!   as one skeleton + local transforms model, with forward kinematics.
//! - [`columns`]: column chunks (directory, typed columns), zlib framing and the column
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
//! - [`fixtures`]: finds the real input files that tests, benches and the demo read in place.
pub mod anim;
pub mod bits;
pub mod chunk;
pub mod columns;
pub mod curve;
pub mod delta;
pub mod fixtures;
pub mod io;
pub mod keyframe;
pub mod motion;
pub mod netquant;
pub mod positional;
pub mod process;
pub mod quant;
pub mod reflect;
pub mod replay_xform;
pub mod smallest3;
pub mod thin;
