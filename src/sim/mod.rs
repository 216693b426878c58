//! Simulations and reports built on the format APIs: inputs generated from motion, and
//! measurements of what a format keeps of them. Nothing here reads or writes bytes itself;
//! it drives the recorders and players of [`crate::formats`].
//!
//! - [`rply_crowd`]: a crowd of walkers recorded as an RPLY v3 replay, its reconstruction
//!   errors, and the check of a replay against the motion it was recorded from
//!   (`statepack rply-crowd`, `statepack verify --against`).
//! - [`study_report`]: the keyframe-compression study's tables (sizes from the study-track
//!   writer, errors from forward kinematics) over the study's clips (`statepack clip study`).
//! - [`acl_compare`]: the animation clip codec against ACL's published figures on the same
//!   clips (`statepack clip versus-acl`).
//! - [`cbtrack_match`]: CBTK matches made in code (a motion clip as a crowd of units, the
//!   spec's scale match, the small sample file with every chunk kind).
//! - [`wsnap_swarm`]: the world snapshot's bot swarm through encoder, per-client assembler
//!   and client decoder, with downstream bytes and quantization error (`statepack wsnap sim`).

pub mod acl_compare;
pub mod cbtrack_match;
pub mod rply_crowd;
pub mod study_report;
pub mod wsnap_swarm;
