//! The RPLY recorder: interned strings, lazy tick markers, keyframes, full and delta
//! transforms, and the file it finishes.

use super::*;
use glam::{DQuat, DVec3};
use statepack_codecs::rply_xform::{Thresholds, XformEncoder, XformStep};
use statepack_runtime::io::ByteWriter;
use std::collections::{BTreeMap, BTreeSet, HashMap};

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
    /// Keyframe index entries so far: (tick, op-stream offset of its marker).
    keyframes: Vec<(u32, u32)>,
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
            self.keyframes.push((self.tick, offset));
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
    /// (so the stream's last marker is `tick_count`: files written here have no idle tail,
    /// though they may have one and read the same); recording can continue afterwards. Errors: more than 65,535 keyframes, an op
    /// stream past 4 GiB.
    pub fn finish(&mut self) -> Result<Vec<u8>, RplyError> {
        self.complete_keyframe()?;
        // A bare marker when the last tick wrote nothing: the stream reaches the last tick
        // (the reference recorder leaves an idle tail instead, which reads the same here).
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
        for &(tick, offset) in &self.keyframes {
            w.write_u32le(tick);
            w.write_u32le(offset);
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
