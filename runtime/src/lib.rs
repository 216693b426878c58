#![warn(missing_docs)]
//! statepack-runtime: the hand-written half of statepack.
//!
//! Generated raw types (from `schema/*.ksy`) read and write bytes through [`io`]; everything a
//! layout alone cannot say lives in the other modules:
//!
//! - [`io`]: bounds-checked byte reader and writer, field-path errors with byte offsets.
//! - [`quant`]: quantizers (smallest-three, axis-angle) with their steps and worst-case errors.
//! - [`delta`]: absolute/delta chains, closed-loop against what the decoder reconstructs.
//! - [`curve`]: interpolation (lerp, nlerp with hemisphere check).
//! - [`motion`]: motion input (BVH, the study's JSON clips, the study's walk generated in code)
//!   as one skeleton + local transforms model, with forward kinematics.
//! - [`anim`]: statepack's animation clip codec (tolerance-driven keys, per-track bit widths,
//!   world-space verification) and its decoder.
//! - [`keyframe`]: the animation keyframe-compression study's pipeline (constant channels,
//!   keyframe reduction, quantisation, forward-kinematics error).
//! - [`fixtures`]: finds the real input files that tests, benches and the demo read in place.
pub mod anim;
pub mod curve;
pub mod delta;
pub mod fixtures;
pub mod io;
pub mod keyframe;
pub mod motion;
pub mod quant;
