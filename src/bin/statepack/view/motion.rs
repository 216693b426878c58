//! The motion the viewer plays: each motion format's own reader (SNAP's reconstruction and
//! `sample_at`, RPLY's player, CBTK's player, the animation clip decoder), asked for one
//! frame at a time.
//!
//! Time runs in each format's own unit: SNAP in ms, RPLY in ticks, CBTK in simulation
//! frames, clips in seconds. Positions are in the format's length unit (studs, elmos,
//! metres), y up. Each entity carries a short trail: its positions at the few steps before
//! the frame shown.

use super::structure::{Index, Ref};
use serde_json::{json, Value as Json};
use statepack::codecs::anim::{Decoder, Pose32};
use statepack::formats::events::{SinkTracer, TraceEvent};
use statepack::formats::{
    anim_clip, cbtrack, rply, snap, study_tracks, world_snapshot as ws, FormatSpec,
};
use statepack::runtime::io::{PathSeg, TraceValue};
use std::cell::RefCell;

/// Trail samples per entity (the frame shown included).
const TRAIL: usize = 8;
/// Entities sent with a trail at most (the others are sent without).
const TRAIL_ENTITIES: usize = 512;

/// One file's motion.
pub enum Motion {
    /// SNAP: one entity per recording.
    Snap {
        recs: Vec<snap::DecodedRecording>,
        end_ms: f64,
    },
    /// RPLY: the player's entities.
    Rply {
        player: RefCell<rply::Player<'static>>,
        tick_count: u32,
        tick_rate: u8,
    },
    /// CBTK: units and projectiles.
    Cbtk {
        player: RefCell<cbtrack::Player<'static>>,
        first: u32,
        last: u32,
        fps: u16,
    },
    /// World snapshot: one tick, each entity at its quantized position (the message is
    /// decoded again for each request, so nothing of it is kept).
    Wsnap { bytes: &'static [u8], tick: u32 },
    /// Animation clip: the local pose of each bone.
    Clip {
        dec: Box<Decoder>,
        bones: usize,
        frames: u16,
        rate: f32,
    },
    /// The study's keyframe tracks: the local pose of each bone the file stores something
    /// for, sampled one frame at a time from the keys around it (nothing is built for the
    /// other frames, nor for bones the header counts but no record names).
    Study {
        tracks: Box<study_tracks::DecodedTracks>,
        bones: Vec<usize>,
    },
}

fn v3(x: f64, y: f64, z: f64) -> Json {
    json!([x, y, z])
}

impl Motion {
    /// The motion of `bytes` read as `fmt`, for the formats that hold motion; `None` for the
    /// others and for a file their reader refuses (the structure view shows why).
    pub fn open(fmt: &FormatSpec, bytes: &'static [u8]) -> Option<Motion> {
        match fmt.name {
            n if n == snap::FORMAT.name => {
                let recs = snap::read(bytes).ok()?;
                let end_ms = snap::last_frame_ms(&recs);
                Some(Motion::Snap { recs, end_ms })
            }
            n if n == rply::FORMAT.name => {
                let player = rply::Player::open(bytes).ok()?;
                let h = *player.header();
                Some(Motion::Rply {
                    player: RefCell::new(player),
                    tick_count: h.tick_count,
                    tick_rate: h.tick_rate,
                })
            }
            n if n == cbtrack::FORMAT.name => {
                let player = cbtrack::Player::new(bytes).ok()?;
                let h = player.header();
                let (first, last, fps) = (h.first_frame, h.last_frame, h.frames_per_second);
                Some(Motion::Cbtk {
                    player: RefCell::new(player),
                    first,
                    last,
                    fps,
                })
            }
            n if n == ws::FORMAT.name => {
                let snap = ws::decode(bytes).ok()?;
                Some(Motion::Wsnap {
                    bytes,
                    tick: snap.tick,
                })
            }
            n if n == anim_clip::FORMAT.name => {
                let clip = anim_clip::read(bytes).ok()?;
                let dec = Decoder::new(&clip);
                Some(Motion::Clip {
                    bones: clip.bones.len(),
                    frames: clip.num_frames,
                    rate: clip.sample_rate,
                    dec: Box::new(dec),
                })
            }
            n if n == study_tracks::FORMAT.name => {
                let tracks = study_tracks::read(bytes).ok()?;
                Some(Motion::Study {
                    bones: tracks.stored_bones(),
                    tracks: Box::new(tracks),
                })
            }
            _ => None,
        }
    }

    /// The timeline: kind, units, first and last time, one step, steps per second.
    pub fn info(&self) -> Json {
        match self {
            Motion::Snap { recs, end_ms } => json!({
                "kind": "snap", "unit": "studs", "time_unit": "ms",
                "t0": 0.0, "t1": end_ms, "step": 1000.0 / 60.0, "per_second": 1000.0,
                "entities": recs.len(), "what": "one entity per recording", "min_extent": 4.0,
            }),
            Motion::Rply {
                tick_count,
                tick_rate,
                ..
            } => json!({
                "kind": "rply", "unit": "studs", "time_unit": "tick",
                "t0": 0, "t1": tick_count, "step": 1, "per_second": tick_rate,
                "what": "entities with a transform", "min_extent": 8.0,
            }),
            Motion::Cbtk {
                first, last, fps, ..
            } => json!({
                "kind": "cbtrack", "unit": "elmos", "time_unit": "frame",
                "t0": first, "t1": last, "step": 1, "per_second": fps,
                "what": "units (boxes) and projectiles (points)", "min_extent": 64.0,
            }),
            Motion::Wsnap { tick, .. } => json!({
                "kind": "wsnap", "unit": "metres", "time_unit": "tick",
                "t0": tick, "t1": tick, "step": 1, "per_second": 1,
                "what": "entities at their quantized positions (one tick)", "min_extent": 20.0,
            }),
            Motion::Clip {
                bones,
                frames,
                rate,
                ..
            } => json!({
                "kind": "clip", "unit": "metres", "time_unit": "s",
                "t0": 0.0, "t1": (f64::from(*frames) - 1.0).max(0.0) / f64::from(rate.max(1e-3)),
                "step": 1.0 / f64::from(rate.max(1e-3)), "per_second": 1.0,
                "entities": bones, "min_extent": 1.0,
                "what": "each bone's local pose, one slot per bone (the file holds no hierarchy)",
            }),
            Motion::Study { tracks, bones } => json!({
                "kind": "study", "unit": "metres", "time_unit": "frame",
                "t0": 0, "t1": tracks.num_frames.saturating_sub(1), "step": 1,
                "per_second": tracks.fps.max(1), "entities": bones.len(), "min_extent": 1.0,
                "what": "each stored bone's local pose, one slot per bone (the file holds no hierarchy)",
            }),
        }
    }

    /// The entities at time `t`.
    ///
    /// Errors: the format's reader refuses the part of the file the frame needs.
    pub fn frame(&self, t: f64) -> Result<Json, String> {
        let mut ents: Vec<Json> = Vec::new();
        match self {
            Motion::Snap { recs, .. } => {
                for (i, r) in recs.iter().enumerate() {
                    let Some((p, q)) = r.sample_at(t) else {
                        continue;
                    };
                    let trail: Vec<Json> = (0..TRAIL)
                        .filter_map(|k| r.sample_at(t - 50.0 * k as f64))
                        .map(|(p, _)| v3(p.x.into(), p.y.into(), p.z.into()))
                        .collect();
                    ents.push(json!({
                        "id": i, "label": r.map_name,
                        "p": [p.x, p.y, p.z], "q": [q.x, q.y, q.z, q.w], "trail": trail,
                    }));
                }
            }
            Motion::Rply {
                player, tick_count, ..
            } => {
                let tick = t.clamp(0.0, f64::from(*tick_count)) as u32;
                let mut pl = player.borrow_mut();
                let from = tick.saturating_sub(TRAIL as u32 - 1);
                pl.seek(from).map_err(|e| e.to_string())?;
                let mut trails: std::collections::BTreeMap<u16, Vec<Json>> = Default::default();
                loop {
                    for (id, e) in &pl.state().entities {
                        if let Some(p) = e.xform.pos {
                            trails.entry(*id).or_default().push(v3(p.x, p.y, p.z));
                        }
                    }
                    if pl.state().tick.is_some_and(|k| k >= tick) {
                        break;
                    }
                    if !pl.advance().map_err(|e| e.to_string())? {
                        break;
                    }
                }
                for (id, e) in &pl.state().entities {
                    let Some(p) = e.xform.pos else { continue };
                    let q = e.xform.shown_rot.unwrap_or_default();
                    let mut trail = trails.remove(id).unwrap_or_default();
                    trail.reverse();
                    ents.push(json!({
                        "id": id, "label": format!("{} #{id}", e.descriptor),
                        "p": [p.x, p.y, p.z], "q": [q.x, q.y, q.z, q.w],
                        "trail": if ents.len() < TRAIL_ENTITIES { trail } else { Vec::new() },
                    }));
                }
            }
            Motion::Cbtk {
                player,
                first,
                last,
                ..
            } => {
                let f = t.clamp(f64::from(*first), f64::from(*last));
                let mut pl = player.borrow_mut();
                let mut trails: std::collections::HashMap<u32, Vec<Json>> = Default::default();
                for k in (1..TRAIL).rev() {
                    let back = f - 4.0 * k as f64;
                    if back < f64::from(*first) {
                        continue;
                    }
                    let st = pl.sample(back).map_err(|e| e.to_string())?;
                    for u in st.units.iter().take(TRAIL_ENTITIES) {
                        let p = u.pos_elmos;
                        trails
                            .entry(u.serial)
                            .or_default()
                            .push(v3(p[0], p[1], p[2]));
                    }
                }
                let st = pl.sample(f).map_err(|e| e.to_string())?;
                for u in &st.units {
                    let p = u.pos_elmos;
                    let mut trail = trails.remove(&u.serial).unwrap_or_default();
                    trail.reverse();
                    trail.insert(0, v3(p[0], p[1], p[2]));
                    ents.push(json!({
                        "id": u.serial, "label": format!("unit {} (def {}, team {})", u.unit_id, u.def, u.team),
                        "p": p, "q": u.rot, "trail": trail, "box": true,
                    }));
                }
                for pj in &st.projectiles {
                    let p = pj.pos_elmos;
                    ents.push(json!({
                        "id": u64::from(pj.serial) | (1 << 40), "label": format!("projectile {}", pj.serial),
                        "p": p, "q": [0.0, 0.0, 0.0, 1.0], "trail": [], "point": true,
                    }));
                }
            }
            Motion::Wsnap { bytes, .. } => {
                let snap = ws::decode(bytes).map_err(|e| e.to_string())?;
                for (i, rec) in snap.records.iter().enumerate() {
                    let e = ws::RecordView {
                        record: rec,
                        origins: &snap.origins,
                    }
                    .entity();
                    let (p, q) = (e.position_m, e.orientation);
                    ents.push(json!({
                        "id": i, "label": format!("entity {} (record {i})", e.entity_index),
                        "p": [p.x, p.y, p.z], "q": [q.x, q.y, q.z, q.w], "trail": [], "box": true,
                    }));
                }
            }
            Motion::Study { tracks, bones } => {
                let f = study_frame(tracks, t);
                let cols = (bones.len() as f64).sqrt().ceil().max(1.0) as usize;
                for (i, &b) in bones.iter().enumerate() {
                    let Some(p) = tracks.bone_at(b, f) else {
                        continue;
                    };
                    let slot = [(i % cols) as f64 * 0.6, 0.0, (i / cols) as f64 * 0.6];
                    let (tr, q) = (p.translation, p.rotation);
                    ents.push(json!({
                        "id": b, "label": format!("bone {b}"),
                        "p": slot, "q": [q.x, q.y, q.z, q.w],
                        "trail": [slot, [slot[0] + tr.x, slot[1] + tr.y, slot[2] + tr.z]],
                        "bone": true,
                    }));
                }
            }
            Motion::Clip { dec, bones, .. } => {
                let mut pose = vec![Pose32::IDENTITY; *bones];
                dec.sample(t as f32, &mut pose);
                let cols = (*bones as f64).sqrt().ceil().max(1.0) as usize;
                for (b, p) in pose.iter().enumerate() {
                    let slot = [(b % cols) as f64 * 0.6, 0.0, (b / cols) as f64 * 0.6];
                    let tr = p.translation;
                    let q = p.rotation;
                    ents.push(json!({
                        "id": b, "label": format!("bone {b}"),
                        "p": slot, "q": [q.x, q.y, q.z, q.w],
                        "trail": [slot, [slot[0] + f64::from(tr.x), slot[1] + f64::from(tr.y), slot[2] + f64::from(tr.z)]],
                        "bone": true,
                    }));
                }
            }
        }
        Ok(json!({ "t": t, "entities": ents }))
    }

    /// One entity's values at time `t` and the node of the file that set them: RPLY's last
    /// XFORM or XFORM_D op of the entity, SNAP's frame, CBTK's `transform_keys` row (in the column directory of the window's main chunk), a clip's
    /// bone tracks.
    ///
    /// Errors: no such entity at `t`, or the reader refuses the frame.
    pub fn entity(
        &self,
        t: f64,
        id: u64,
        ix: &Index,
        bytes: &[u8],
    ) -> Result<(Json, Option<Ref>), String> {
        let field = |s: &'static str| PathSeg::Field(s);
        let idx = |i: usize| PathSeg::Index(i);
        match self {
            Motion::Snap { recs, .. } => {
                let i = id as usize;
                let r = recs.get(i).ok_or("no such recording")?;
                let (p, q) = r.sample_at(t).ok_or("the recording has no frames")?;
                let j = r
                    .frames
                    .partition_point(|f| (f.time_ms as f64) <= t)
                    .saturating_sub(1);
                let link = ix.find(&[field("recordings"), idx(i), field("frames"), idx(j)]);
                Ok((
                    json!({
                        "label": r.map_name, "time_ms": t, "frame": j,
                        "position_studs": [p.x, p.y, p.z], "rotation_xyzw": [q.x, q.y, q.z, q.w],
                        "set_by": format!("recordings[{i}].frames[{j}]"),
                    }),
                    link,
                ))
            }
            Motion::Rply {
                player, tick_count, ..
            } => {
                let tick = t.clamp(0.0, f64::from(*tick_count)) as u32;
                let eid = u16::try_from(id).map_err(|_| "no such entity")?;
                let mut pl = player.borrow_mut();
                pl.seek(tick).map_err(|e| e.to_string())?;
                let e = pl
                    .state()
                    .entities
                    .get(&eid)
                    .ok_or("no such entity at this tick")?;
                let p = e.xform.pos;
                let q = e.xform.shown_rot;
                let props: serde_json::Map<String, Json> = e
                    .props
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_json()))
                    .collect();
                let mut v = json!({
                    "label": format!("{} #{eid}", e.descriptor), "tick": tick,
                    "parent": e.parent, "spawn_tick": e.spawn_tick,
                    "position_studs": p.map(|p| [p.x, p.y, p.z]),
                    "rotation_xyzw": q.map(|q| [q.x, q.y, q.z, q.w]),
                    "props": props,
                });
                let op = last_xform_op(bytes, eid, tick);
                if let Some((k, name)) = &op {
                    v["set_by"] = json!(format!("ops.ops[{k}] ({name})"));
                }
                let link = op.and_then(|(k, _)| ix.find(&[field("ops"), field("ops"), idx(k)]));
                Ok((v, link))
            }
            Motion::Cbtk {
                player,
                first,
                last,
                ..
            } => {
                let f = t.clamp(f64::from(*first), f64::from(*last));
                let mut pl = player.borrow_mut();
                let st = pl.sample(f).map_err(|e| e.to_string())?;
                let u = st
                    .units
                    .iter()
                    .find(|u| u64::from(u.serial) == id)
                    .ok_or("no such unit at this frame")?;
                let w = st.window;
                let main = [field("windows"), idx(w), field("main")];
                let row = pl
                    .loaded_window()
                    .and_then(|mw| mw.transform_row(u.serial, f))
                    .and_then(|r| transform_row_path(&pl, w, r).map(|p| (r, p)));
                let (link, set_by) = match row {
                    Some((r, (c, name, values))) => {
                        let mut path = main.to_vec();
                        path.extend([field("directory"), field("columns"), idx(c)]);
                        path.extend([field(values), idx(r)]);
                        (
                            ix.find(&path),
                            format!(
                                "windows[{w}].main: transform_keys row {r} \
                                 (column `{name}`, directory entry {c}, and the same row of the set's other columns)"
                            ),
                        )
                    }
                    None => (
                        ix.find(&main),
                        format!("windows[{w}].main (the window's main chunk)"),
                    ),
                };
                let v = serde_json::to_value(u).map_err(|e| e.to_string())?;
                Ok((
                    json!({ "label": format!("unit {}", u.unit_id), "frame": f, "window": w, "unit": v,
                            "transform_row": row.map(|r| r.0), "set_by": set_by }),
                    link,
                ))
            }
            Motion::Wsnap { bytes, .. } => {
                let snap = ws::decode(bytes).map_err(|e| e.to_string())?;
                let i = id as usize;
                let rec = snap.records.get(i).ok_or("no such record")?;
                let e = ws::RecordView {
                    record: rec,
                    origins: &snap.origins,
                }
                .entity();
                let link = ix.find(&[field("records"), field("records"), idx(i)]);
                let v = serde_json::to_value(e).map_err(|e| e.to_string())?;
                Ok((
                    json!({ "label": format!("entity {}", e.entity_index), "tick": snap.tick, "entity": v,
                            "set_by": format!("records.records[{i}]") }),
                    link,
                ))
            }
            Motion::Study { tracks, .. } => {
                let b = id as usize;
                let f = study_frame(tracks, t);
                let p = tracks.bone_at(b, f).ok_or("no such bone at this frame")?;
                let (path, set_by) = study_key(tracks, b, f);
                let link = path.as_deref().and_then(|p| ix.find(p));
                let (tr, q, sc) = (p.translation, p.rotation, p.scale);
                Ok((
                    json!({
                        "label": format!("bone {b}"), "frame": f,
                        "translation_m": [tr.x, tr.y, tr.z],
                        "rotation_xyzw": [q.x, q.y, q.z, q.w],
                        "scale": [sc.x, sc.y, sc.z],
                        "set_by": set_by,
                    }),
                    link,
                ))
            }
            Motion::Clip { dec, bones, .. } => {
                let b = id as usize;
                if b >= *bones {
                    return Err("no such bone".into());
                }
                let mut pose = vec![Pose32::IDENTITY; *bones];
                dec.sample(t as f32, &mut pose);
                let p = pose[b];
                let link = ix.find(&[field("bones"), idx(b)]);
                Ok((
                    json!({
                        "label": format!("bone {b}"), "time_s": t,
                        "translation_m": [p.translation.x, p.translation.y, p.translation.z],
                        "rotation_xyzw": [p.rotation.x, p.rotation.y, p.rotation.z, p.rotation.w],
                        "scale": [p.scale.x, p.scale.y, p.scale.z],
                        "set_by": format!("bones[{b}] (its tracks)"),
                    }),
                    link,
                ))
            }
        }
    }
}

/// The index in `ops.ops` and the opcode name of the last XFORM or XFORM_D op of entity
/// `id` at or before `tick`, from the raw decode (TICK sets the tick, TICK_NEXT adds one).
/// Where row `row` of window `w`'s `transform_keys` column set is in the tree: the
/// directory entry index of the set's first column that holds that row, the column's name,
/// and the name of the `*_values` instance its type code selects. `None` when the chunk
/// cannot be read or no column of the set has the row (all of them stored as zeros).
fn transform_row_path(
    pl: &cbtrack::Player<'_>,
    w: usize,
    row: usize,
) -> Option<(usize, &'static str, &'static str)> {
    use statepack::generated::cbtrack_v1 as raw;
    let bytes = pl.track().main_bytes(w).ok()?;
    let chunk = cbtrack::parse_chunk(&bytes).ok()?;
    for &(id, _, name) in raw::TransformKeysColumns::COLUMNS {
        let Some(c) = chunk.entries().iter().position(|e| e.id == id) else {
            continue;
        };
        let e = &chunk.entries()[c];
        if (e.count as usize) <= row {
            continue;
        }
        let values = match e.code {
            1 => "u1_values",
            2 => "u2_values",
            3 => "s2_values",
            4 => "u4_values",
            5 => "s4_values",
            6 => "f4_values",
            _ => continue,
        };
        return Some((c, name, values));
    }
    None
}

fn last_xform_op(bytes: &[u8], id: u16, tick: u32) -> Option<(usize, &'static str)> {
    let mut segs: Vec<PathSeg> = Vec::new();
    let mut cur_tick: u64 = 0;
    let mut op: Option<usize> = None;
    let mut opcode: &'static str = "";
    let mut found: Option<(usize, &'static str)> = None;
    let mut sink = |ev: TraceEvent| match ev {
        TraceEvent::Enter { seg, .. } => {
            if segs.len() == 2 {
                if let PathSeg::Index(k) = seg {
                    op = Some(k);
                }
            }
            segs.push(seg);
        }
        TraceEvent::Leave { value, .. } => {
            let leaf = segs.pop();
            if cur_tick > u64::from(tick) || segs.len() < 3 {
                return;
            }
            let (Some(PathSeg::Field(name)), Some(v)) = (leaf, value) else {
                return;
            };
            let int = match v {
                TraceValue::Int(i) => Some(i),
                TraceValue::Enum { name: n, value } => {
                    if name == "opcode" {
                        opcode = n;
                        if n == "tick_next" {
                            cur_tick += 1;
                        }
                    }
                    Some(value)
                }
                _ => None,
            };
            let Some(i) = int else { return };
            if segs.len() != 4 {
                return;
            }
            // The id of an XFORM (`entity_id`) or an XFORM_D (`id_byte`, or `id_wide` after
            // an `id_byte` of 255).
            let is_id = match name {
                "tick" if opcode == "tick" => {
                    cur_tick = i.max(0) as u64;
                    false
                }
                "entity_id" => opcode == "xform",
                "id_wide" => opcode == "xform_d",
                "id_byte" => opcode == "xform_d" && i != 255,
                _ => false,
            };
            if is_id && cur_tick <= u64::from(tick) && i == i128::from(id) {
                found = op.map(|k| (k, opcode));
            }
        }
    };
    let _ = (rply::FORMAT.decode_events)(bytes, SinkTracer::new(&mut sink, true));
    found
}

/// The frame of study tracks shown at time `t` (frames; the last at or before `t`, within
/// the clip).
fn study_frame(tracks: &study_tracks::DecodedTracks, t: f64) -> usize {
    let last = tracks.num_frames.saturating_sub(1);
    if t.is_nan() || t <= 0.0 {
        return 0;
    }
    (t.floor() as usize).min(last)
}

/// The node of a study file that sets bone `b`'s pose at frame `f`, and its path as text:
/// the rotation key at or before the frame (`body.rotations[i].keys[k]`), the bone's
/// constant rotation record, else its first translation or scale record's key, else (a raw
/// file) the frame's values for the bone (`body.values[n]`, its first value).
fn study_key(
    tracks: &study_tracks::DecodedTracks,
    b: usize,
    f: usize,
) -> (Option<Vec<PathSeg>>, String) {
    use statepack::codecs::keyframe::ScalarKind;
    let field = |s: &'static str| PathSeg::Field(s);
    let record = |list: &'static str, i: usize, k: Option<usize>| {
        let mut p = vec![field("body"), field(list), PathSeg::Index(i)];
        let mut text = format!("body.{list}[{i}]");
        match k {
            Some(k) => {
                p.extend([field("keys"), PathSeg::Index(k)]);
                text.push_str(&format!(".keys[{k}]"));
            }
            None => text.push_str(" (a constant record)"),
        }
        (Some(p), text)
    };
    if tracks.raw_values.is_some() {
        let n = (f * tracks.num_bones + b) * 10;
        let p = vec![field("body"), field("values"), PathSeg::Index(n)];
        return (
            Some(p),
            format!("body.values[{n}..{}] (frame {f}, bone {b})", n + 10),
        );
    }
    if let Some((i, k)) = tracks.rotation_key_at(b, f) {
        return record("rotations", i, k);
    }
    for kind in [ScalarKind::Translation, ScalarKind::Scale] {
        for axis in 0..3 {
            if let Some((i, k)) = tracks.scalar_key_at(kind, b, axis, f) {
                return record("scalars", i, k);
            }
        }
    }
    (None, "no record: the identity pose".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Selecting a CBTK unit links to the `transform_keys` row of the key that set its
    /// transform: the row of the unit's last key at or before the frame, counted over the
    /// window's whole column set, inside the set's `time` column.
    #[test]
    fn cbtk_unit_links_to_its_transform_key_row() {
        let bytes: &'static [u8] = Box::leak(cbtrack::worked_example_file().into_boxed_slice());
        let ix = Index::of_format(&cbtrack::FORMAT, bytes);
        assert!(ix.failure.is_none());
        let motion = Motion::open(&cbtrack::FORMAT, bytes).expect("a CBTK track has motion");
        let mut pl = cbtrack::Player::new(bytes).expect("worked example opens");
        let h = pl.header().clone();
        let mut checked = 0;
        for frame in h.first_frame..=h.last_frame {
            let st = pl.sample(f64::from(frame)).expect("sample");
            let w = pl
                .loaded_window()
                .expect("a window is loaded")
                .decode()
                .expect("a loaded window decodes");
            for u in &st.units {
                let (v, link) = motion
                    .entity(f64::from(frame), u64::from(u.serial), &ix, bytes)
                    .expect("the unit is there");
                let Some(row) = v["transform_row"].as_u64() else {
                    continue;
                };
                let row = row as usize;
                // The row is the unit's own: after the rows of the units before it, and
                // its key is the last one at or before the frame.
                let at = w.units.iter().position(|x| x.serial == u.serial).unwrap();
                let before: usize = w.units[..at].iter().map(|x| x.transforms.len()).sum();
                let keys = &w.units[at].transforms;
                let k = row - before;
                assert!(k < keys.len());
                let t = f64::from(frame) - f64::from(w.start);
                assert!(f64::from(keys[k].offset) <= t || k == 0);
                assert!(k + 1 == keys.len() || f64::from(keys[k + 1].offset) > t);
                let path = ix.path_text(link.expect("the row is in the tree"));
                assert!(
                    path.starts_with(&format!("windows[{}].main.directory.columns[", w.index))
                        && path.ends_with(&format!("_values[{row}]")),
                    "{path}"
                );
                checked += 1;
            }
        }
        assert!(checked > 0, "no unit had a transform key");
    }
}
