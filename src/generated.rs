//! Raw types generated from `schema/*.ksy` at build time: one module per schema, named after
//! the file (`schema/snap_v1_3.ksy` -> [`snap_v1_3`]). This is the raw layer: an exact mirror
//! of the bytes, lossless in both directions. The same code is checked in under `generated/`
//! for review.

include!(concat!(env!("OUT_DIR"), "/mod.rs"));
