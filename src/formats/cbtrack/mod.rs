//! CBTK v1 columnar replay tracks: the semantic API over the generated raw types.
//!
//! - [`Track`]: the header and the window index, read without touching a window; every chunk
//!   is found by block number x 64 and inflated on demand.
//! - [`MainWindow`] and its parts: one window's keys as the reader sees them, decoded from the
//!   generated column sets ([`raw::UnitsColumns`] and the others) with the column codecs of
//!   [`statepack_runtime::cbtk_columns`]; [`MainWindow::to_chunk`] lays them out again.
//! - [`WindowChunk`]: a window as [`Track::window`] keeps it, its inflated main chunk, whose
//!   entries ([`WindowChunk::visit`]) and a frame's states ([`WindowChunk::sample_each`]) are
//!   decoded one at a time, so memory stays within the chunk's own size.
//! - [`MainWindow::sample`]: a frame's full state (units and projectiles alive, transform,
//!   status, targets, pose tracks, build queues, projectiles on their cubic, team numbers).
//! - [`Player`]: seeks across windows, moving terrain forward or backward and reading only
//!   the terrain chunks in between; [`Player::sample_each`] hands a frame's state over one
//!   item at a time.
//! - [`writer`]: thinning writer from recorded samples, with the spec's writer rules.
//!
//! Layout: `schema/cbtrack_v1.ksy`. Decisions where the spec is silent: `docs/formats/cbtrack.md`.

use crate::generated::cbtrack_v1 as raw;
use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};
use statepack_codecs::curve::{hermite, hermite_velocity, nlerp_d};
use statepack_codecs::smallest3;
use statepack_runtime::cbtk_columns::{
    self, time_decode, wrap_decode, ColumnChunk, ColumnData, DirEntry, EscapeDecoder, LUA_MAX,
};
use statepack_runtime::io::{
    ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath,
    PathSeg,
};

mod events;
mod info;
mod json;
mod main_chunk;
mod registry;
mod sampling;
mod track;
mod views;
mod window;
pub mod writer;

pub use events::{decode_events, decode_traced};
pub use info::*;
pub use json::{write_json, write_sample};
pub use main_chunk::*;
pub use registry::*;
pub use sampling::*;
pub use track::*;
use views::*;
pub use window::*;

pub use raw::{CbtkHead, CbtrackV1, WindowEntry};

/// The four bytes every CBTK file starts with.
pub const MAGIC: &[u8; 4] = b"CBTK";
/// The header size a version 1 writer uses.
pub const HEADER_SIZE: usize = 96;
/// Projectile weapon definition of a projectile that has none (debris).
pub const NO_WEAPON: u16 = 65535;
/// Owner index of a projectile whose unit is not in the window.
pub const NO_OWNER: u16 = 65535;
/// First code of a rules parameter among team numbers.
pub const RULES_PARAM_BASE: u16 = 256;

fn semantic(path: FieldPath, offset: u64, msg: impl Into<String>) -> DecodeError {
    DecodeError::at(path, offset, DecodeErrorKind::Semantic(msg.into()))
}

fn fpath(segs: &[PathSeg]) -> FieldPath {
    FieldPath::from_segments(segs.iter().cloned())
}

fn enc(msg: impl Into<String>) -> EncodeError {
    EncodeError::new(EncodeErrorKind::Semantic(msg.into()))
}
