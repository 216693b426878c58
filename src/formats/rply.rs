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
//!   index; [`Player::seek`] jumps to the nearest keyframe at or before a tick and replays
//!   forward; [`Player::advance`] plays one tick; [`Player::state`] is the state at the
//!   current tick (entities with parent, descriptor, transform, properties, playing
//!   animations and snapshot; recent events and custom payloads).
//! - [`verify`]: the full check of a file (raw layout, every op against the player's rules,
//!   the keyframe index against the op stream, the stream reaching `tick_count`); keyframes
//!   that omit a live entity are accepted and counted ([`Player::keyframe_holds`]).
//! - [`save_chunks`] / [`load_chunks`]: storage in 3 MiB chunks with a checksummed meta
//!   record ([`statepack_runtime::chunk`]).
//!
//! The byte layout is `schema/rply_v3.ksy`; the quantizers and the delta chain are
//! [`statepack_runtime::rply_xform`]. The decisions taken where the spec is silent, where
//! the reference implementation (Flashback) fixes a convention, and where this code differs
//! from it are listed in `docs/formats/rply.md`.

use crate::generated::rply_v3 as raw;
use glam::{DQuat, DVec3};
use statepack_runtime::chunk::{self, ChunkError, ChunkMeta};
use statepack_runtime::io::{
    ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError, FieldPath, PathSeg,
};
use statepack_runtime::rply_xform::{
    RotBase, Thresholds, XformEncoder, XformError, XformState, XformStep,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

pub use raw::{Op, OpBody, Opcode, RplyV3};

/// Length of an XFORM_D with a one-byte id (opcode, id, mask and payload) for each mask
/// byte, 0 for the masks the schema refuses (bits above 8, both position sizes, both
/// rotation kinds).
const XFORM_D_LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut m = 0;
    while m < 16 {
        if m & 3 != 3 && m & 12 != 12 {
            t[m] = (3 + 3 * (m & 1) + 6 * (m >> 1 & 1) + (m >> 2 & 1) + 3 * (m >> 3 & 1)) as u8;
        }
        m += 1;
    }
    t
};

/// Per-entity flags of the keyframe-state scan (see [`Player::skippable_xform`]): the
/// entity is live, its last XFORM carried a position (position deltas may follow), a yaw
/// (yaw deltas may follow) or a full rotation (rotation deltas may follow), and it shows a
/// position or a rotation.
const F_LIVE: u8 = 1;
const F_POS: u8 = 2;
const F_YAW: u8 = 4;
const F_TILT: u8 = 8;
const F_SHOWN: u8 = 16;

/// The flags an XFORM_D of each mask byte needs (live, and the delta bases of what it
/// carries); 0xFF for the masks the schema refuses, which no entity has.
const XFORM_D_NEED: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut m = 0;
    while m < 16 {
        if m & 3 != 3 && m & 12 != 12 {
            let mut f = F_LIVE;
            if m & 3 != 0 {
                f |= F_POS;
            }
            if m & 4 != 0 {
                f |= F_YAW;
            }
            if m & 8 != 0 {
                f |= F_TILT;
            }
            t[m] = f;
        }
        m += 1;
    }
    t
};

/// The flags an XFORM of mask `m` (schema-valid) leaves, given the entity's `before`.
fn flags_after_xform(before: u8, m: u8) -> u8 {
    let mut f = F_LIVE | (before & F_SHOWN);
    if m & 1 != 0 {
        f |= F_POS | F_SHOWN;
    }
    if m & 2 != 0 {
        f |= F_TILT | F_SHOWN;
    }
    if m & 4 != 0 {
        f |= F_YAW | F_SHOWN;
    }
    f
}

/// The scan flags of an entity's transform state.
fn flags_of(e: &EntityState) -> u8 {
    let x = &e.xform;
    let mut f = F_LIVE;
    if x.pos_base {
        f |= F_POS;
    }
    match x.base {
        RotBase::Yaw(_) => f |= F_YAW,
        RotBase::Tilted(_) => f |= F_TILT,
        RotBase::None => {}
    }
    if x.pos.is_some() || x.shown_rot.is_some() {
        f |= F_SHOWN;
    }
    f
}

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

/// Recorder settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecorderOptions {
    /// Ticks per second (header `tickRate`), default 15.
    pub tick_rate: u8,
    /// The place version written in the header.
    pub place_version: u32,
    /// Start time, seconds since 1970-01-01 UTC.
    pub start_unix: f64,
    /// Keyframe interval in ticks: ticks 1, 1 + n, 1 + 2n ... are keyframes (1 = every tick).
    pub keyframe_every: u32,
    /// Delta thresholds (0.05 studs, 0.5° by default).
    pub thresholds: Thresholds,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self {
            tick_rate: DEFAULT_TICK_RATE,
            place_version: 0,
            start_unix: 0.0,
            keyframe_every: DEFAULT_KEYFRAME_EVERY,
            thresholds: Thresholds::default(),
        }
    }
}

/// Counts of what the recorder wrote, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecorderStats {
    /// Transforms handed to [`Recorder::transform`].
    pub transforms_in: u64,
    /// Full XFORM ops written.
    pub xform_full: u64,
    /// Full XFORMs written because of a keyframe.
    pub xform_keyframe: u64,
    /// XFORM_D ops written.
    pub xform_delta: u64,
    /// Transforms skipped under the thresholds.
    pub skipped: u64,
    /// Tick markers written (TICK and TICK_NEXT).
    pub markers: u64,
}

#[derive(Debug, Clone, Default)]
struct RecEntity {
    enc: XformEncoder,
    last: Option<(DVec3, DQuat)>,
    written_tick: Option<u32>,
    props: HashMap<String, PropValue>,
    next_handle: u8,
    handles: BTreeSet<u8>,
    parent: u16,
}

/// Writes an RPLY v3 replay tick by tick (see the module docs). Entity ids are 1-based
/// and never reused; everything written before the first [`Recorder::begin_tick`] belongs to
/// tick 0.
///
/// ```
/// use statepack::formats::rply::{Player, Recorder, RecorderOptions};
/// use glam::{DQuat, DVec3};
/// let mut rec = Recorder::new(RecorderOptions::default());
/// let id = rec.spawn("part:Block", None).unwrap();
/// for t in 1..=30 {
///     rec.begin_tick().unwrap();
///     rec.transform(id, DVec3::new(t as f64 * 0.2, 3.0, 0.0), DQuat::IDENTITY).unwrap();
/// }
/// let bytes = rec.finish().unwrap();
/// let mut player = Player::open(&bytes).unwrap();
/// player.seek(20).unwrap();
/// let pos = player.state().entities[&id].xform.pos.unwrap();
/// assert!((pos.x - 4.0).abs() < 0.05);
/// ```
#[derive(Debug, Clone)]
pub struct Recorder {
    opts: RecorderOptions,
    strings: Vec<String>,
    index: HashMap<String, u16>,
    ops: ByteWriter,
    keyframes: Vec<raw::Keyframe>,
    entities: BTreeMap<u16, RecEntity>,
    next_id: u32,
    tick: u32,
    last_marker: u32,
    keyframe_tick: bool,
    stats: RecorderStats,
}

impl Recorder {
    /// A recorder at tick 0 with no entities.
    pub fn new(opts: RecorderOptions) -> Self {
        Self {
            opts,
            strings: Vec::new(),
            index: HashMap::new(),
            ops: ByteWriter::with_capacity(1 << 16),
            keyframes: Vec::new(),
            entities: BTreeMap::new(),
            next_id: 1,
            tick: 0,
            last_marker: 0,
            keyframe_tick: false,
            stats: RecorderStats::default(),
        }
    }

    /// What was written so far.
    pub fn stats(&self) -> RecorderStats {
        self.stats
    }

    /// The current tick.
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// Bytes of op stream written so far.
    pub fn op_bytes(&self) -> usize {
        self.ops.len()
    }

    /// The id of `s` in the string table, adding it on first use (ids are 1-based in
    /// first-use order). Errors: [`RplyError::StringTableFull`] past 65,535 strings; a
    /// string longer than 65,535 bytes is an input error.
    pub fn intern(&mut self, s: &str) -> Result<u16, RplyError> {
        if let Some(&id) = self.index.get(s) {
            return Ok(id);
        }
        if self.strings.len() >= MAX_STRINGS {
            return Err(RplyError::StringTableFull(s.chars().take(80).collect()));
        }
        if s.len() > usize::from(u16::MAX) {
            return Err(RplyError::Input(format!(
                "string of {} bytes does not fit a u16 length",
                s.len()
            )));
        }
        self.strings.push(s.to_owned());
        let id = self.strings.len() as u16;
        self.index.insert(s.to_owned(), id);
        Ok(id)
    }

    fn write_op(&mut self, opcode: Opcode, body: OpBody) -> Result<(), RplyError> {
        self.marker()?;
        Op { opcode, body }.write_to(&mut self.ops)?;
        Ok(())
    }

    /// Writes the tick marker if this tick has none yet: TICK_NEXT right after the last
    /// marker's tick, an absolute TICK after a gap.
    fn marker(&mut self) -> Result<(), RplyError> {
        if self.last_marker == self.tick {
            return Ok(());
        }
        let op = if self.tick == self.last_marker + 1 {
            Op {
                opcode: Opcode::TickNext,
                body: OpBody::OpTickNext(raw::OpTickNext {}),
            }
        } else {
            Op {
                opcode: Opcode::Tick,
                body: OpBody::OpTick(raw::OpTick { tick: self.tick }),
            }
        };
        op.write_to(&mut self.ops)?;
        self.last_marker = self.tick;
        self.stats.markers += 1;
        Ok(())
    }

    fn live(&self, id: u16) -> Result<(), RplyError> {
        if self.entities.contains_key(&id) {
            Ok(())
        } else {
            Err(RplyError::Input(format!("entity {id} is not live")))
        }
    }

    /// Ends the current tick (completing a keyframe: every live entity with a known
    /// transform that had no XFORM this tick gets a full one) and starts the next. On a
    /// keyframe tick (1, 1 + n, ...) the index entry is recorded at the current op-stream
    /// offset, where the tick's marker will be.
    pub fn begin_tick(&mut self) -> Result<(), RplyError> {
        self.complete_keyframe()?;
        self.tick = self
            .tick
            .checked_add(1)
            .ok_or_else(|| RplyError::Input("tick counter overflows u32".into()))?;
        let every = self.opts.keyframe_every.max(1);
        self.keyframe_tick = every == 1 || self.tick % every == 1;
        if self.keyframe_tick {
            let offset = u32::try_from(self.ops.len())
                .map_err(|_| RplyError::Input("op stream passes 4 GiB".into()))?;
            self.keyframes.push(raw::Keyframe {
                tick: self.tick,
                offset,
            });
        }
        Ok(())
    }

    fn complete_keyframe(&mut self) -> Result<(), RplyError> {
        if !self.keyframe_tick {
            return Ok(());
        }
        let tick = self.tick;
        let due: Vec<(u16, DVec3, DQuat)> = self
            .entities
            .iter()
            .filter(|(_, e)| e.written_tick != Some(tick))
            .filter_map(|(&id, e)| e.last.map(|(p, r)| (id, p, r)))
            .collect();
        for (id, p, r) in due {
            self.transform(id, p, r)?;
        }
        Ok(())
    }

    /// Spawns an entity with a descriptor (`char:<userId>`, `part:<Shape>`, `model:<name>`,
    /// `sub:<path>`, `asset:<id>`) and an optional live parent; returns its id (1, 2, ...).
    /// Errors: the parent is not live, ids past 65,535, a full string table.
    pub fn spawn(&mut self, descriptor: &str, parent: Option<u16>) -> Result<u16, RplyError> {
        if let Some(p) = parent {
            self.live(p)?;
        }
        let id = u16::try_from(self.next_id).map_err(|_| {
            RplyError::Input("entity ids exhausted (more than 65,535 spawns)".into())
        })?;
        let descriptor_str = self.intern(descriptor)?;
        self.write_op(
            Opcode::Spawn,
            OpBody::OpSpawn(raw::OpSpawn {
                entity_id: id,
                descriptor_str,
                parent_entity_id: parent.unwrap_or(0),
            }),
        )?;
        self.next_id += 1;
        self.entities.insert(
            id,
            RecEntity {
                next_handle: 1,
                parent: parent.unwrap_or(0),
                ..RecEntity::default()
            },
        );
        Ok(id)
    }

    /// Despawns an entity and then, as the reference implementation does, every live
    /// entity whose parent it was (recursively).
    pub fn despawn(&mut self, id: u16) -> Result<(), RplyError> {
        self.live(id)?;
        self.write_op(
            Opcode::Despawn,
            OpBody::OpDespawn(raw::OpDespawn { entity_id: id }),
        )?;
        self.entities.remove(&id);
        let children: Vec<u16> = self
            .entities
            .iter()
            .filter(|(_, e)| e.parent == id)
            .map(|(&c, _)| c)
            .collect();
        for c in children {
            self.despawn(c)?;
        }
        Ok(())
    }

    /// Records an entity's transform this tick (position in studs, rotation a unit
    /// quaternion (x, y, z, w)): a full XFORM on a keyframe tick or without a base, a
    /// delta otherwise, nothing under the thresholds.
    pub fn transform(&mut self, id: u16, pos: DVec3, rot: DQuat) -> Result<(), RplyError> {
        self.live(id)?;
        let tick = self.tick;
        let th = self.opts.thresholds;
        let keyframe = self.keyframe_tick;
        let e = self.entities.get_mut(&id).expect("live");
        let force = keyframe && e.written_tick != Some(tick);
        let step = e
            .enc
            .encode(pos, rot, force, &th)
            .map_err(|err| RplyError::Input(format!("entity {id}: {err}")))?;
        e.last = Some((pos, rot));
        self.stats.transforms_in += 1;
        let Some(step) = step else {
            self.stats.skipped += 1;
            return Ok(());
        };
        e.written_tick = Some(tick);
        let mask = step.mask();
        match step {
            XformStep::Full { pos, rot, yaw } => {
                self.stats.xform_full += 1;
                if force {
                    self.stats.xform_keyframe += 1;
                }
                self.write_op(
                    Opcode::Xform,
                    OpBody::OpXform(raw::OpXform {
                        entity_id: id,
                        mask,
                        pos,
                        rot,
                        yaw,
                    }),
                )
            }
            XformStep::Delta {
                pos8,
                pos16,
                yaw,
                rot,
            } => {
                self.stats.xform_delta += 1;
                let (id_byte, id_wide) = compact_id(id);
                self.write_op(
                    Opcode::XformD,
                    OpBody::OpXformD(raw::OpXformD {
                        id_byte,
                        id_wide,
                        mask,
                        pos8,
                        pos16,
                        yaw,
                        rot,
                    }),
                )
            }
        }
    }

    /// Records a watched property (`Transparency`, `Body/Exhaust/Enabled`, `@Attribute`,
    /// `Scale`). Only changes are written: a value equal to the last one written for the
    /// same entity and name is skipped.
    pub fn prop(&mut self, id: u16, name: &str, value: PropValue) -> Result<(), RplyError> {
        self.live(id)?;
        if self.entities[&id].props.get(name) == Some(&value) {
            return Ok(());
        }
        let name_str = self.intern(name)?;
        let (type_tag, v) = match &value {
            PropValue::Bool(b) => (
                raw::PropType::Bool,
                raw::OpPropValue::PropBool(raw::PropBool {
                    value: u8::from(*b),
                }),
            ),
            PropValue::Number(n) => (
                raw::PropType::Number,
                raw::OpPropValue::PropNumber(raw::PropNumber { value: *n }),
            ),
            PropValue::String(s) => (
                raw::PropType::String,
                raw::OpPropValue::PropStrRef(raw::PropStrRef {
                    str_id: self.intern(s)?,
                }),
            ),
            PropValue::Color3([r, g, b]) => (
                raw::PropType::Color3,
                raw::OpPropValue::Color3(raw::Color3 {
                    r: *r,
                    g: *g,
                    b: *b,
                }),
            ),
            PropValue::Vector3([x, y, z]) => (
                raw::PropType::Vector3,
                raw::OpPropValue::Vec3(raw::Vec3 {
                    x: *x,
                    y: *y,
                    z: *z,
                }),
            ),
            PropValue::Enum(s) => (
                raw::PropType::Enum,
                raw::OpPropValue::PropStrRef(raw::PropStrRef {
                    str_id: self.intern(s)?,
                }),
            ),
        };
        self.write_op(
            Opcode::Prop,
            OpBody::OpProp(raw::OpProp {
                entity_id: id,
                name_str,
                type_tag,
                value: v,
            }),
        )?;
        self.entities
            .get_mut(&id)
            .expect("live")
            .props
            .insert(name.to_owned(), value);
        Ok(())
    }

    /// Starts an animation track (fade in seconds, 0..=2.55 in 1/100 s; speed in
    /// -128..128 in 1/256) and returns its handle (1..=255, cycling, skipping handles
    /// still playing).
    pub fn anim_play(
        &mut self,
        id: u16,
        anim_id: &str,
        fade_s: f64,
        speed: f64,
    ) -> Result<u8, RplyError> {
        self.live(id)?;
        let fade = fade_code(fade_s)?;
        let speed = speed_code(speed)?;
        let e = &self.entities[&id];
        if e.handles.len() >= 255 {
            return Err(RplyError::Input(format!(
                "entity {id} has 255 animation tracks playing; stop one first"
            )));
        }
        let mut handle = e.next_handle.max(1);
        while e.handles.contains(&handle) {
            handle = handle % 255 + 1;
        }
        let anim_id_str = self.intern(anim_id)?;
        self.write_op(
            Opcode::AnimPlay,
            OpBody::OpAnimPlay(raw::OpAnimPlay {
                entity_id: id,
                anim_id_str,
                handle,
                fade,
                speed,
            }),
        )?;
        let e = self.entities.get_mut(&id).expect("live");
        e.handles.insert(handle);
        e.next_handle = handle % 255 + 1;
        Ok(handle)
    }

    /// Stops a playing track (fade in seconds, 0..=2.55).
    pub fn anim_stop(&mut self, id: u16, handle: u8, fade_s: f64) -> Result<(), RplyError> {
        self.live(id)?;
        let fade = fade_code(fade_s)?;
        if !self.entities[&id].handles.contains(&handle) {
            return Err(RplyError::Input(format!(
                "entity {id} has no track {handle} playing"
            )));
        }
        self.write_op(
            Opcode::AnimStop,
            OpBody::OpAnimStop(raw::OpAnimStop {
                entity_id: id,
                handle,
                fade,
            }),
        )?;
        self.entities
            .get_mut(&id)
            .expect("live")
            .handles
            .remove(&handle);
        Ok(())
    }

    /// Changes a playing track's speed (-128..128, in 1/256).
    pub fn anim_speed(&mut self, id: u16, handle: u8, speed: f64) -> Result<(), RplyError> {
        self.live(id)?;
        let speed = speed_code(speed)?;
        if !self.entities[&id].handles.contains(&handle) {
            return Err(RplyError::Input(format!(
                "entity {id} has no track {handle} playing"
            )));
        }
        self.write_op(
            Opcode::AnimSpeed,
            OpBody::OpAnimSpeed(raw::OpAnimSpeed {
                entity_id: id,
                handle,
                speed,
            }),
        )
    }

    /// Records a gameplay event; the payload is stored as compact JSON text in the string
    /// table (so each distinct payload costs a string).
    pub fn event(&mut self, name: &str, payload: &serde_json::Value) -> Result<(), RplyError> {
        let text = payload.to_string();
        let name_str = self.intern(name)?;
        let payload_str = self.intern(&text)?;
        self.write_op(
            Opcode::Event,
            OpBody::OpEvent(raw::OpEvent {
                name_str,
                payload_str,
            }),
        )
    }

    /// Records bytes on a named channel (at most 65,535 bytes).
    pub fn custom(&mut self, channel: &str, data: &[u8]) -> Result<(), RplyError> {
        if data.len() > usize::from(u16::MAX) {
            return Err(RplyError::Input(format!(
                "custom payload of {} bytes does not fit a u16 length",
                data.len()
            )));
        }
        let channel_str = self.intern(channel)?;
        self.write_op(
            Opcode::Custom,
            OpBody::OpCustom(raw::OpCustom {
                channel_str,
                data: data.to_vec(),
            }),
        )
    }

    /// Records an entity's geometry snapshot (version 10; see [`RigBuilder`] for a helper).
    pub fn snapshot(&mut self, id: u16, snapshot: &raw::Snapshot) -> Result<(), RplyError> {
        self.live(id)?;
        self.write_op(
            Opcode::Snapshot,
            OpBody::OpSnapshot(raw::OpSnapshot {
                entity_id: id,
                snapshot: Box::new(snapshot.clone()),
            }),
        )
    }

    /// The replay so far: header, string table, keyframe index, op stream. Completes the
    /// current keyframe first and writes the current tick's marker when the tick has none
    /// (so the stream's last marker is `tick_count`); recording can continue afterwards. Errors: more than 65,535
    /// keyframes, an op stream past 4 GiB.
    pub fn finish(&mut self) -> Result<Vec<u8>, RplyError> {
        self.complete_keyframe()?;
        // The op stream always reaches the last tick (a bare marker when it wrote nothing),
        // as the reference recorder's files do: that is how `verify` checks `tick_count`.
        self.marker()?;
        let ops = self.ops.as_bytes();
        let mut w = ByteWriter::with_capacity(HEADER_LEN + ops.len() + 16 * self.strings.len());
        w.write_bytes(MAGIC);
        w.write_u8(VERSION);
        w.write_u8(self.opts.tick_rate);
        w.write_u32le(self.opts.place_version);
        w.write_f64le(self.opts.start_unix);
        w.write_u32le(self.tick);
        let fit = |n: usize, what: &str, ty_max: u64| {
            if n as u64 > ty_max {
                Err(RplyError::Input(format!(
                    "{n} {what} do not fit the header"
                )))
            } else {
                Ok(n)
            }
        };
        w.write_u16le(fit(self.strings.len(), "strings", 65_535)? as u16);
        w.write_u16le(fit(
            self.keyframes.len(),
            "keyframes (raise keyframe_every)",
            65_535,
        )? as u16);
        w.write_u32le(fit(ops.len(), "op-stream bytes", u64::from(u32::MAX))? as u32);
        for s in &self.strings {
            w.write_u16le(s.len() as u16);
            w.write_bytes(s.as_bytes());
        }
        for k in &self.keyframes {
            w.write_u32le(k.tick);
            w.write_u32le(k.offset);
        }
        w.write_bytes(ops);
        Ok(w.into_bytes())
    }
}

/// XFORM_D's compact entity id: one byte below 255, else 255 and the u16.
pub fn compact_id(id: u16) -> (u8, Option<u16>) {
    if id < 255 {
        (id as u8, None)
    } else {
        (255, Some(id))
    }
}

fn fade_code(fade_s: f64) -> Result<u8, RplyError> {
    let c = (fade_s * 100.0).round();
    if !(0.0..=255.0).contains(&c) {
        return Err(RplyError::Input(format!(
            "fade {fade_s} s is outside 0..=2.55 s"
        )));
    }
    Ok(c as u8)
}

fn speed_code(speed: f64) -> Result<i16, RplyError> {
    let c = (speed * 256.0).round();
    if !(-32768.0..=32767.0).contains(&c) {
        return Err(RplyError::Input(format!(
            "animation speed {speed} is outside -128..128 (the reference implementation clamps)"
        )));
    }
    Ok(c as i16)
}

/// The header fields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Header {
    /// Ticks per second.
    pub tick_rate: u8,
    /// Place version recorded.
    pub place_version: u32,
    /// Start time, seconds since 1970-01-01 UTC.
    pub start_unix: f64,
    /// Last tick of the replay.
    pub tick_count: u32,
    /// Strings in the table.
    pub string_count: u16,
    /// Keyframe index entries.
    pub keyframe_count: u16,
    /// Op-stream length in bytes.
    pub op_bytes: u32,
}

/// An animation track playing on an entity.
#[derive(Debug, Clone, PartialEq)]
pub struct AnimState {
    /// The animation asset id.
    pub anim_id: Arc<str>,
    /// Fade-in time in seconds.
    pub fade_s: f64,
    /// Current speed.
    pub speed: f64,
    /// Tick the track started.
    pub started_tick: u32,
}

/// One entity's state at the player's current tick.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityState {
    /// Entity id.
    pub id: u16,
    /// Descriptor string.
    pub descriptor: Arc<str>,
    /// Parent entity id, 0 for none.
    pub parent: u16,
    /// Tick of its SPAWN.
    pub spawn_tick: u32,
    /// Reconstructed transform and delta base.
    pub xform: XformState,
    /// Last value of every property written.
    pub props: BTreeMap<Arc<str>, PropValue>,
    /// Tracks playing, by handle.
    pub anims: BTreeMap<u8, AnimState>,
    /// The last snapshot decoded for it.
    pub snapshot: Option<Arc<raw::Snapshot>>,
}

/// A gameplay event as played.
#[derive(Debug, Clone, PartialEq)]
pub struct EventRecord {
    /// Tick of the event.
    pub tick: u32,
    /// Event name.
    pub name: Arc<str>,
    /// The JSON payload's text (checked to be JSON when played).
    pub payload: Arc<str>,
}

/// Custom channel bytes as played.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomRecord {
    /// Tick of the payload.
    pub tick: u32,
    /// Channel name.
    pub channel: Arc<str>,
    /// The bytes.
    pub data: Vec<u8>,
}

/// The state at the player's current tick.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct State {
    /// Current tick (`None` before the first [`Player::advance`] or [`Player::seek`]).
    pub tick: Option<u32>,
    /// Live entities by id.
    pub entities: BTreeMap<u16, EntityState>,
    /// Events of the last second (ticks `tick - tick_rate + 1 ..= tick`).
    pub recent_events: Vec<EventRecord>,
    /// Custom payloads of the last second.
    pub recent_custom: Vec<CustomRecord>,
}

impl State {
    /// The state as JSON (what `statepack sample` prints): rotation as (x, y, z, w).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let f = jf;
        let entities: Vec<_> = self
            .entities
            .values()
            .map(|e| {
                let props: serde_json::Map<String, serde_json::Value> =
                    e.props.iter().map(|(k, v)| (k.to_string(), v.to_json())).collect();
                json!({
                    "id": e.id,
                    "descriptor": &*e.descriptor,
                    "parent": e.parent,
                    "spawn_tick": e.spawn_tick,
                    "position_studs": e.xform.pos.map(|p| [f(p.x), f(p.y), f(p.z)]),
                    "rotation_xyzw": e.xform.shown_rot.map(|q| [f(q.x), f(q.y), f(q.z), f(q.w)]),
                    "yaw_only": matches!(e.xform.base, statepack_runtime::rply_xform::RotBase::Yaw(_)),
                    "props": props,
                    "animations": e.anims.iter().map(|(h, a)| json!({
                        "handle": h, "anim_id": &*a.anim_id, "fade_s": f(a.fade_s),
                        "speed": f(a.speed), "started_tick": a.started_tick,
                    })).collect::<Vec<_>>(),
                    "snapshot": e.snapshot.as_ref().map(|s| json!({
                        "name": s.name.value, "is_model": s.is_model == 1,
                        "parts": s.parts.len(), "joints": s.joints.len(),
                    })),
                })
            })
            .collect();
        json!({
            "tick": self.tick,
            "entities": entities,
            "recent_events": self.recent_events.iter().map(|e| json!({
                "tick": e.tick, "name": &*e.name,
                "payload": serde_json::from_str::<serde_json::Value>(&e.payload).unwrap_or(serde_json::Value::Null),
            })).collect::<Vec<_>>(),
            "recent_custom": self.recent_custom.iter().map(|c| json!({
                "tick": c.tick, "channel": &*c.channel, "bytes": c.data.len(),
            })).collect::<Vec<_>>(),
        })
    }
}

#[derive(Debug, Clone)]
struct Checkpoint {
    state: State,
    cursor: usize,
}

/// Plays an RPLY v3 replay (see the module docs). Borrowing the bytes, it reads only the
/// header, string table and keyframe index on open; ops are read as playback reaches them.
///
/// Seeking restores the state saved at the nearest keyframe at or before the target
/// (entities, properties, animations, snapshots and recent events, *without* transforms,
/// which the keyframe's full XFORMs supply; *with* them when the keyframe omits a live
/// entity, which then holds its last transform) and replays forward. A keyframe's saved
/// state is taken the first time playback passes it, so the first seek far ahead plays the
/// ops up to there once. Seeking and playing reach equal states and refuse the same files
/// with the same errors.
///
/// Errors ([`RplyError::Decode`], with the field path and byte offset): anything the raw
/// layer refuses, and the rules of [`Player::verify_all`] that playing checks (entity ids
/// live, string ids in the table, markers in order, deltas with their bases, JSON event
/// payloads, keyframe offsets).
#[derive(Debug, Clone)]
pub struct Player<'a> {
    bytes: &'a [u8],
    header: Header,
    strings: Vec<Arc<str>>,
    json_ok: Vec<bool>,
    keyframes: Vec<raw::Keyframe>,
    op_start: usize,
    op_end: usize,
    cursor: usize,
    marker_tick: u32,
    state: State,
    checkpoints: HashMap<usize, Checkpoint>,
    checkpoint_cost: usize,
    skip_xforms: bool,
    ops_applied: u64,
    strict: bool,
    last_full: HashMap<u16, u32>,
    keyframe_holds: u64,
    flags: Vec<u8>,
}

fn sem(path: &[PathSeg], offset: usize, msg: String) -> DecodeError {
    DecodeError::at(
        FieldPath::from_segments(path.iter().cloned()),
        offset as u64,
        DecodeErrorKind::Semantic(msg),
    )
}

impl<'a> Player<'a> {
    /// Opens a replay: header (magic, version 3), string table and keyframe index. The op
    /// byte count must match the rest of the file exactly; counts are checked against the
    /// bytes left before anything is allocated; keyframe ticks must increase and offsets
    /// lie inside the op stream.
    pub fn open(bytes: &'a [u8]) -> Result<Self, RplyError> {
        let mut r = ByteReader::new(bytes);
        r.expect(MAGIC).map_err(|e| e.in_field("magic"))?;
        let version = r.read_u8().map_err(|e| e.in_field("version"))?;
        if version != VERSION {
            return Err(sem(
                &[PathSeg::Field("version")],
                4,
                format!("version {version} is not supported (only {VERSION})"),
            )
            .into());
        }
        let tick_rate = r.read_u8().map_err(|e| e.in_field("tick_rate"))?;
        let place_version = r.read_u32le().map_err(|e| e.in_field("place_version"))?;
        let start_unix = r.read_f64le().map_err(|e| e.in_field("start_unix"))?;
        let tick_count = r.read_u32le().map_err(|e| e.in_field("tick_count"))?;
        let string_count = r.read_u16le().map_err(|e| e.in_field("string_count"))?;
        let keyframe_count = r.read_u16le().map_err(|e| e.in_field("keyframe_count"))?;
        let op_bytes = r.read_u32le().map_err(|e| e.in_field("op_bytes"))?;
        let n = r
            .check_count(i128::from(string_count), raw::Str16::MIN_LEN)
            .map_err(|e| e.in_field("string_count"))?;
        let mut strings = Vec::with_capacity(n);
        for i in 0..n {
            let s = raw::Str16::read_from(&mut r).map_err(|e| e.in_index(i).in_field("strings"))?;
            strings.push(Arc::from(s.value));
        }
        let n = r
            .check_count(i128::from(keyframe_count), raw::Keyframe::MIN_LEN)
            .map_err(|e| e.in_field("keyframe_count"))?;
        let kf_at = r.offset() as usize;
        let mut keyframes = Vec::with_capacity(n);
        for i in 0..n {
            keyframes.push(
                raw::Keyframe::read_from(&mut r)
                    .map_err(|e| e.in_index(i).in_field("keyframes"))?,
            );
        }
        let op_start = r.offset() as usize;
        let left = bytes.len() - op_start;
        if op_bytes as usize != left {
            return Err(sem(
                &[PathSeg::Field("op_bytes")],
                26,
                format!(
                    "op_bytes says {op_bytes} but {left} byte(s) follow the keyframe index{}",
                    if op_bytes as usize > left {
                        ""
                    } else {
                        " (a string table or a payload longer than its count says, as a writer that wraps counts and lengths past 65,535 leaves it, also gives this)"
                    }
                ),
            )
            .into());
        }
        for (i, k) in keyframes.iter().enumerate() {
            let at = kf_at + 8 * i;
            let path = [PathSeg::Field("keyframes"), PathSeg::Index(i)];
            if k.tick > tick_count {
                return Err(sem(
                    &path,
                    at,
                    format!(
                        "keyframe tick {} is past the last tick {tick_count}",
                        k.tick
                    ),
                )
                .into());
            }
            if k.offset > op_bytes {
                return Err(sem(
                    &path,
                    at + 4,
                    format!(
                        "keyframe offset {} is past the op stream's {op_bytes} bytes",
                        k.offset
                    ),
                )
                .into());
            }
            if i > 0 {
                let p = &keyframes[i - 1];
                if k.tick <= p.tick || k.offset < p.offset {
                    return Err(sem(
                        &path,
                        at,
                        format!(
                            "keyframe (tick {}, offset {}) does not follow (tick {}, offset {})",
                            k.tick, k.offset, p.tick, p.offset
                        ),
                    )
                    .into());
                }
            }
            if k.tick == 0 && k.offset != 0 {
                return Err(sem(
                    &path,
                    at + 4,
                    "a keyframe at tick 0 must point at offset 0".into(),
                )
                .into());
            }
        }
        Ok(Self {
            bytes,
            header: Header {
                tick_rate,
                place_version,
                start_unix,
                tick_count,
                string_count,
                keyframe_count,
                op_bytes,
            },
            json_ok: vec![false; strings.len()],
            strings,
            keyframes,
            op_start,
            op_end: bytes.len(),
            cursor: op_start,
            marker_tick: 0,
            state: State::default(),
            checkpoints: HashMap::new(),
            checkpoint_cost: 0,
            skip_xforms: false,
            ops_applied: 0,
            strict: false,
            last_full: HashMap::new(),
            keyframe_holds: 0,
            flags: Vec::new(),
        })
    }

    /// [`Player::open`], refusing a replay recorded at another place version.
    pub fn open_for_place(bytes: &'a [u8], place_version: u32) -> Result<Self, RplyError> {
        let p = Self::open(bytes)?;
        if p.header.place_version != place_version {
            return Err(RplyError::PlaceVersion {
                expected: place_version,
                found: p.header.place_version,
            });
        }
        Ok(p)
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The string table (id i is `strings()[i - 1]`).
    pub fn strings(&self) -> &[Arc<str>] {
        &self.strings
    }

    /// The keyframe index.
    pub fn keyframes(&self) -> &[raw::Keyframe] {
        &self.keyframes
    }

    /// The state at the current tick.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Ops applied since open (for throughput figures).
    pub fn ops_applied(&self) -> u64 {
        self.ops_applied
    }

    fn string(&self, id: u16, path: &[PathSeg], at: usize) -> Result<Arc<str>, DecodeError> {
        if id == 0 || usize::from(id) > self.strings.len() {
            return Err(sem(
                path,
                at,
                format!(
                    "string id {id} is not in the table (1..={})",
                    self.strings.len()
                ),
            ));
        }
        Ok(self.strings[usize::from(id) - 1].clone())
    }

    fn reset(&mut self) {
        self.cursor = self.op_start;
        self.marker_tick = 0;
        self.state = State::default();
    }

    /// Plays the next tick (tick 0 first). Returns false, changing nothing, at the end.
    pub fn advance(&mut self) -> Result<bool, RplyError> {
        let target = match self.state.tick {
            None => 0,
            Some(t) if t >= self.header.tick_count => return Ok(false),
            Some(t) => t + 1,
        };
        self.play_to(target)?;
        Ok(true)
    }

    /// Moves to `tick` (0..=tick_count): from the current state when it lies between the
    /// nearest keyframe and the target, else from that keyframe's saved state.
    pub fn seek(&mut self, tick: u32) -> Result<(), RplyError> {
        if tick > self.header.tick_count {
            return Err(RplyError::TickOutOfRange {
                tick,
                tick_count: self.header.tick_count,
            });
        }
        let k = self
            .keyframes
            .partition_point(|kf| kf.tick <= tick)
            .checked_sub(1);
        let kf_tick = k.map(|i| self.keyframes[i].tick);
        if let Some(cur) = self.state.tick {
            if cur <= tick && kf_tick.is_none_or(|kt| cur + 1 >= kt) {
                return self.play_to(tick);
            }
        }
        match k {
            None => {
                self.reset();
                self.play_to(tick)
            }
            Some(k) => {
                self.restore_keyframe(k)?;
                self.play_to(tick)
            }
        }
    }

    /// Moves to the position of keyframe `k`'s marker with the state just before it (minus
    /// transforms when the keyframe sets them all, see [`Player::build_checkpoint`]): from its
    /// saved state, else from the latest saved one before it (or the start), saving the
    /// keyframes passed on the way while the budget allows.
    fn restore_keyframe(&mut self, k: usize) -> Result<(), RplyError> {
        if self.checkpoints.contains_key(&k) {
            self.load_checkpoint(k);
            return Ok(());
        }
        let from = (0..k).rev().find(|j| self.checkpoints.contains_key(j));
        match from {
            Some(j) => self.load_checkpoint(j),
            None => self.reset(),
        }
        for m in from.map_or(0, |j| j + 1)..=k {
            self.build_checkpoint(m, true)?;
        }
        if self.checkpoints.contains_key(&k) {
            self.marker_tick = self.keyframes[k].tick.saturating_sub(1);
        }
        Ok(())
    }

    fn load_checkpoint(&mut self, k: usize) {
        let c = &self.checkpoints[&k];
        self.state = c.state.clone();
        self.cursor = c.cursor;
        self.marker_tick = self.keyframes[k].tick.saturating_sub(1);
    }

    /// Plays to just before keyframe `m`'s marker, checks the index offset and, when `store`
    /// and the budget allows, saves the state. The budget keeps the saved entity copies at
    /// most one per 8 bytes of the file, so memory stays linear in the input however many
    /// keyframes and entities a file declares.
    ///
    /// Outside [`Player::verify_all`] the way there skips transforms (checking only that
    /// each delta has its bases, so errors are those of playing) and the saved state has
    /// none: the keyframe's full XFORMs set them. That holds when the keyframe is
    /// *complete*: every live entity that shows a transform gets a full XFORM with position
    /// and rotation (mask 3 or 5) as its first transform op in the keyframe tick. The spec
    /// asks for that, but the reference recorder omits entities (a model whose parts are
    /// gone): for such a keyframe the way is played again with transforms, from the latest
    /// saved state before it, and the state is saved with them, so seeking shows the held
    /// transform exactly as playing does.
    ///
    /// Returns whether the state in hand holds its transforms (else they are dropped).
    fn build_checkpoint(&mut self, m: usize, store: bool) -> Result<bool, RplyError> {
        let kf = self.keyframes[m].clone();
        let mut exact = true;
        if kf.tick > 0 {
            let skip = !self.strict;
            self.skip_xforms = skip;
            let r = self.play_to(kf.tick - 1);
            self.skip_xforms = false;
            r?;
            exact = !skip;
        }
        let expected = self.op_start + kf.offset as usize;
        if self.cursor != expected {
            let at = self.op_start - 8 * self.keyframes.len() + 8 * m + 4;
            return Err(sem(
                &[PathSeg::Field("keyframes"), PathSeg::Index(m), PathSeg::Field("offset")],
                at,
                format!(
                    "keyframe {m} (tick {}) points at op-stream offset {}, but the ops of tick {} start at offset {}",
                    kf.tick,
                    kf.offset,
                    kf.tick,
                    self.cursor - self.op_start
                ),
            )
            .into());
        }
        if !exact {
            if self.keyframe_complete(kf.tick) {
                for e in self.state.entities.values_mut() {
                    e.xform = XformState::default();
                }
            } else {
                match (0..m).rev().find(|j| self.checkpoints.contains_key(j)) {
                    Some(j) => self.load_checkpoint(j),
                    None => self.reset(),
                }
                self.play_to(kf.tick - 1)?;
                exact = true;
            }
        }
        let cost = self.state.entities.len() + 1;
        if !store || self.checkpoint_cost + cost > self.bytes.len() / 8 {
            return Ok(exact);
        }
        self.checkpoint_cost += cost;
        let state = self.state.clone();
        self.checkpoints.insert(
            m,
            Checkpoint {
                state,
                cursor: self.cursor,
            },
        );
        Ok(exact)
    }

    /// Whether keyframe tick `kt`, whose marker is at the cursor, is complete (see
    /// [`Player::build_checkpoint`]), by the scan flags; reads the tick's ops without
    /// applying them (an op that does not read counts as incomplete, and playing reports it).
    fn keyframe_complete(&self, kt: u32) -> bool {
        let mut pending: HashSet<u16> = self
            .state
            .entities
            .keys()
            .copied()
            .filter(|&id| self.flags[usize::from(id)] & F_SHOWN != 0)
            .collect();
        if pending.is_empty() {
            return true;
        }
        let mut r = ByteReader::new(&self.bytes[..self.op_end]);
        if r.take(self.cursor).is_err() {
            return false;
        }
        match Op::read_from(&mut r).map(|o| o.body) {
            Ok(OpBody::OpTickNext(_)) if self.marker_tick.checked_add(1) == Some(kt) => {}
            Ok(OpBody::OpTick(t)) if t.tick == kt => {}
            _ => return false,
        }
        while (r.offset() as usize) < self.op_end {
            let Ok(op) = Op::read_from(&mut r) else {
                return false;
            };
            match op.body {
                OpBody::OpTick(_) | OpBody::OpTickNext(_) => break,
                OpBody::OpXform(x) => {
                    let full = x.pos.is_some() && (x.rot.is_some() != x.yaw.is_some());
                    if pending.remove(&x.entity_id) && !full {
                        return false;
                    }
                }
                OpBody::OpXformD(x)
                    if pending.contains(&x.id_wide.unwrap_or(u16::from(x.id_byte))) =>
                {
                    return false;
                }
                OpBody::OpDespawn(d) => {
                    pending.remove(&d.entity_id);
                }
                _ => {}
            }
        }
        pending.is_empty()
    }

    /// Applies ops up to the end of tick `target` (which must not be before the current
    /// marker's tick).
    ///
    /// Two kinds of op take a short path that reads their bytes in place instead of going
    /// through the generated reader, each only when the full path would accept it: a
    /// TICK_NEXT that does not pass the last tick, and (while keyframe states are built,
    /// see [`Player::skippable_xform`]) a well-formed XFORM or XFORM_D of a live entity.
    /// Every other op, and every op these conditions refuse, is read and applied in full,
    /// so errors are the same either way.
    fn play_to(&mut self, target: u32) -> Result<(), RplyError> {
        let end = self.op_end;
        let skip = self.skip_xforms;
        if skip {
            self.fill_flags();
        }
        let mut pos = self.cursor;
        while pos < end {
            if skip {
                pos = self.skip_run(pos, target);
                if pos >= end {
                    break;
                }
            }
            let at = pos;
            let opcode = self.bytes[at];
            match opcode {
                10 => {
                    if self.marker_tick >= target {
                        break;
                    }
                    if self.marker_tick < self.header.tick_count {
                        self.marker_tick += 1;
                        self.ops_applied += 1;
                        pos += 1;
                        continue;
                    }
                }
                0 if at + 5 <= end => {
                    let t =
                        u32::from_le_bytes(self.bytes[at + 1..at + 5].try_into().expect("4 bytes"));
                    if t > target && t > self.marker_tick {
                        break;
                    }
                }
                3 | 11 if skip => {
                    if let Some(len) = self.skippable_xform(at, opcode)? {
                        self.ops_applied += 1;
                        pos += len;
                        continue;
                    }
                }
                3 | 11 if !self.strict => {
                    if let Some((id, step, len)) = self.xform_in_place(at, opcode) {
                        if self.state.entities.contains_key(&id) {
                            self.apply_xform(id, &step, at)?;
                            self.ops_applied += 1;
                            pos += len;
                            continue;
                        }
                    }
                }
                _ => {}
            }
            let mut r = ByteReader::new(&self.bytes[..end]);
            r.take(at)?;
            let op = Op::read_from(&mut r).map_err(|e| e.in_field("ops"))?;
            pos = r.offset() as usize;
            self.apply(op, at)?;
            self.ops_applied += 1;
            if skip && (opcode == 1 || opcode == 2) {
                // SPAWN and DESPAWN start with the entity id; keep the flags in step (a new
                // entity has no transform yet).
                let id = u16::from_le_bytes([self.bytes[at + 1], self.bytes[at + 2]]);
                self.flags[usize::from(id)] = if self.state.entities.contains_key(&id) {
                    F_LIVE
                } else {
                    0
                };
            }
        }
        self.cursor = pos;
        self.state.tick = Some(target);
        let window = u32::from(self.header.tick_rate.max(1));
        let min_tick = target.saturating_sub(window - 1);
        self.state.recent_events.retain(|e| e.tick >= min_tick);
        self.state.recent_custom.retain(|c| c.tick >= min_tick);
        Ok(())
    }

    /// The tight part of the keyframe-state scan: from `pos`, passes TICK_NEXT markers up to
    /// `target` and XFORM_Ds with a one-byte id, a mask the schema accepts, a live entity and
    /// the delta bases the mask needs, reading only the opcode, the id and the mask. Stops at
    /// the first op it does not take (left to [`Player::play_to`]'s full path) and returns
    /// its position.
    #[inline]
    fn skip_run(&mut self, mut pos: usize, target: u32) -> usize {
        let b = &self.bytes[..self.op_end];
        let flags = &self.flags;
        let last = self.header.tick_count;
        let mut marker = self.marker_tick;
        let mut n = 0u64;
        while let Some(&opcode) = b.get(pos) {
            if opcode == 11 {
                let (Some(&id), Some(&m)) = (b.get(pos + 1), b.get(pos + 2)) else {
                    break;
                };
                let len = usize::from(XFORM_D_LEN[usize::from(m)]);
                let need = XFORM_D_NEED[usize::from(m)];
                if id == 255
                    || len == 0
                    || pos + len > b.len()
                    || flags[usize::from(id)] & need != need
                {
                    break;
                }
                pos += len;
            } else if opcode == 10 {
                if marker >= target || marker >= last {
                    break;
                }
                marker += 1;
                pos += 1;
            } else {
                break;
            }
            n += 1;
        }
        self.marker_tick = marker;
        self.ops_applied += n;
        pos
    }

    /// Sets the scan flags (one byte per u16 id, allocated on first use) from the current
    /// state's entities.
    fn fill_flags(&mut self) {
        if self.flags.is_empty() {
            self.flags = vec![0; 1 << 16];
        } else {
            self.flags.fill(0);
        }
        for e in self.state.entities.values() {
            self.flags[usize::from(e.id)] = flags_of(e);
        }
    }

    /// While building keyframe states (whose transforms are dropped or rebuilt, see
    /// [`Player::build_checkpoint`]): the length of the XFORM or XFORM_D at `at` when it is
    /// well formed, lies inside the op stream and names a live entity, keeping the entity's
    /// scan flags in step; the error playing would report when a delta lacks a base; `None`
    /// sends the op through the full reader, which reports what is wrong.
    #[inline]
    fn skippable_xform(&mut self, at: usize, opcode: u8) -> Result<Option<usize>, RplyError> {
        let b = &self.bytes[..self.op_end];
        let (id, head, len, m) = if opcode == 3 {
            let Some(h) = b.get(at..at + 4) else {
                return Ok(None);
            };
            let m = h[3];
            if m & 0xf8 != 0 || m & 6 == 6 {
                return Ok(None);
            }
            let id = u16::from_le_bytes([h[1], h[2]]);
            let len =
                12 * usize::from(m & 1) + 6 * usize::from(m >> 1 & 1) + 2 * usize::from(m >> 2 & 1);
            (id, 4, len, m)
        } else {
            let Some(&first) = b.get(at + 1) else {
                return Ok(None);
            };
            let (id, head) = if first == 255 {
                let (Some(&lo), Some(&hi)) = (b.get(at + 2), b.get(at + 3)) else {
                    return Ok(None);
                };
                (u16::from_le_bytes([lo, hi]), 5)
            } else {
                (u16::from(first), 3)
            };
            let Some(&m) = b.get(at + head - 1) else {
                return Ok(None);
            };
            if m & 0xf0 != 0 || m & 3 == 3 || m & 12 == 12 {
                return Ok(None);
            }
            let len = 3 * usize::from(m & 1)
                + 6 * usize::from(m >> 1 & 1)
                + usize::from(m >> 2 & 1)
                + 3 * usize::from(m >> 3 & 1);
            (id, head, len, m)
        };
        let total = head + len;
        let f = self.flags[usize::from(id)];
        if at + total > b.len() || f & F_LIVE == 0 {
            return Ok(None);
        }
        if opcode == 3 {
            self.flags[usize::from(id)] = flags_after_xform(f, m);
        } else {
            let need = XFORM_D_NEED[usize::from(m)];
            if f & need != need {
                // The bases the flags describe, applied the step to: the player's own error.
                let mut x = XformState {
                    pos: (f & F_POS != 0).then_some(DVec3::ZERO),
                    pos_base: f & F_POS != 0,
                    base: if f & F_YAW != 0 {
                        RotBase::Yaw(0.0)
                    } else if f & F_TILT != 0 {
                        RotBase::Tilted(DQuat::IDENTITY)
                    } else {
                        RotBase::None
                    },
                    shown_rot: None,
                };
                if let Some((_, step, _)) = self.xform_in_place(at, opcode) {
                    if let Err(err) = x.apply(&step) {
                        return Err(sem(
                            &[PathSeg::Field("ops"), PathSeg::Field("mask")],
                            at,
                            format!("entity {id} at tick {}: {err}", self.marker_tick),
                        )
                        .into());
                    }
                }
                return Ok(None);
            }
        }
        Ok(Some(total))
    }

    /// The entity id, step and length of the XFORM or XFORM_D at `at`, read in place, when
    /// its mask passes the schema's check and it lies inside the op stream (what the
    /// generated reader would return for it); `None` sends it through the full reader.
    #[inline]
    fn xform_in_place(&self, at: usize, opcode: u8) -> Option<(u16, XformStep, usize)> {
        let b = &self.bytes[..self.op_end];
        let i8s = |p: usize| [b[p] as i8, b[p + 1] as i8, b[p + 2] as i8];
        let i16_at = |p: usize| i16::from_le_bytes([b[p], b[p + 1]]);
        if opcode == 3 {
            let h = b.get(at..at + 4)?;
            let m = h[3];
            if m & 0xf8 != 0 || m & 6 == 6 {
                return None;
            }
            let id = u16::from_le_bytes([h[1], h[2]]);
            let total = 4
                + 12 * usize::from(m & 1)
                + 6 * usize::from(m >> 1 & 1)
                + 2 * usize::from(m >> 2 & 1);
            if at + total > b.len() {
                return None;
            }
            let mut p = at + 4;
            let pos = (m & 1 != 0).then(|| {
                let f = |q: usize| f32::from_le_bytes([b[q], b[q + 1], b[q + 2], b[q + 3]]);
                let v = [f(p), f(p + 4), f(p + 8)];
                p += 12;
                v
            });
            let rot = (m & 2 != 0).then(|| {
                let v = [i16_at(p), i16_at(p + 2), i16_at(p + 4)];
                p += 6;
                v
            });
            let yaw = (m & 4 != 0).then(|| i16_at(p));
            Some((id, XformStep::Full { pos, rot, yaw }, total))
        } else {
            let first = *b.get(at + 1)?;
            let (id, head) = if first == 255 {
                (u16::from_le_bytes([*b.get(at + 2)?, *b.get(at + 3)?]), 5)
            } else {
                (u16::from(first), 3)
            };
            let m = *b.get(at + head - 1)?;
            if m & 0xf0 != 0 || m & 3 == 3 || m & 12 == 12 {
                return None;
            }
            let total = head
                + 3 * usize::from(m & 1)
                + 6 * usize::from(m >> 1 & 1)
                + usize::from(m >> 2 & 1)
                + 3 * usize::from(m >> 3 & 1);
            if at + total > b.len() {
                return None;
            }
            let mut p = at + head;
            let pos8 = (m & 1 != 0).then(|| {
                let v = i8s(p);
                p += 3;
                v
            });
            let pos16 = (m & 2 != 0).then(|| {
                let v = [i16_at(p), i16_at(p + 2), i16_at(p + 4)];
                p += 6;
                v
            });
            let yaw = (m & 4 != 0).then(|| {
                let v = b[p] as i8;
                p += 1;
                v
            });
            let rot = (m & 8 != 0).then(|| i8s(p));
            Some((
                id,
                XformStep::Delta {
                    pos8,
                    pos16,
                    yaw,
                    rot,
                },
                total,
            ))
        }
    }

    fn apply(&mut self, op: Op, at: usize) -> Result<(), RplyError> {
        let path = |f: &'static str| [PathSeg::Field("ops"), PathSeg::Field(f)];
        let tick = self.marker_tick;
        let live = |s: &Self, id: u16, f: &'static str| -> Result<(), DecodeError> {
            if s.state.entities.contains_key(&id) {
                Ok(())
            } else {
                Err(sem(
                    &path(f),
                    at + 1,
                    format!("entity {id} is not live at tick {tick}"),
                ))
            }
        };
        match op.body {
            OpBody::OpTick(t) => {
                if t.tick <= self.marker_tick || t.tick > self.header.tick_count {
                    return Err(sem(
                        &path("tick"),
                        at + 1,
                        format!(
                            "TICK {} must be after tick {} and at most the last tick {}",
                            t.tick, self.marker_tick, self.header.tick_count
                        ),
                    )
                    .into());
                }
                self.marker_tick = t.tick;
            }
            OpBody::OpTickNext(_) => {
                if self.marker_tick >= self.header.tick_count {
                    return Err(sem(
                        &path("opcode"),
                        at,
                        format!(
                            "TICK_NEXT after tick {} passes the last tick {}",
                            self.marker_tick, self.header.tick_count
                        ),
                    )
                    .into());
                }
                self.marker_tick += 1;
            }
            OpBody::OpSpawn(s) => {
                if s.entity_id == 0 || self.state.entities.contains_key(&s.entity_id) {
                    return Err(sem(
                        &path("entity_id"),
                        at + 1,
                        format!(
                            "SPAWN of entity {}, which is 0 or already live",
                            s.entity_id
                        ),
                    )
                    .into());
                }
                if s.parent_entity_id != 0 {
                    live(self, s.parent_entity_id, "parent_entity_id")?;
                }
                let descriptor = self.string(s.descriptor_str, &path("descriptor_str"), at + 3)?;
                self.state.entities.insert(
                    s.entity_id,
                    EntityState {
                        id: s.entity_id,
                        descriptor,
                        parent: s.parent_entity_id,
                        spawn_tick: tick,
                        xform: XformState::default(),
                        props: BTreeMap::new(),
                        anims: BTreeMap::new(),
                        snapshot: None,
                    },
                );
            }
            OpBody::OpDespawn(d) => {
                live(self, d.entity_id, "entity_id")?;
                self.state.entities.remove(&d.entity_id);
            }
            OpBody::OpXform(x) => {
                live(self, x.entity_id, "entity_id")?;
                let step = XformStep::Full {
                    pos: x.pos,
                    rot: x.rot,
                    yaw: x.yaw,
                };
                self.apply_xform(x.entity_id, &step, at)?;
                if self.strict {
                    self.last_full.insert(x.entity_id, tick);
                }
            }
            OpBody::OpXformD(x) => {
                let id = x.id_wide.unwrap_or(u16::from(x.id_byte));
                live(self, id, "id_byte")?;
                let step = XformStep::Delta {
                    pos8: x.pos8,
                    pos16: x.pos16,
                    yaw: x.yaw,
                    rot: x.rot,
                };
                self.apply_xform(id, &step, at)?;
            }
            OpBody::OpProp(p) => {
                live(self, p.entity_id, "entity_id")?;
                let name = self.string(p.name_str, &path("name_str"), at + 3)?;
                let value = match (&p.type_tag, &p.value) {
                    (_, raw::OpPropValue::PropBool(b)) => PropValue::Bool(b.value == 1),
                    (_, raw::OpPropValue::PropNumber(n)) => PropValue::Number(n.value),
                    (raw::PropType::Enum, raw::OpPropValue::PropStrRef(s)) => {
                        PropValue::Enum(self.string(s.str_id, &path("value"), at + 6)?)
                    }
                    (_, raw::OpPropValue::PropStrRef(s)) => {
                        PropValue::String(self.string(s.str_id, &path("value"), at + 6)?)
                    }
                    (_, raw::OpPropValue::Color3(c)) => PropValue::Color3([c.r, c.g, c.b]),
                    (_, raw::OpPropValue::Vec3(v)) => PropValue::Vector3([v.x, v.y, v.z]),
                };
                self.state
                    .entities
                    .get_mut(&p.entity_id)
                    .expect("live")
                    .props
                    .insert(name, value);
            }
            OpBody::OpAnimPlay(a) => {
                live(self, a.entity_id, "entity_id")?;
                let anim_id = self.string(a.anim_id_str, &path("anim_id_str"), at + 3)?;
                self.state
                    .entities
                    .get_mut(&a.entity_id)
                    .expect("live")
                    .anims
                    .insert(
                        a.handle,
                        AnimState {
                            anim_id,
                            fade_s: f64::from(a.fade) / 100.0,
                            speed: f64::from(a.speed) / 256.0,
                            started_tick: tick,
                        },
                    );
            }
            OpBody::OpAnimStop(a) => {
                live(self, a.entity_id, "entity_id")?;
                self.state
                    .entities
                    .get_mut(&a.entity_id)
                    .expect("live")
                    .anims
                    .remove(&a.handle);
            }
            OpBody::OpAnimSpeed(a) => {
                live(self, a.entity_id, "entity_id")?;
                if let Some(t) = self
                    .state
                    .entities
                    .get_mut(&a.entity_id)
                    .expect("live")
                    .anims
                    .get_mut(&a.handle)
                {
                    t.speed = f64::from(a.speed) / 256.0;
                }
            }
            OpBody::OpEvent(e) => {
                let name = self.string(e.name_str, &path("name_str"), at + 1)?;
                let payload = self.string(e.payload_str, &path("payload_str"), at + 3)?;
                let k = usize::from(e.payload_str) - 1;
                if !self.json_ok[k] {
                    serde_json::from_str::<serde::de::IgnoredAny>(&payload).map_err(|err| {
                        sem(
                            &path("payload_str"),
                            at + 3,
                            format!("event payload is not JSON: {err}"),
                        )
                    })?;
                    self.json_ok[k] = true;
                }
                self.state.recent_events.push(EventRecord {
                    tick,
                    name,
                    payload,
                });
            }
            OpBody::OpCustom(c) => {
                let channel = self.string(c.channel_str, &path("channel_str"), at + 1)?;
                self.state.recent_custom.push(CustomRecord {
                    tick,
                    channel,
                    data: c.data,
                });
            }
            OpBody::OpSnapshot(s) => {
                live(self, s.entity_id, "entity_id")?;
                self.state
                    .entities
                    .get_mut(&s.entity_id)
                    .expect("live")
                    .snapshot = Some(Arc::from(s.snapshot));
            }
        }
        Ok(())
    }

    fn apply_xform(&mut self, id: u16, step: &XformStep, at: usize) -> Result<(), RplyError> {
        let e = self.state.entities.get_mut(&id).expect("live");
        e.xform.apply(step).map_err(|err: XformError| {
            sem(
                &[PathSeg::Field("ops"), PathSeg::Field("mask")],
                at,
                format!("entity {id} at tick {}: {err}", self.marker_tick),
            )
        })?;
        Ok(())
    }

    /// Plays the whole replay from the start with every check: the raw layout, every op
    /// against the rules above, each keyframe index entry against the op stream, that the
    /// last marker is the header's `tick_count` (the recorders here and in the reference
    /// implementation both end the stream on its last tick, so a `tick_count` the ops never
    /// reach is refused, naming the field) and that nothing follows it. A keyframe tick
    /// without a full XFORM for a live entity that has a position is accepted, the entity
    /// holding its transform (see [`Player::keyframe_holds`]). Returns the number of ops.
    pub fn verify_all(&mut self) -> Result<u64, RplyError> {
        self.reset();
        self.strict = true;
        self.keyframe_holds = 0;
        let before = self.ops_applied;
        for m in 0..self.keyframes.len() {
            self.build_checkpoint(m, false)?;
            let kt = self.keyframes[m].tick;
            self.play_to(kt)?;
            let held = self
                .state
                .entities
                .values()
                .filter(|e| e.xform.pos.is_some() && self.last_full.get(&e.id) != Some(&kt))
                .count();
            self.keyframe_holds += held as u64;
        }
        self.play_to(self.header.tick_count)?;
        if self.cursor != self.op_end {
            return Err(sem(
                &[PathSeg::Field("ops")],
                self.cursor,
                format!("ops after the last tick {}", self.header.tick_count),
            )
            .into());
        }
        if self.marker_tick != self.header.tick_count {
            return Err(sem(
                &[PathSeg::Field("tick_count")],
                18,
                format!(
                    "tick_count says the last tick is {}, but the op stream ends at tick {}",
                    self.header.tick_count, self.marker_tick
                ),
            )
            .into());
        }
        self.strict = false;
        Ok(self.ops_applied - before)
    }

    /// After [`Player::verify_all`]: how many (keyframe, live entity) pairs had no full
    /// XFORM at the keyframe, the entity holding its last transform. The spec says every
    /// live entity has one; the reference recorder omits models that lost all their parts.
    pub fn keyframe_holds(&self) -> u64 {
        self.keyframe_holds
    }
}

/// Full check of a replay: [`Player::open`] (header, counts against the file, string table,
/// keyframe index) then [`Player::verify_all`], which reads every op and payload through the
/// generated readers and applies every rule. Returns the number of ops.
pub fn verify(bytes: &[u8]) -> Result<u64, RplyError> {
    let mut p = Player::open(bytes)?;
    p.verify_all()
}

/// Splits a replay into storage chunks keyed `<key>/1..n` (at most `chunk_bytes` each;
/// [`chunk::DEFAULT_CHUNK_BYTES`] is 3 MiB) plus the meta record for `<key>/meta` as JSON
/// (`chunks`, `bytes`, `crc32`, and the header's `tickRate`, `tickCount`, `placeVersion`,
/// `startUnix`, as the reference store keeps them).
pub fn save_chunks(
    key: &str,
    replay: &[u8],
    chunk_bytes: usize,
) -> Result<(chunk::Chunks, serde_json::Value), RplyError> {
    let p = Player::open(replay)?;
    let h = *p.header();
    let (chunks, meta) = chunk::split(key, replay, chunk_bytes)?;
    let record = serde_json::json!({
        "chunks": meta.chunks,
        "bytes": meta.bytes,
        "crc32": meta.crc32,
        "tickRate": h.tick_rate,
        "tickCount": h.tick_count,
        "placeVersion": h.place_version,
        "startUnix": jf(h.start_unix),
    });
    Ok((chunks, record))
}

/// Joins the chunks of `key` (fetched through `get`) described by the meta record,
/// checking length and CRC-32, and opens the result to check it is a replay.
pub fn load_chunks(
    key: &str,
    record: &serde_json::Value,
    get: impl FnMut(&str) -> Option<Vec<u8>>,
) -> Result<Vec<u8>, RplyError> {
    let meta: ChunkMeta = serde_json::from_value(record.clone())
        .map_err(|e| RplyError::Input(format!("meta record: {e}")))?;
    let bytes = chunk::join(key, &meta, get)?;
    Player::open(&bytes)?;
    Ok(bytes)
}

/// Builds version-10 snapshots of rigs: parts (each with its offset from the root, size,
/// colour), Motor6D joints. Everything else (meshes, effects, decals) is left empty.
#[derive(Debug, Clone)]
pub struct RigBuilder {
    snap: raw::Snapshot,
}

fn s16(s: &str) -> raw::Str16 {
    raw::Str16 {
        value: s.to_owned(),
    }
}

fn v3(v: DVec3) -> raw::Vec3 {
    raw::Vec3 {
        x: v.x as f32,
        y: v.y as f32,
        z: v.z as f32,
    }
}

impl RigBuilder {
    /// A model snapshot named `name` (source key `Workspace.<name>`) with a humanoid rig
    /// block (R15, no clothing, body colours all `color`).
    pub fn new(name: &str, root_name: &str, color: [u8; 3]) -> Self {
        let c = raw::Color3 {
            r: color[0],
            g: color[1],
            b: color[2],
        };
        Self {
            snap: raw::Snapshot {
                version: SNAPSHOT_VERSION,
                is_model: 1,
                name: s16(name),
                source_key: s16(&format!("Workspace.{name}")),
                root_path: s16(root_name),
                union_keys: Vec::new(),
                mesh_ids: Vec::new(),
                rig: Some(raw::Rig {
                    has_humanoid: 1,
                    humanoid: Some(raw::Humanoid {
                        rig_type: 1,
                        shirt: s16(""),
                        pants: s16(""),
                        shirt_graphic: s16(""),
                        has_body_colors: 1,
                        body_colors: Some(vec![c; 6]),
                        char_meshes: Vec::new(),
                    }),
                }),
                parts: Vec::new(),
                joints: Vec::new(),
            },
        }
    }

    /// Adds a plain part (offset from the root in studs, rotation from the root, size in
    /// studs); returns its 1-based index. The first part added is the root.
    pub fn part(
        &mut self,
        name: &str,
        offset: DVec3,
        rot: DQuat,
        size: DVec3,
        color: [u8; 3],
    ) -> u16 {
        self.snap.parts.push(raw::Part {
            kind: raw::PartKind::Part,
            union_key_index: None,
            name: s16(name),
            parent_path: s16(""),
            offset: v3(offset),
            rot: statepack_runtime::rply_xform::quantize_axis_angle(rot),
            size: v3(size),
            color: raw::Color3 {
                r: color[0],
                g: color[1],
                b: color[2],
            },
            material: 256,
            transparency: 0,
            reflectance: 0,
            shape: 1,
            surfaces: [0; 6],
            mesh: None,
            has_special_mesh: 0,
            special_mesh: None,
            has_surface_appearance: 0,
            surface_appearance: None,
            decals: Vec::new(),
            effects: Vec::new(),
        });
        self.snap.parts.len() as u16
    }

    /// Adds a Motor6D held by part1 joining parts `part0` and `part1` (1-based) with the
    /// given C0 and C1 (position in studs, rotation).
    pub fn motor(
        &mut self,
        name: &str,
        part0: u16,
        part1: u16,
        c0: (DVec3, DQuat),
        c1: (DVec3, DQuat),
    ) {
        let cf = |(p, q): (DVec3, DQuat)| raw::Cframe {
            pos: v3(p),
            rot: statepack_runtime::rply_xform::quantize_axis_angle(q),
        };
        self.snap.joints.push(raw::Joint {
            kind: raw::JointKind::Motor6d,
            name: s16(name),
            holder_index: part1,
            body: raw::JointBody::JointCframes(raw::JointCframes {
                part0_index: part0,
                part1_index: part1,
                c0: cf(c0),
                c1: cf(c1),
            }),
        });
    }

    /// The snapshot.
    pub fn build(self) -> raw::Snapshot {
        self.snap
    }
}

/// RPLY v3 in the format registry ([`crate::formats::FORMATS`]).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec {
    name: "rply",
    title: "RPLY v3",
    schema: "rply_v3",
    detect: |b| b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b)),
    decode_raw: |b| RplyV3::decode(b).map(|_| ()),
    decode_traced: |b| {
        let (r, t) = RplyV3::decode_traced(b);
        (r.map(|_| ()), t)
    },
    decode_events: crate::formats::events::decode_events_of!(RplyV3),
    decode_full: |b| {
        verify(b).map(|_| ()).map_err(|e| match e {
            RplyError::Decode(d) => d,
            other => DecodeError::new(0, DecodeErrorKind::Semantic(other.to_string())),
        })
    },
    reencode: |b| {
        let raw = RplyV3::decode(b).map_err(|e| e.to_string())?;
        raw.encode().map_err(|e| e.to_string())
    },
    to_json: |b| {
        verify(b).map_err(|e| e.to_string())?;
        let raw = RplyV3::decode(b).map_err(|e| e.to_string())?;
        serde_json::to_value(&raw).map_err(|e| e.to_string())
    },
    write_json: |b, out| {
        verify(b).map_err(crate::formats::invalid)?;
        let raw = RplyV3::decode(b).map_err(crate::formats::invalid)?;
        crate::formats::json::write_pretty(out, &raw)
    },
    from_json: |v| {
        let raw: RplyV3 = serde_path_to_error::deserialize(v.clone())
            .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
        let bytes = raw.encode().map_err(|e| e.to_string())?;
        verify(&bytes).map_err(|e| e.to_string())?;
        Ok(bytes)
    },
    samples: crate::formats::rply_samples::sample_files,
};
