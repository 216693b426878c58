//! RPLY v3 op-stream replays (`specs/rply-v3.txt`): the semantic API over the generated raw
//! types.
//!
//! - [`Recorder`]: per tick, spawns and despawns (descriptor, parent), transforms (full XFORM
//!   or closed-loop XFORM_D deltas under configurable thresholds), watched property changes,
//!   animation play/stop/speed, events with JSON payloads, custom channel bytes and geometry
//!   snapshots. Strings are interned 1-based in first-use order; tick markers are written
//!   lazily before a tick's first op; every `keyframe_every` ticks a keyframe (every live
//!   entity a full XFORM) is written and indexed.
//! - [`Player`]: opens a replay reading only the header, the string table and the keyframe
//!   index (the schema's `rply_head`, through its generated reader); [`Player::seek`] jumps to the nearest keyframe at or before a tick and replays
//!   forward; [`Player::advance`] plays one tick; [`Player::state`] is the state at the
//!   current tick (entities with parent, descriptor, transform, properties, playing
//!   animations and snapshot; recent events and custom payloads).
//! - [`verify`]: the full check of a file (raw layout, every op against the player's rules,
//!   the keyframe index against the op stream, nothing after the last tick); keyframes
//!   that omit a live entity are accepted and counted ([`Player::keyframe_holds`]), and so
//!   is an idle tail, a `tick_count` past the op stream's last marker (the reference
//!   recorder writes nothing for idle ticks), at no cost per idle tick.
//! - [`save_chunks`] / [`load_chunks`]: storage in 3 MiB chunks with a checksummed meta
//!   record ([`statepack_codecs::chunk`]).
//!
//! The byte layout is `schema/rply_v3.ksy`; the quantizers and the delta chain are
//! [`statepack_codecs::rply_xform`]. The decisions taken where the spec is silent, where
//! the reference implementation (Flashback) fixes a convention, and where this code differs
//! from it are listed in `docs/formats/rply.md`.
//!
//! Files: `recorder.rs`, `player.rs` (with [`verify`]), `chunks.rs`, `rig.rs`
//! ([`RigBuilder`]), [`samples`] and `registry.rs` (the [`FORMAT`] entry); each depends
//! only on this module's items (constants, [`RplyError`], [`PropValue`]) and the public API
//! of the others.

mod chunks;
mod player;
mod recorder;
mod registry;
mod rig;
pub mod samples;

pub use chunks::{load_chunks, save_chunks};
pub use player::{
    verify, AnimState, CustomRecord, EntityState, EventRecord, Header, Player, State,
};
pub use recorder::{compact_id, Recorder, RecorderOptions, RecorderStats};
pub use registry::FORMAT;
pub use rig::RigBuilder;

use crate::generated::rply_v3 as raw;
use statepack_codecs::chunk::ChunkError;
use statepack_runtime::io::{DecodeError, EncodeError};
use std::sync::Arc;

pub use raw::{Op, OpBody, Opcode, RplyV3};

/// The four magic bytes ("RPLY", the u32 0x594C5052 little-endian).
pub const MAGIC: &[u8; 4] = b"RPLY";
/// The only format version read and written.
pub const VERSION: u8 = 3;
/// The only SNAPSHOT payload version read and written.
pub const SNAPSHOT_VERSION: u8 = 10;
/// Header length in bytes.
pub const HEADER_LEN: usize = 30;
/// Default tick rate (ticks per second).
pub const DEFAULT_TICK_RATE: u8 = 15;
/// Default keyframe interval in ticks (the reference implementation's 300, 20 s at 15 Hz).
pub const DEFAULT_KEYFRAME_EVERY: u32 = 300;
/// Most strings a table can hold (ids are u16, 0 means none).
pub const MAX_STRINGS: usize = 65_535;

/// Each effect class's property list (classes 1..=11 in `schema/rply_v3.ksy`'s
/// `effect_class` order); an effect property's `prop_index` is 1-based into its class's list.
/// This is the reference implementation's list, which the spec names but does not give
/// (docs/formats/rply.md, "SNAPSHOT blocks this project defines").
pub const EFFECT_PROPERTIES: [&[&str]; 11] = [
    &["Position", "Orientation"],
    &[
        "SoundId",
        "Volume",
        "PlaybackSpeed",
        "Looped",
        "Playing",
        "TimePosition",
        "RollOffMinDistance",
        "RollOffMaxDistance",
        "RollOffMode",
    ],
    &[
        "Texture",
        "Enabled",
        "Rate",
        "Lifetime",
        "Speed",
        "Size",
        "Transparency",
        "Color",
        "Squash",
        "LightEmission",
        "LightInfluence",
        "Rotation",
        "RotSpeed",
        "SpreadAngle",
        "Acceleration",
        "Drag",
        "EmissionDirection",
        "Orientation",
        "Shape",
        "ShapeStyle",
        "ShapeInOut",
        "ShapePartial",
        "ZOffset",
        "Brightness",
        "LockedToPart",
        "VelocityInheritance",
        "TimeScale",
        "FlipbookLayout",
        "FlipbookMode",
        "FlipbookFramerate",
        "FlipbookStartRandom",
    ],
    &[
        "Attachment0",
        "Attachment1",
        "Texture",
        "TextureLength",
        "TextureMode",
        "TextureSpeed",
        "Color",
        "Transparency",
        "Width0",
        "Width1",
        "CurveSize0",
        "CurveSize1",
        "Segments",
        "LightEmission",
        "LightInfluence",
        "FaceCamera",
        "ZOffset",
        "Enabled",
        "Brightness",
    ],
    &[
        "Attachment0",
        "Attachment1",
        "Texture",
        "TextureLength",
        "TextureMode",
        "Color",
        "Transparency",
        "Lifetime",
        "MinLength",
        "MaxLength",
        "WidthScale",
        "LightEmission",
        "LightInfluence",
        "FaceCamera",
        "Enabled",
        "Brightness",
    ],
    &[
        "Enabled",
        "Size",
        "Heat",
        "Color",
        "SecondaryColor",
        "TimeScale",
    ],
    &[
        "Enabled",
        "Size",
        "Opacity",
        "RiseVelocity",
        "Color",
        "TimeScale",
    ],
    &["Enabled", "SparkleColor", "TimeScale"],
    &["Enabled", "Brightness", "Color", "Range", "Shadows"],
    &[
        "Enabled",
        "Brightness",
        "Color",
        "Range",
        "Shadows",
        "Angle",
        "Face",
    ],
    &[
        "Enabled",
        "Brightness",
        "Color",
        "Range",
        "Shadows",
        "Angle",
        "Face",
    ],
];

/// The name of property `prop_index` (1-based) of an effect class, or `None` when the index
/// is outside the class's list (such a property is kept as stored and ignored on rebuild).
pub fn effect_property_name(class: raw::EffectClass, prop_index: u8) -> Option<&'static str> {
    let list = EFFECT_PROPERTIES[class.to_i() as usize - 1];
    list.get(usize::from(prop_index).checked_sub(1)?).copied()
}

/// Errors of the RPLY semantic layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RplyError {
    /// The bytes are not a valid RPLY v3 replay (field path and byte offset included).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A value cannot be written (does not fit its field).
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// The string table is full: a 65,536th distinct string was interned.
    #[error("string table full: 65,535 distinct strings already interned, cannot add {0:?} (unique strings such as per-event payloads exhaust it; reuse payloads or send them on a CUSTOM channel)")]
    StringTableFull(String),
    /// The replay was recorded for another place version.
    #[error("place version mismatch: the replay was recorded at place version {found}, this player expects {expected}")]
    PlaceVersion {
        /// Version the player expects.
        expected: u32,
        /// Version in the header.
        found: u32,
    },
    /// A seek past the last tick.
    #[error("tick {tick} is past the replay's last tick {tick_count}")]
    TickOutOfRange {
        /// Tick asked for.
        tick: u32,
        /// Last tick of the replay.
        tick_count: u32,
    },
    /// Recorder misuse or a value out of range (unknown entity, ids exhausted, colour above 1...).
    #[error("{0}")]
    Input(String),
    /// Chunks cannot be joined.
    #[error(transparent)]
    Chunk(#[from] ChunkError),
}

/// A property value (PROP type tags 0–5). Equality is bitwise on the floating-point
/// kinds, so a NaN value equals its copy.
#[derive(Debug, Clone)]
pub enum PropValue {
    /// Tag 0, stored as one byte 0/1.
    Bool(bool),
    /// Tag 1, f64.
    Number(f64),
    /// Tag 2, a string (stored as a string id).
    String(Arc<str>),
    /// Tag 3, a colour as bytes 0..=255 per channel (see [`PropValue::color3`]).
    Color3([u8; 3]),
    /// Tag 4, three f32.
    Vector3([f32; 3]),
    /// Tag 5, an enum item's name (stored as a string id).
    Enum(Arc<str>),
}

/// A colour channel in `[0, 1]` as its byte, round(c × 255); anything else is an error
/// (the reference implementation wraps values above 1 modulo 256).
pub fn color_byte(c: f64) -> Result<u8, RplyError> {
    if !(0.0..=1.0).contains(&c) {
        return Err(RplyError::Input(format!(
            "colour channel {c} is outside [0, 1]"
        )));
    }
    Ok((c * 255.0).round() as u8)
}

impl PartialEq for PropValue {
    fn eq(&self, o: &Self) -> bool {
        use PropValue::*;
        match (self, o) {
            (Bool(a), Bool(b)) => a == b,
            (Number(a), Number(b)) => a.to_bits() == b.to_bits(),
            (String(a), String(b)) | (Enum(a), Enum(b)) => a == b,
            (Color3(a), Color3(b)) => a == b,
            (Vector3(a), Vector3(b)) => a.map(f32::to_bits) == b.map(f32::to_bits),
            _ => false,
        }
    }
}

impl PropValue {
    /// A Color3 value from channels in `[0, 1]`; a channel outside is an error.
    pub fn color3(r: f64, g: f64, b: f64) -> Result<Self, RplyError> {
        Ok(Self::Color3([
            color_byte(r)?,
            color_byte(g)?,
            color_byte(b)?,
        ]))
    }

    /// The value as JSON (`{"Color3": [r, g, b]}` style for the tagged kinds).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            PropValue::Bool(b) => json!(b),
            PropValue::Number(n) => json!({ "Number": jf(*n) }),
            PropValue::String(s) => json!(&**s),
            PropValue::Color3(c) => json!({ "Color3": c }),
            PropValue::Vector3(v) => json!({ "Vector3": v.map(|x| jf(f64::from(x))) }),
            PropValue::Enum(s) => json!({ "Enum": &**s }),
        }
    }
}

/// A float as JSON: the number when finite, else `"NaN"`, `"inf"` or `"-inf"`.
fn jf(x: f64) -> serde_json::Value {
    if x.is_finite() {
        serde_json::json!(x)
    } else if x.is_nan() {
        serde_json::json!("NaN")
    } else if x > 0.0 {
        serde_json::json!("inf")
    } else {
        serde_json::json!("-inf")
    }
}
