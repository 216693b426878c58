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

pub mod acl_compare;
pub mod rply_crowd;
pub mod study_report;
