//! Interoperability with the format's reference implementation (Flashback).
//!
//! `FbRecorder` below writes bytes the way the reference recorder lays them out, from its
//! documented conventions (this test's own code; nothing of it is copied): entity ids from
//! 1, parent 0 for none; strings interned 1-based in first-use order; tick 0 holds the
//! spawns made when recording starts, with no marker; a tick's marker is written lazily
//! before its first op, TICK_NEXT when it follows the last marker, TICK after a gap; the
//! first tick is 1 and keyframes fall on ticks 1, 301, 601 ... with their index offset
//! taken before the tick's first op; full XFORMs carry mask 5 (upright) or 3 (tilted);
//! deltas are written when the position moved more than 1/32 stud, the yaw more than 1/64
//! rad or a rotation code is non-zero, with the base after a full tilted sample being the
//! *unquantized* rotation; only XFORM_D uses the compact id; events with no payload carry
//! `[]`; animation fades are 10 (0.1 s) and speeds ×256; snapshots are written when flushed
//! (at despawn or at the end), after the last tick's ops; the SNAPSHOT v10 payload is laid
//! out as the reference's capture writes it, with the effect property count patched in
//! after the properties.
//!
//! `fb_play` reads op streams with the reference player's rules (deltas without a base
//! start from zero, ops for unknown entities are skipped) so our files can be checked the
//! way that player would see them.

use glam::{DQuat, DVec3};
use statepack::formats::rply::{self, Player, PropValue, RplyV3};
use statepack::generated::rply_v3 as raw;
use statepack_codecs::rply_xform::{
    dequantize_axis_angle, dequantize_yaw, is_upright, quantize_axis_angle, quantize_yaw,
    rotation_from_delta, wrap_angle, yaw_of,
};
use std::collections::{BTreeMap, HashMap};

#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn i8(&mut self, v: i8) {
        self.0.push(v as u8);
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i16(&mut self, v: i16) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn f64(&mut self, v: f64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str16(&mut self, s: &str) {
        self.u16(s.len() as u16);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn vec3(&mut self, v: [f32; 3]) {
        v.iter().for_each(|&x| self.f32(x));
    }
    fn id(&mut self, v: u16) {
        if v < 255 {
            self.u8(v as u8);
        } else {
            self.u8(255);
            self.u16(v);
        }
    }
}

struct FbEntity {
    last_pos: Option<DVec3>,
    last_yaw: Option<f64>,
    last_rot: Option<DQuat>,
}

/// Writes replays laid out as the reference recorder does (see the module docs).
struct FbRecorder {
    ops: W,
    strings: Vec<String>,
    index: HashMap<String, u16>,
    keyframes: Vec<(u32, u32)>,
    tick: u32,
    last_tick_written: u32,
    next_id: u16,
    ents: BTreeMap<u16, FbEntity>,
    pending_snapshots: BTreeMap<u16, Vec<u8>>,
}

impl FbRecorder {
    fn new() -> Self {
        Self {
            ops: W::default(),
            strings: Vec::new(),
            index: HashMap::new(),
            keyframes: Vec::new(),
            tick: 0,
            last_tick_written: 0,
            next_id: 1,
            ents: BTreeMap::new(),
            pending_snapshots: BTreeMap::new(),
        }
    }
    fn intern(&mut self, s: &str) -> u16 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        self.strings.push(s.to_owned());
        let i = self.strings.len() as u16;
        self.index.insert(s.to_owned(), i);
        i
    }
    fn write_tick(&mut self) {
        if self.last_tick_written == self.tick {
            return;
        }
        if self.tick == self.last_tick_written + 1 {
            self.ops.u8(10);
        } else {
            self.ops.u8(0);
            self.ops.u32(self.tick);
        }
        self.last_tick_written = self.tick;
    }
    fn spawn(&mut self, descriptor: &str, parent: u16, snapshot: Option<Vec<u8>>) -> u16 {
        let id = self.next_id;
        self.next_id += 1;
        self.write_tick();
        self.ops.u8(1);
        self.ops.u16(id);
        let d = self.intern(descriptor);
        self.ops.u16(d);
        self.ops.u16(parent);
        self.ents.insert(
            id,
            FbEntity {
                last_pos: None,
                last_yaw: None,
                last_rot: None,
            },
        );
        if let Some(s) = snapshot {
            self.pending_snapshots.insert(id, s);
        }
        id
    }
    fn flush_snapshot(&mut self, id: u16) {
        if let Some(s) = self.pending_snapshots.remove(&id) {
            self.write_tick();
            self.ops.u8(14);
            self.ops.u16(id);
            self.ops.u32(s.len() as u32);
            self.ops.0.extend_from_slice(&s);
        }
    }
    fn despawn(&mut self, id: u16) {
        self.flush_snapshot(id);
        self.write_tick();
        self.ops.u8(2);
        self.ops.u16(id);
        self.ents.remove(&id);
    }
    fn prop_number(&mut self, id: u16, name: &str, v: f64) {
        self.write_tick();
        self.ops.u8(4);
        self.ops.u16(id);
        let n = self.intern(name);
        self.ops.u16(n);
        self.ops.u8(1);
        self.ops.f64(v);
    }
    fn prop_other(&mut self, id: u16, name: &str, tag: u8, payload: &[u8]) {
        self.write_tick();
        self.ops.u8(4);
        self.ops.u16(id);
        let n = self.intern(name);
        self.ops.u16(n);
        self.ops.u8(tag);
        self.ops.0.extend_from_slice(payload);
    }
    fn anim_play(&mut self, id: u16, anim: &str, handle: u8) {
        self.write_tick();
        self.ops.u8(5);
        self.ops.u16(id);
        let a = self.intern(anim);
        self.ops.u16(a);
        self.ops.u8(handle);
        self.ops.u8(10);
        self.ops.i16(256);
    }
    fn event(&mut self, name: &str, payload: &str) {
        self.write_tick();
        self.ops.u8(8);
        let n = self.intern(name);
        let p = self.intern(payload);
        self.ops.u16(n);
        self.ops.u16(p);
    }
    fn custom(&mut self, channel: &str, data: &[u8]) {
        self.write_tick();
        self.ops.u8(9);
        let c = self.intern(channel);
        self.ops.u16(c);
        self.ops.u16(data.len() as u16);
        self.ops.0.extend_from_slice(data);
    }
    fn begin_tick(&mut self) -> bool {
        self.tick += 1;
        let keyframe = self.tick % 300 == 1;
        if keyframe {
            self.keyframes.push((self.tick, self.ops.0.len() as u32));
        }
        keyframe
    }
    fn write_full(&mut self, id: u16, pos: DVec3, rot: DQuat, yaw_only: bool) {
        self.write_tick();
        self.ops.u8(3);
        self.ops.u16(id);
        self.ops.u8(1 + if yaw_only { 4 } else { 2 });
        self.ops.vec3([pos.x as f32, pos.y as f32, pos.z as f32]);
        let e = self.ents.get_mut(&id).unwrap();
        if yaw_only {
            let q = quantize_yaw(yaw_of(rot));
            self.ops.i16(q);
            e.last_yaw = Some(dequantize_yaw(q));
            e.last_rot = None;
        } else {
            for c in quantize_axis_angle(rot) {
                self.ops.i16(c);
            }
            e.last_yaw = None;
            e.last_rot = Some(rot); // the unquantized rotation, as the reference keeps it
        }
        e.last_pos = Some(pos);
    }
    fn transform(&mut self, id: u16, pos: DVec3, rot: DQuat, keyframe: bool) {
        let yaw_only = is_upright(rot);
        let e = &self.ents[&id];
        let Some(last_pos) = e.last_pos.filter(|_| !keyframe) else {
            return self.write_full(id, pos, rot, yaw_only);
        };
        let dp = pos - last_pos;
        let q = (dp * 32.0).round();
        let fits = |v: f64| (-127.0..=127.0).contains(&v);
        let fits16 = |v: f64| (-32767.0..=32767.0).contains(&v);
        let mut mask = 0u8;
        if dp.length() > 1.0 / 32.0 {
            if fits(q.x) && fits(q.y) && fits(q.z) {
                mask = 1;
            } else if fits16(q.x) && fits16(q.y) && fits16(q.z) {
                mask = 2;
            } else {
                return self.write_full(id, pos, rot, yaw_only);
            }
        }
        let mut dyaw = 0.0;
        let mut r = DVec3::ZERO;
        match (yaw_only, e.last_yaw, e.last_rot) {
            (true, Some(ly), _) => {
                let delta = wrap_angle(yaw_of(rot) - ly);
                dyaw = (delta * 64.0).round();
                if delta.abs() > 1.0 / 64.0 {
                    if !fits(dyaw) {
                        return self.write_full(id, pos, rot, yaw_only);
                    }
                    mask += 4;
                }
            }
            (false, _, Some(lr)) => {
                let v =
                    statepack_codecs::rply_xform::axis_angle_vector(lr.conjugate() * rot) * 128.0;
                r = v.round();
                if r != DVec3::ZERO {
                    if !(fits(r.x) && fits(r.y) && fits(r.z)) {
                        return self.write_full(id, pos, rot, yaw_only);
                    }
                    mask += 8;
                }
            }
            _ => return self.write_full(id, pos, rot, yaw_only),
        }
        if mask == 0 {
            return;
        }
        self.write_tick();
        self.ops.u8(11);
        self.ops.id(id);
        self.ops.u8(mask);
        let e = self.ents.get_mut(&id).unwrap();
        if mask & 1 != 0 {
            [q.x, q.y, q.z].iter().for_each(|&v| self.ops.i8(v as i8));
            e.last_pos = Some(last_pos + q / 32.0);
        } else if mask & 2 != 0 {
            [q.x, q.y, q.z].iter().for_each(|&v| self.ops.i16(v as i16));
            e.last_pos = Some(last_pos + q / 32.0);
        }
        if mask & 4 != 0 {
            self.ops.i8(dyaw as i8);
            e.last_yaw = Some(wrap_angle(e.last_yaw.unwrap() + dyaw / 64.0));
        }
        if mask & 8 != 0 {
            [r.x, r.y, r.z].iter().for_each(|&v| self.ops.i8(v as i8));
            let d = rotation_from_delta([r.x as i8, r.y as i8, r.z as i8]);
            e.last_rot = Some((e.last_rot.unwrap() * d).normalize());
        }
    }
    fn finalize(&mut self, place_version: u32) -> Vec<u8> {
        let ids: Vec<u16> = self.pending_snapshots.keys().copied().collect();
        for id in ids {
            self.flush_snapshot(id);
        }
        let mut w = W::default();
        w.u32(0x594C_5052);
        w.u8(3);
        w.u8(15);
        w.u32(place_version);
        w.f64(1_764_460_800.0);
        w.u32(self.tick);
        w.u16(self.strings.len() as u16);
        w.u16(self.keyframes.len() as u16);
        w.u32(self.ops.0.len() as u32);
        for s in &self.strings {
            w.str16(s);
        }
        for &(t, o) in &self.keyframes {
            w.u32(t);
            w.u32(o);
        }
        w.0.extend_from_slice(&self.ops.0);
        w.0
    }
}

/// A character snapshot laid out as the reference capture writes it: root part with an
/// attachment, a MeshPart head with a SurfaceAppearance and a decal, an accessory handle
/// with a SpecialMesh and a sound, Motor6D/Weld/RigidConstraint joints.
fn fb_character_snapshot() -> Vec<u8> {
    let mut w = W::default();
    w.u8(10);
    w.u8(1);
    w.str16("Player1");
    w.str16("Workspace.Player1");
    w.str16("HumanoidRootPart");
    w.u16(0); // unions
    w.u16(1);
    w.str16("rbxassetid://7430070");
    // Rig block.
    w.u8(1);
    w.u8(1);
    w.str16("rbxassetid://144076358");
    w.str16("rbxassetid://144076760");
    w.str16("");
    w.u8(1);
    for c in 0..6u8 {
        w.u8(c * 30);
        w.u8(200);
        w.u8(100);
    }
    w.u8(0);
    let part_head =
        |w: &mut W, kind: u8, name: &str, parent: &str, offset: [f32; 3], rot: [i16; 3]| {
            w.u8(kind);
            w.str16(name);
            w.str16(parent);
            w.vec3(offset);
            rot.iter().for_each(|&c| w.i16(c));
            w.vec3([2.0, 2.0, 1.0]);
            w.u8(163);
            w.u8(162);
            w.u8(165);
            w.u16(256);
            w.u8(255); // transparency 1 (unit(1) = 255)
            w.u8(0);
            w.u8(if kind == 0 { 1 } else { 0 });
            for s in [0u8, 0, 0, 0, 0, 0] {
                w.u8(s);
            }
        };
    w.u16(3);
    // 1: root part, an attachment with two Vector3 properties.
    part_head(&mut w, 0, "HumanoidRootPart", "", [0.0; 3], [0; 3]);
    w.u8(0); // no SpecialMesh
    w.u8(0); // no SurfaceAppearance
    w.u8(0); // no decals
    w.u8(1); // one effect
    w.u8(1);
    w.u8(0);
    w.str16("RootRigAttachment");
    w.u8(2); // property count (patched in after the properties by the reference)
    w.u8(1);
    w.u8(4);
    w.vec3([0.0, 0.0, 0.0]);
    w.u8(2);
    w.u8(4);
    w.vec3([0.0, 90.0, 0.0]);
    // 2: MeshPart head.
    part_head(&mut w, 1, "Head", "", [0.0, 1.5, 0.0], [0, 0, 0]);
    w.str16("rbxassetid://7430070");
    w.str16("rbxassetid://7430071");
    w.vec3([1.2, 1.2, 1.2]);
    w.u8(0);
    w.u8(1);
    w.str16("rbxassetid://1");
    w.str16("");
    w.str16("");
    w.str16("");
    w.u8(0);
    w.u8(255);
    w.u8(255);
    w.u8(255);
    w.u8(1); // a decal (not a texture)
    w.u8(0);
    w.u8(5);
    w.str16("rbxasset://textures/face.png");
    w.u8(0);
    w.u8(255);
    w.u8(255);
    w.u8(255);
    w.u8(0);
    w.u8(0); // no effects
             // 3: accessory handle with a SpecialMesh and a sound with a string, a number and an enum.
    part_head(&mut w, 0, "Handle", "Hat", [0.0, 2.2, 0.0], [0, 32767, 0]);
    w.u8(1);
    w.u8(5);
    w.str16("rbxassetid://1028713");
    w.str16("rbxassetid://1028714");
    w.vec3([1.0, 1.0, 1.0]);
    w.vec3([0.0, 0.1, 0.0]);
    w.vec3([1.0, 1.0, 1.0]);
    w.u8(0);
    w.u8(0);
    w.u8(1);
    w.u8(2);
    w.u8(0);
    w.str16("Jingle");
    w.u8(3);
    w.u8(1);
    w.u8(2);
    w.str16("rbxassetid://12222");
    w.u8(2);
    w.u8(1);
    w.f32(0.5);
    w.u8(9);
    w.u8(9);
    w.str16("InverseTapered");
    // Joints.
    w.u16(3);
    w.u8(2);
    w.str16("Neck");
    w.u16(2);
    w.u16(1);
    w.u16(2);
    w.vec3([0.0, 1.0, 0.0]);
    [0i16, 0, 0].iter().for_each(|&c| w.i16(c));
    w.vec3([0.0, -0.5, 0.0]);
    [0i16, 0, 0].iter().for_each(|&c| w.i16(c));
    w.u8(1);
    w.str16("AccessoryWeld");
    w.u16(3);
    w.u16(2);
    w.u16(3);
    w.vec3([0.0, 0.7, 0.0]);
    [0i16, 0, 0].iter().for_each(|&c| w.i16(c));
    w.vec3([0.0; 3]);
    [0i16, 16384, 0].iter().for_each(|&c| w.i16(c));
    w.u8(4);
    w.str16("HatLock");
    w.u16(3);
    w.u16(1);
    w.str16("RootRigAttachment");
    w.u16(3);
    w.str16("HatAttachment");
    w.0
}

/// A replay shaped as the reference writes it: a character with a tool, 258 debris parts
/// (ids past 254 use the wide compact id), 620 ticks with keyframes at 1, 301 and 601, an
/// idle gap, events, a custom channel, properties of every kind and animations.
/// Per tick, the (entity, position, rotation) given to the recorder.
type Source = Vec<Vec<(u16, DVec3, DQuat)>>;

fn fb_replay() -> (Vec<u8>, Source) {
    let mut r = FbRecorder::new();
    let ch = r.spawn("char:1001", 0, Some(fb_character_snapshot()));
    r.prop_number(ch, "Humanoid/Health", 100.0);
    r.prop_number(ch, "Humanoid/MaxHealth", 100.0);
    r.anim_play(ch, "rbxassetid://507777826", 1);
    let debris: Vec<u16> = (0..258).map(|_| r.spawn("part:Block", 0, None)).collect();
    let mut tool = 0;
    let mut source = Vec::new();
    for t in 1..=620u32 {
        let keyframe = r.begin_tick();
        let s = f64::from(t) / 15.0;
        let mut row = Vec::new();
        let idle = (100..=110).contains(&t);
        let p = if idle {
            DVec3::new(60.0 / 15.0 * 6.0, 3.0, 0.0)
        } else {
            DVec3::new(
                s.min(99.0 / 15.0) * 6.0 + (s - 110.0 / 15.0).max(0.0) * 6.0,
                3.0,
                (s * 0.5).sin() * 4.0,
            )
        };
        let q = DQuat::from_rotation_y(if idle { 0.4 } else { s * 0.4 });
        if !idle || keyframe {
            r.transform(ch, p, q, keyframe);
            row.push((ch, p, q));
        }
        for (i, &d) in debris.iter().enumerate() {
            if idle {
                continue;
            }
            let dp = DVec3::new(
                i as f64 * 3.0,
                1.0 + (s + i as f64).sin().abs() * 2.0,
                (s * 3.0).min(40.0),
            );
            let dq = DQuat::from_rotation_x(s * 0.7 + i as f64) * DQuat::from_rotation_z(0.3);
            r.transform(d, dp, dq, keyframe);
            row.push((d, dp, dq));
        }
        if tool != 0 && !idle {
            let tp = p + DVec3::new(1.0, 0.0, 0.0);
            r.transform(tool, tp, q, keyframe);
            row.push((tool, tp, q));
        }
        match t {
            5 => r.event("RoundStart", "[]"),
            20 => {
                tool = r.spawn("model:Sword", ch, Some(fb_character_snapshot()));
                r.prop_other(ch, "@Team", 0, &[1]);
            }
            40 => {
                r.prop_number(ch, "Humanoid/Health", 72.5);
                r.prop_other(ch, "Hat/Handle/Color", 3, &[255, 128, 0]);
                r.prop_other(
                    ch,
                    "Hat/Handle/Size",
                    4,
                    &[0, 0, 128, 63, 0, 0, 128, 63, 0, 0, 128, 63],
                );
                let m = r.intern("Neon");
                r.prop_other(ch, "Hat/Handle/Material", 5, &m.to_le_bytes());
                let n = r.intern("Sedan");
                r.prop_other(ch, "Name", 2, &n.to_le_bytes());
            }
            200 => r.despawn(tool),
            250 => r.event("RoundEnd", "{\"winner\":\"Blue\"}"),
            _ => {}
        }
        if t == 200 {
            tool = 0;
        }
        if t % 7 == 0 {
            r.custom("score", &[t as u8, 0, 1]);
        }
        source.push(row);
    }
    (r.finalize(42), source)
}

/// The reference player's view of a replay: per entity, the transform after each tick,
/// decoded with its rules (lenient: deltas without a base start from zero, unknown
/// entities are skipped).
fn fb_play(bytes: &[u8]) -> BTreeMap<u32, BTreeMap<u16, (DVec3, Option<DQuat>)>> {
    let file = RplyV3::decode(bytes).unwrap();
    #[derive(Clone, Copy, Default)]
    struct St {
        pos: DVec3,
        yaw: Option<f64>,
        rot: Option<DQuat>,
        shown: Option<DQuat>,
    }
    let mut st: BTreeMap<u16, St> = BTreeMap::new();
    let mut live = std::collections::BTreeSet::new();
    let mut tick = 0u32;
    let mut out = BTreeMap::new();
    let snap = |tick: u32,
                st: &BTreeMap<u16, St>,
                live: &std::collections::BTreeSet<u16>,
                out: &mut BTreeMap<u32, BTreeMap<u16, (DVec3, Option<DQuat>)>>| {
        out.insert(
            tick,
            st.iter()
                .filter(|(id, _)| live.contains(*id))
                .map(|(&id, s)| (id, (s.pos, s.shown)))
                .collect(),
        );
    };
    for op in &file.ops.ops {
        match &op.body {
            raw::OpBody::OpTick(t) => {
                snap(tick, &st, &live, &mut out);
                tick = t.tick;
            }
            raw::OpBody::OpTickNext(_) => {
                snap(tick, &st, &live, &mut out);
                tick += 1;
            }
            raw::OpBody::OpSpawn(s) => {
                live.insert(s.entity_id);
            }
            raw::OpBody::OpDespawn(d) => {
                live.remove(&d.entity_id);
            }
            raw::OpBody::OpXform(x) => {
                let mut s = St::default();
                if let Some(p) = x.pos {
                    s.pos = DVec3::new(f64::from(p[0]), f64::from(p[1]), f64::from(p[2]));
                }
                if let Some(r) = x.rot {
                    s.rot = Some(dequantize_axis_angle(r));
                    s.shown = s.rot;
                }
                if let Some(y) = x.yaw {
                    s.yaw = Some(dequantize_yaw(y));
                    s.shown = Some(DQuat::from_rotation_y(dequantize_yaw(y)));
                }
                st.insert(x.entity_id, s);
            }
            raw::OpBody::OpXformD(x) => {
                let id = x.id_wide.unwrap_or(u16::from(x.id_byte));
                let s = st.entry(id).or_default();
                if let Some(d) = x.pos8 {
                    s.pos += DVec3::new(f64::from(d[0]), f64::from(d[1]), f64::from(d[2])) / 32.0;
                } else if let Some(d) = x.pos16 {
                    s.pos += DVec3::new(f64::from(d[0]), f64::from(d[1]), f64::from(d[2])) / 32.0;
                }
                if let Some(dy) = x.yaw {
                    let y = wrap_angle(s.yaw.unwrap_or(0.0) + f64::from(dy) / 64.0);
                    s.yaw = Some(y);
                    s.shown = Some(DQuat::from_rotation_y(y));
                }
                if let Some(dr) = x.rot {
                    let r =
                        (s.rot.unwrap_or(DQuat::IDENTITY) * rotation_from_delta(dr)).normalize();
                    s.rot = Some(r);
                    s.shown = Some(r);
                }
            }
            _ => {}
        }
    }
    snap(tick, &st, &live, &mut out);
    out
}

/// Our player and the reference player's rules agree on every tick of `bytes`.
fn agree_with_reference_rules(bytes: &[u8]) {
    let fb = fb_play(bytes);
    let mut p = Player::open(bytes).unwrap();
    let mut last = BTreeMap::new();
    for t in 0..=p.header().tick_count {
        p.advance().unwrap();
        if let Some(v) = fb.get(&t) {
            last = v.clone();
        }
        let ours: BTreeMap<u16, _> = p
            .state()
            .entities
            .iter()
            .filter(|(_, e)| e.xform.pos.is_some())
            .map(|(&id, e)| (id, e))
            .collect();
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            last.keys().collect::<Vec<_>>(),
            "tick {t}"
        );
        for (id, (pos, rot)) in &last {
            let e = ours[id];
            if let Some(pp) = e.xform.pos {
                assert!(
                    (pp - *pos).length() < 1e-9,
                    "tick {t} entity {id}: {pp} vs {pos}"
                );
            }
            if let (Some(a), Some(b)) = (e.xform.shown_rot, rot) {
                assert!(
                    statepack_codecs::quant::angle_between_rad(a, *b) < 1e-9,
                    "tick {t} entity {id}"
                );
            }
        }
    }
}

#[test]
fn reference_shaped_replay_reads_correctly() {
    let (bytes, source) = fb_replay();
    // Layout: the raw layer reads every op and the snapshot, and writes the same bytes.
    let file = RplyV3::decode(&bytes).unwrap();
    assert_eq!(file.encode().unwrap(), bytes);
    assert_eq!(
        file.head
            .keyframes
            .iter()
            .map(|k| k.tick)
            .collect::<Vec<_>>(),
        [1, 301, 601]
    );
    assert_eq!(
        file.head.strings[0].value, "char:1001",
        "first-use order, 1-based"
    );
    assert!(file
        .ops
        .ops
        .iter()
        .any(|o| matches!(&o.body, raw::OpBody::OpXformD(x) if x.id_wide.is_some())));
    assert!(
        file.ops
            .ops
            .iter()
            .any(|o| matches!(&o.body, raw::OpBody::OpTick(_))),
        "absolute TICK after the idle gap"
    );
    // Every rule of our player holds for it, keyframes included.
    let n = rply::verify(&bytes).unwrap();
    assert_eq!(n, file.ops.ops.len() as u64);
    // Transforms: as the reference player would show them, and close to the source.
    agree_with_reference_rules(&bytes);
    let mut p = Player::open(&bytes).unwrap();
    p.advance().unwrap();
    let mut worst = (0.0f64, 0.0f64);
    for row in &source {
        p.advance().unwrap();
        for &(id, pos, rot) in row {
            // The tool despawns after its last transform (tick 200).
            let Some(e) = p.state().entities.get(&id) else {
                continue;
            };
            worst.0 = worst.0.max((e.xform.pos.unwrap() - pos).length());
            worst.1 = worst.1.max(statepack_codecs::quant::angle_between_rad(
                e.xform.shown_rot.unwrap(),
                rot,
            ));
        }
    }
    // 1/32-stud and 1/64-rad thresholds, plus quantization (sqrt(3)/64 stud, sqrt(3)/256 rad
    // per delta) and the reference's unquantized base after full tilted samples.
    assert!(worst.0 < 0.05, "{worst:?}");
    assert!(worst.1 < 0.02, "{worst:?}");
    // Properties, events, animations, custom bytes and the snapshot.
    p.seek(45).unwrap();
    let ch = &p.state().entities[&1];
    assert_eq!(
        ch.props[&*"Humanoid/Health".to_owned()],
        PropValue::Number(72.5)
    );
    assert_eq!(ch.props[&*"@Team".to_owned()], PropValue::Bool(true));
    assert_eq!(
        ch.props[&*"Hat/Handle/Color".to_owned()],
        PropValue::Color3([255, 128, 0])
    );
    assert_eq!(
        ch.props[&*"Hat/Handle/Size".to_owned()],
        PropValue::Vector3([1.0; 3])
    );
    assert_eq!(
        ch.props[&*"Hat/Handle/Material".to_owned()],
        PropValue::Enum("Neon".into())
    );
    assert_eq!(
        ch.props[&*"Name".to_owned()],
        PropValue::String("Sedan".into())
    );
    assert_eq!(&*ch.anims[&1].anim_id, "rbxassetid://507777826");
    assert_eq!((ch.anims[&1].fade_s, ch.anims[&1].speed), (0.1, 1.0));
    let tool = p
        .state()
        .entities
        .values()
        .find(|e| &*e.descriptor == "model:Sword")
        .unwrap();
    assert_eq!(tool.parent, 1);
    p.seek(10).unwrap();
    let ev = &p.state().recent_events;
    assert_eq!(
        (ev[0].tick, &*ev[0].name, &*ev[0].payload),
        (5, "RoundStart", "[]")
    );
    p.seek(200).unwrap();
    assert!(p
        .state()
        .entities
        .values()
        .all(|e| &*e.descriptor != "model:Sword"));
    assert_eq!(
        p.state()
            .recent_custom
            .last()
            .map(|c| (c.tick, c.data.clone())),
        Some((196, vec![196, 0, 1]))
    );
    // The character's snapshot is flushed at the end, as the reference does.
    p.seek(620).unwrap();
    let snap = p.state().entities[&1]
        .snapshot
        .clone()
        .expect("flushed at finalize");
    assert_eq!(snap.name.value, "Player1");
    assert_eq!(snap.parts.len(), 3);
    assert_eq!(
        snap.parts[1].mesh.as_ref().unwrap().mesh_id.value,
        "rbxassetid://7430070"
    );
    assert_eq!(snap.parts[2].special_mesh.as_ref().unwrap().mesh_type, 5);
    assert_eq!(
        snap.parts[2].effects[0].props[2].tag,
        raw::ValueTag::EnumName
    );
    assert_eq!(snap.joints[2].kind, raw::JointKind::RigidConstraint);
    assert_eq!(
        snap.rig
            .as_ref()
            .unwrap()
            .humanoid
            .as_ref()
            .unwrap()
            .body_colors
            .as_ref()
            .unwrap()[5]
            .r,
        150
    );
    // Storage as the reference store does it: 3 MiB chunks, here forced small.
    let (chunks, meta) = rply::save_chunks("r", &bytes, 64 * 1024).unwrap();
    let store: HashMap<_, _> = chunks.into_iter().collect();
    assert_eq!(
        rply::load_chunks("r", &meta, |k| store.get(k).cloned()).unwrap(),
        bytes
    );
    // Place version.
    assert!(Player::open_for_place(&bytes, 42).is_ok());
    assert!(Player::open_for_place(&bytes, 43).is_err());
}

/// Our files read the same under the reference player's rules.
#[test]
fn our_files_read_the_same_under_reference_rules() {
    for (_, bytes) in (rply::FORMAT.samples)() {
        agree_with_reference_rules(&bytes);
    }
}
