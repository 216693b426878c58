#![warn(missing_docs)]
//! statepack-codecs: the math of statepack's own formats.
//!
//! Everything between a format's semantic values (positions in studs, rotations as
//! quaternions, animation clips) and the integers its generated layout stores: quantizers,
//! delta chains closed over what the decoder reconstructs, interpolation, tolerance-driven
//! thinning, storage chunks, motion input and the animation clip codec. Generated code never
//! calls it; the semantic layer (`statepack::formats`) and the CLI do. It does not depend on
//! statepack-runtime, the crate generated code calls.
//!
//! - [`quant`]: the shared quantizers: one smallest-three core with a preset per format,
//!   fixed point, binary16 with its rounding and overflow rules, the rotation angle metric.
//! - [`netquant`]: world snapshot quantizers (grid-origin positions, smallest-three at 10
//!   bits, symmetric fixed point, clamps of NaN/Inf and ranges).
//! - [`snap_quant`]: SNAP's CFrame quantizer (axis-angle steps, smallest-three, Z packing).
//! - [`snap_delta`]: SNAP's absolute/delta chains, closed-loop against what the decoder
//!   reconstructs.
//! - [`rply_xform`]: RPLY v3 transform quantizers (axis-angle, yaw) and closed-loop deltas.
//! - [`smallest3`]: CBTK v1's smallest-three rotations at 8 to 16 bits through the shared
//!   core, and its front/up construction.
//! - [`chunk`]: splitting a blob into storage chunks and joining them back, CRC-32 verified.
//! - [`curve`]: interpolation (lerp, nlerp with hemisphere check, cubic Hermite).
//! - [`thin`]: tolerance-driven key selection.
//! - `motion` (feature `motion`): motion input (BVH, ACL `.acl.sjson`, the study's JSON
//!   clips, glTF 2.0 with feature `gltf`, the study's walk generated in code) as one
//!   skeleton + local transforms model, with forward kinematics.
//! - `anim` (feature `anim`): statepack's animation clip codec (tolerance-driven keys,
//!   per-track bit widths, world-space verification) and its decoder.
//! - `keyframe` (feature `anim`): the animation keyframe-compression study's pipeline
//!   (constant channels, keyframe reduction, quantisation, forward-kinematics error).
//!
//! ## Features
//!
//! The modules above `motion` are always built (glam, serde, thiserror). All features are on
//! by default:
//!
//! | feature | adds | dependencies |
//! |---|---|---|
//! | `motion` | `motion`: BVH, ACL `.acl.sjson`, the study's JSON | serde_json |
//! | `gltf` | `motion::gltf`: glTF 2.0 `.gltf`/`.glb` in `motion`'s loader (implies `motion`) | gltf |
//! | `anim` | `anim` and `keyframe` (implies `motion`) | flate2 (pure Rust) |
#[cfg(feature = "anim")]
pub mod anim;
pub mod chunk;
pub mod curve;
#[cfg(feature = "anim")]
pub mod keyframe;
#[cfg(feature = "motion")]
pub mod motion;
pub mod netquant;
pub mod quant;
pub mod rply_xform;
pub mod smallest3;
pub mod snap_delta;
pub mod snap_quant;
pub mod thin;
