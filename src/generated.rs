//! Raw types generated from `schema/*.ksy` at build time (the raw layer: an exact mirror of
//! the bytes, lossless in both directions). The same code is checked in under `generated/`.

/// SNAP v1.3 snapshot recordings, from `schema/snap_v1_3.ksy` (see `docs/formats/snap.md`).
#[allow(clippy::all, unused_parens, unused_braces)]
pub mod snap_v1_3 {
    include!(concat!(env!("OUT_DIR"), "/snap_v1_3.rs"));
}
