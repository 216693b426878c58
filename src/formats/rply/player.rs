//! The RPLY player: opening a replay through the generated head reader, playing ops into
//! the state, seeking through keyframe checkpoints, and the full check of a file.

use super::*;
use glam::{DQuat, DVec3};
use statepack_codecs::rply_xform::{RotBase, XformError, XformState, XformStep};
use statepack_runtime::io::{ByteReader, DecodeError, DecodeErrorKind, FieldPath, PathSeg};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

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
                    "yaw_only": matches!(e.xform.base, statepack_codecs::rply_xform::RotBase::Yaw(_)),
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
/// **Idle tail.** `tick_count` may lie past the op stream's last marker: the reference
/// recorder writes nothing for a tick that changes nothing, the last ticks included. The
/// ticks after the last marker hold the state of the stream's last tick (recent events
/// and custom payloads leave the one-second window as usual). The player's loops run over
/// ops, never over ticks, so playing, seeking and [`Player::verify_all`] cost what the ops
/// cost however long the idle tail is ([`Player::ops_applied`] counts every pass).
///
/// Errors ([`RplyError::Decode`], with the field path and byte offset): anything the raw
/// layer refuses, and the rules of [`Player::verify_all`] that playing checks (entity ids
/// live, string ids in the table, markers in order, deltas with their bases, JSON event
/// payloads, keyframe offsets).
///
/// **After an error** the player is unchanged: a call that fails ([`Player::advance`],
/// [`Player::seek`], [`Player::verify_all`]) leaves [`Player::state`], the position and
/// [`Player::keyframe_holds`] as they were before it, so the next call behaves as if the
/// failed one had not been made (the same failing call fails again with the same error;
/// a seek elsewhere gives that tick's state). Only [`Player::ops_applied`], a count of work,
/// includes the failed call's; keyframe states saved on the way are kept (each is saved
/// only once complete). Restoring plays again from the latest saved keyframe state at or
/// before the previous tick (from the start when none is saved), so a failure costs at
/// most one more play up to where the player was.
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
    /// Opens a replay: the generated [`raw::RplyHead`] reads the header, string table and
    /// keyframe index alone (magic, version 3, counts checked against the bytes left before
    /// anything is allocated, each keyframe's tick at most `tick_count`, its offset inside
    /// the op stream and 0 at tick 0, all declared in `schema/rply_v3.ksy`). Two rules the
    /// head cannot say on its own are checked here: `op_bytes` must match the rest of the
    /// file exactly, and keyframe ticks must increase and offsets not decrease.
    ///
    /// Errors: [`RplyError::Decode`] naming the field path (`head.version`,
    /// `head.keyframes[2].offset`) and the byte offset.
    pub fn open(bytes: &'a [u8]) -> Result<Self, RplyError> {
        let mut r = ByteReader::new(bytes);
        let head = raw::RplyHead::read_from(&mut r).map_err(|e| e.in_field("head"))?;
        let op_start = r.offset() as usize;
        let op_bytes = head.op_bytes;
        let left = bytes.len() - op_start;
        if op_bytes as usize != left {
            return Err(sem(
                &[PathSeg::Field("head"), PathSeg::Field("op_bytes")],
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
        let kf_at = op_start - 8 * head.keyframes.len();
        for (i, pair) in head.keyframes.windows(2).enumerate() {
            let (p, k) = (&pair[0], &pair[1]);
            if k.tick <= p.tick || k.offset < p.offset {
                return Err(sem(
                    &[
                        PathSeg::Field("head"),
                        PathSeg::Field("keyframes"),
                        PathSeg::Index(i + 1),
                    ],
                    kf_at + 8 * (i + 1),
                    format!(
                        "keyframe (tick {}, offset {}) does not follow (tick {}, offset {})",
                        k.tick, k.offset, p.tick, p.offset
                    ),
                )
                .into());
            }
        }
        let strings: Vec<Arc<str>> = head
            .strings
            .into_iter()
            .map(|s| Arc::from(s.value))
            .collect();
        let keyframes = head.keyframes;
        let (tick_rate, place_version, start_unix, tick_count) = (
            head.tick_rate,
            head.place_version,
            head.start_unix,
            head.tick_count,
        );
        let (string_count, keyframe_count) = (strings.len() as u16, keyframes.len() as u16);
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

    /// The tick of the last marker (TICK_NEXT or TICK_SET) the player has read: after
    /// [`Player::verify_all`], or any call that reached the last tick, the op stream's last
    /// tick. Ticks after it, up to `tick_count`, are the idle tail.
    pub fn last_marker_tick(&self) -> u32 {
        self.marker_tick
    }

    /// Ops applied since open, failed calls included (for throughput figures). The player
    /// never steps through ticks: its loops run over ops, and each pass of the playing
    /// loops applies one op (a TICK_NEXT marker included), so this is also a count of its
    /// work, to which idle ticks, having no op, add nothing.
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

    /// Puts the player back at tick `before` (`None`: as opened) after a call failed part
    /// way, its state and position then being those of no tick: from the latest saved
    /// keyframe state at or before `before` (else from the start), playing to it. Every op
    /// on that way was played without error before the failed call (by playing or by
    /// building keyframe states, which refuse the same ops, see [`Player::build_checkpoint`]),
    /// and saved states are only kept once complete, so this replay succeeds; should it not,
    /// the replay from the start (the plain playing path) is the fallback, and past that
    /// the player is left as opened.
    fn restore(&mut self, before: Option<u32>) {
        self.strict = false;
        self.skip_xforms = false;
        let Some(t) = before else {
            self.reset();
            return;
        };
        let saved = self
            .checkpoints
            .keys()
            .copied()
            .filter(|&k| self.keyframes[k].tick <= t)
            .max();
        match saved {
            Some(k) => self.load_checkpoint(k),
            None => self.reset(),
        }
        if self.play_to(t).is_err() {
            self.reset();
            if self.play_to(t).is_err() {
                self.reset();
            }
        }
    }

    /// Plays the next tick (tick 0 first). Returns false, changing nothing, at the end.
    /// A tick of the idle tail (after the op stream's last marker) costs no op.
    ///
    /// Errors: what playing the tick's ops finds ([`Player`], "Errors"); the player is then
    /// left as it was before the call.
    pub fn advance(&mut self) -> Result<bool, RplyError> {
        let before = self.state.tick;
        let target = match before {
            None => 0,
            Some(t) if t >= self.header.tick_count => return Ok(false),
            Some(t) => t + 1,
        };
        if let Err(e) = self.play_to(target) {
            self.restore(before);
            return Err(e);
        }
        Ok(true)
    }

    /// Moves to `tick` (0..=tick_count): from the current state when it lies between the
    /// nearest keyframe and the target, else from that keyframe's saved state. A tick of the
    /// idle tail costs what seeking to the op stream's last tick costs.
    ///
    /// Errors: [`RplyError::TickOutOfRange`] past `tick_count`; what playing or checking the
    /// keyframe index on the way finds. The player is then left as it was before the call.
    pub fn seek(&mut self, tick: u32) -> Result<(), RplyError> {
        if tick > self.header.tick_count {
            return Err(RplyError::TickOutOfRange {
                tick,
                tick_count: self.header.tick_count,
            });
        }
        let before = self.state.tick;
        let r = self.seek_inner(tick);
        if r.is_err() {
            self.restore(before);
        }
        r
    }

    /// [`Player::seek`] without the restore on error.
    fn seek_inner(&mut self, tick: u32) -> Result<(), RplyError> {
        let k = self
            .keyframes
            .partition_point(|kf| kf.tick <= tick)
            .checked_sub(1);
        let kf_tick = k.map(|i| self.keyframes[i].tick);
        if let Some(cur) = self.state.tick {
            if cur <= tick && kf_tick.is_none_or(|kt| kt <= cur.saturating_add(1)) {
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
                &[
                    PathSeg::Field("head"),
                    PathSeg::Field("keyframes"),
                    PathSeg::Index(m),
                    PathSeg::Field("offset"),
                ],
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
    /// marker's tick). The loop runs over ops and stops at the first marker past `target`
    /// or at the end of the stream, so a `target` in the idle tail (after the last marker)
    /// costs nothing beyond the ops before it. On error the state and position are those of
    /// no tick; the public calls restore them ([`Player::restore`]).
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
    /// against the rules above, each keyframe index entry against the op stream, and that
    /// nothing follows the last tick. The op stream may end before `tick_count`: the ticks
    /// after its last marker are an idle tail, which the reference recorder leaves when the
    /// last ticks change nothing (it writes nothing for an idle tick); they hold the state
    /// of the stream's last tick. The check runs over the ops only, so its cost does not
    /// depend on how long the idle tail is (a `tick_count` of 4,294,967,295 costs what the
    /// ops cost). A keyframe tick without a full XFORM for a live entity that has a
    /// position is accepted, the entity holding its transform (see
    /// [`Player::keyframe_holds`]). Returns the number of ops; leaves the player at the
    /// last tick.
    ///
    /// Errors: the first rule broken, naming the field path and byte offset; the player is
    /// then left as it was before the call ([`Player`], "After an error").
    pub fn verify_all(&mut self) -> Result<u64, RplyError> {
        let before = (self.state.tick, self.keyframe_holds);
        let r = self.verify_inner();
        self.strict = false;
        if r.is_err() {
            self.keyframe_holds = before.1;
            self.restore(before.0);
        }
        r
    }

    fn verify_inner(&mut self) -> Result<u64, RplyError> {
        self.reset();
        self.strict = true;
        self.keyframe_holds = 0;
        self.last_full.clear();
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
        // Up to the last tick: the ops run out at the stream's last marker, the idle tail
        // after it is not stepped through.
        self.play_to(self.header.tick_count)?;
        if self.cursor != self.op_end {
            return Err(sem(
                &[PathSeg::Field("ops")],
                self.cursor,
                format!("ops after the last tick {}", self.header.tick_count),
            )
            .into());
        }
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
