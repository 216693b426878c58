//! RPLY v3 player: the state reached by seeking equals the state reached by playing from the
//! start, for every tick of a file (random recordings and the samples), and the recorder's
//! closed loop keeps the played transforms within the thresholds of what was recorded.

use glam::{DQuat, DVec3};
use proptest::prelude::*;
use statepack::formats::rply::{self, Player, PropValue, Recorder, RecorderOptions, State};
use statepack_codecs::quant::angle_between_rad;
use statepack_codecs::rply_xform::Thresholds;

/// Every tick's state, playing from the start.
fn play_all(bytes: &[u8]) -> Vec<State> {
    let mut p = Player::open(bytes).unwrap();
    let mut out = Vec::new();
    while p.advance().unwrap() {
        out.push(p.state().clone());
    }
    out
}

/// Seeks to every tick, last first (so every seek goes back through a keyframe), then in a
/// random order, and compares with playing.
fn check_seek_equals_play(bytes: &[u8], seed: u64) {
    let played = play_all(bytes);
    let mut p = Player::open(bytes).unwrap();
    assert_eq!(played.len() as u32, p.header().tick_count + 1);
    for t in (0..played.len()).rev() {
        p.seek(t as u32).unwrap();
        assert_eq!(p.state(), &played[t], "seek back to tick {t}");
    }
    let mut s = seed | 1;
    let mut fresh = Player::open(bytes).unwrap();
    for _ in 0..played.len().min(200) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let t = (s % played.len() as u64) as usize;
        fresh.seek(t as u32).unwrap();
        assert_eq!(fresh.state(), &played[t], "random seek to tick {t}");
    }
}

#[derive(Debug, Clone)]
enum Act {
    Spawn {
        parent: bool,
    },
    Despawn(usize),
    Move {
        who: usize,
        step: f64,
        jump: bool,
        tilt: bool,
    },
    Prop {
        who: usize,
        name: u8,
        value: u8,
    },
    Anim {
        who: usize,
        kind: u8,
    },
    Event(u8),
    Custom(u8),
    Snapshot(usize),
}

fn act() -> impl Strategy<Value = Act> {
    prop_oneof![
        2 => any::<bool>().prop_map(|parent| Act::Spawn { parent }),
        1 => any::<usize>().prop_map(Act::Despawn),
        8 => (any::<usize>(), -3.0f64..3.0, prop::bool::weighted(0.05), prop::bool::weighted(0.3))
            .prop_map(|(who, step, jump, tilt)| Act::Move { who, step, jump, tilt }),
        2 => (any::<usize>(), 0u8..4, any::<u8>()).prop_map(|(who, name, value)| Act::Prop { who, name, value }),
        1 => (any::<usize>(), 0u8..3).prop_map(|(who, kind)| Act::Anim { who, kind }),
        1 => any::<u8>().prop_map(Act::Event),
        1 => any::<u8>().prop_map(Act::Custom),
        1 => any::<usize>().prop_map(Act::Snapshot),
    ]
}

fn record(ticks: &[Vec<Act>], keyframe_every: u32, th: Thresholds) -> Vec<u8> {
    let mut rec = Recorder::new(RecorderOptions {
        keyframe_every,
        thresholds: th,
        ..RecorderOptions::default()
    });
    let mut live: Vec<u16> = Vec::new();
    let mut pose: std::collections::HashMap<u16, (DVec3, f64, bool)> = Default::default();
    let mut handles: std::collections::HashMap<u16, Vec<u8>> = Default::default();
    for (t, acts) in ticks.iter().enumerate() {
        if t > 0 {
            rec.begin_tick().unwrap();
        }
        for a in acts {
            let pick = |i: &usize| live.get(i % live.len().max(1)).copied();
            match a {
                Act::Spawn { parent } => {
                    let p = if *parent { live.last().copied() } else { None };
                    let id = rec
                        .spawn(if p.is_some() { "model:Tool" } else { "char:1" }, p)
                        .unwrap();
                    live.push(id);
                }
                Act::Despawn(i) => {
                    if let Some(id) = pick(i) {
                        rec.despawn(id).unwrap();
                        // Children went with it.
                        let state_live: Vec<u16> =
                            live.iter().copied().filter(|&x| x != id).collect();
                        live = state_live;
                        let file = rec.finish().unwrap();
                        let mut p = Player::open(&file).unwrap();
                        p.seek(p.header().tick_count).unwrap();
                        live.retain(|x| p.state().entities.contains_key(x));
                    }
                }
                Act::Move {
                    who,
                    step,
                    jump,
                    tilt,
                } => {
                    if let Some(id) = pick(who) {
                        let e = pose
                            .entry(id)
                            .or_insert((DVec3::new(*step, 1.0, 0.0), 0.0, false));
                        e.0 += if *jump {
                            DVec3::new(900.0, 0.0, 0.0)
                        } else {
                            DVec3::new(*step, 0.0, step * 0.5)
                        };
                        e.1 += step * 0.3;
                        e.2 = *tilt;
                        let rot = if e.2 {
                            DQuat::from_rotation_y(e.1) * DQuat::from_rotation_x(0.2)
                        } else {
                            DQuat::from_rotation_y(e.1)
                        };
                        rec.transform(id, e.0, rot).unwrap();
                    }
                }
                Act::Prop { who, name, value } => {
                    if let Some(id) = pick(who) {
                        let v = match value % 6 {
                            0 => PropValue::Bool(value % 2 == 0),
                            1 => PropValue::Number(f64::from(*value) / 7.0),
                            2 => PropValue::String(format!("s{value}").into()),
                            3 => PropValue::Color3([*value, 0, 255]),
                            4 => PropValue::Vector3([f32::from(*value), 1.0, 2.0]),
                            _ => PropValue::Enum("Neon".into()),
                        };
                        let names = ["Transparency", "@Team", "Scale", "Hat/Handle/Color"];
                        rec.prop(id, names[usize::from(*name)], v).unwrap();
                    }
                }
                Act::Anim { who, kind } => {
                    if let Some(id) = pick(who) {
                        let hs = handles.entry(id).or_default();
                        match (kind, hs.last().copied()) {
                            (1, Some(h)) => {
                                rec.anim_stop(id, h, 0.1).unwrap();
                                hs.pop();
                            }
                            (2, Some(h)) => rec.anim_speed(id, h, 0.5).unwrap(),
                            _ => hs.push(rec.anim_play(id, "rbxassetid://1", 0.1, 1.0).unwrap()),
                        }
                    }
                }
                Act::Event(n) => rec
                    .event("Hit", &serde_json::json!({ "n": n % 4 }))
                    .unwrap(),
                Act::Custom(n) => rec.custom("ch", &[*n; 3]).unwrap(),
                Act::Snapshot(i) => {
                    if let Some(id) = pick(i) {
                        rec.snapshot(id, &statepack::formats::rply::samples::full_snapshot())
                            .unwrap();
                    }
                }
            }
        }
        let alive: Vec<u16> = live.clone();
        handles.retain(|k, _| alive.contains(k));
    }
    rec.finish().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn seek_equals_play_on_random_recordings(
        ticks in prop::collection::vec(prop::collection::vec(act(), 0..6), 1..60),
        keyframe_every in 1u32..12,
        pos_th in prop_oneof![Just(0.0), Just(0.05), Just(0.5)],
        seed in any::<u64>(),
    ) {
        let th = Thresholds { pos_threshold_studs: pos_th, rot_threshold_rad: pos_th * 0.1 };
        let bytes = record(&ticks, keyframe_every, th);
        rply::verify(&bytes).unwrap();
        check_seek_equals_play(&bytes, seed);
        // Raw decode then encode gives the same bytes.
        prop_assert_eq!(rply::RplyV3::decode(&bytes).unwrap().encode().unwrap(), bytes);
    }
}

#[test]
fn seek_equals_play_on_the_samples() {
    for (name, bytes) in (rply::FORMAT.samples)() {
        check_seek_equals_play(&bytes, name.len() as u64);
    }
}

/// A path the closed loop follows: played transforms stay within the thresholds (plus the
/// yaw quantization's half step) of the recorded ones, including right after full samples.
#[test]
fn played_transforms_stay_within_thresholds() {
    let th = Thresholds::default();
    let mut rec = Recorder::new(RecorderOptions {
        keyframe_every: 50,
        thresholds: th,
        ..RecorderOptions::default()
    });
    let a = rec.spawn("char:1", None).unwrap();
    let b = rec.spawn("part:Block", None).unwrap();
    let mut src = Vec::new();
    for t in 1..=600u32 {
        rec.begin_tick().unwrap();
        let s = f64::from(t) / 15.0;
        let pa = (
            DVec3::new(s.sin() * 30.0, 3.0, s * 6.0),
            DQuat::from_rotation_y(s * 0.8),
        );
        let pb = (
            DVec3::new(s * 2.0, 10.0 + s.cos(), 0.0),
            DQuat::from_rotation_z(s * 0.3) * DQuat::from_rotation_x(0.5),
        );
        rec.transform(a, pa.0, pa.1).unwrap();
        rec.transform(b, pb.0, pb.1).unwrap();
        src.push([pa, pb]);
    }
    let bytes = rec.finish().unwrap();
    let mut p = Player::open(&bytes).unwrap();
    p.advance().unwrap();
    let (mut wp, mut wr) = (0.0f64, 0.0f64);
    for row in &src {
        p.advance().unwrap();
        for (id, (pos, rot)) in [(a, row[0]), (b, row[1])] {
            let e = &p.state().entities[&id];
            wp = wp.max((e.xform.pos.unwrap() - pos).length());
            wr = wr.max(angle_between_rad(e.xform.shown_rot.unwrap(), rot));
        }
    }
    assert!(wp < th.pos_threshold_studs, "{wp}");
    assert!(wr < th.rot_threshold_rad + 1e-4, "{wr}");
    let st = rec.stats();
    assert!(st.xform_delta > st.xform_full * 5, "{st:?}");
}
