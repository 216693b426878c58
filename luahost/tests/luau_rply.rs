//! RPLY v3 XFORM in Luau (`lua/luau/rply_xform.luau`) against the Rust runtime
//! (`statepack_codecs::rply_xform`) on the same inputs: the yaw and axis-angle quantizers,
//! their inverses, the player's state replaying the Rust encoder's steps, and the Luau
//! closed-loop encoder emitting the Rust encoder's steps on the same paths.
//!
//! Half turns are in the sweep: rotations decoded from codes within three codes of π are
//! quantized again on both sides (each writes, of a half turn's two codes, the one that
//! reads nearer the rotation).

mod common;

use common::{report, Rng};
use glam::{DQuat, DVec3};
use mlua::{Function, Table, Value};
use statepack_codecs::rply_xform::*;
use statepack_luahost::LuauHost;

fn num(v: Value) -> f64 {
    match v {
        Value::Integer(i) => i as f64,
        Value::Number(n) => n,
        other => panic!("not a number: {other:?}"),
    }
}

fn quat_table(host: &LuauHost, q: DQuat) -> Table {
    host.lua.create_sequence_from([q.x, q.y, q.z, q.w]).unwrap()
}

fn bits4(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

fn opt3(t: &Table, key: &str) -> Option<[f64; 3]> {
    t.get::<Option<Vec<f64>>>(key)
        .unwrap()
        .map(|v| [v[0], v[1], v[2]])
}

/// The Luau step table as the Rust step.
fn step_of(t: &Table) -> XformStep {
    if t.get::<bool>("full").unwrap() {
        XformStep::Full {
            pos: opt3(t, "pos").map(|p| p.map(|v| v as f32)),
            rot: opt3(t, "rot").map(|p| p.map(|v| v as i16)),
            yaw: t.get::<Option<f64>>("yaw").unwrap().map(|v| v as i16),
        }
    } else {
        XformStep::Delta {
            pos8: opt3(t, "pos8").map(|p| p.map(|v| v as i8)),
            pos16: opt3(t, "pos16").map(|p| p.map(|v| v as i16)),
            yaw: t.get::<Option<f64>>("yaw").unwrap().map(|v| v as i8),
            rot: opt3(t, "rot").map(|p| p.map(|v| v as i8)),
        }
    }
}

/// The Rust step as a Luau step table.
fn step_table(host: &LuauHost, s: &XformStep) -> Table {
    let t = host.lua.create_table().unwrap();
    let seq = |v: Vec<f64>| host.lua.create_sequence_from(v).unwrap();
    match *s {
        XformStep::Full { pos, rot, yaw } => {
            t.set("full", true).unwrap();
            if let Some(p) = pos {
                t.set("pos", seq(p.map(f64::from).to_vec())).unwrap();
            }
            if let Some(r) = rot {
                t.set("rot", seq(r.map(f64::from).to_vec())).unwrap();
            }
            if let Some(y) = yaw {
                t.set("yaw", f64::from(y)).unwrap();
            }
        }
        XformStep::Delta {
            pos8,
            pos16,
            yaw,
            rot,
        } => {
            t.set("full", false).unwrap();
            if let Some(p) = pos8 {
                t.set("pos8", seq(p.map(f64::from).to_vec())).unwrap();
            }
            if let Some(p) = pos16 {
                t.set("pos16", seq(p.map(f64::from).to_vec())).unwrap();
            }
            if let Some(y) = yaw {
                t.set("yaw", f64::from(y)).unwrap();
            }
            if let Some(r) = rot {
                t.set("rot", seq(r.map(f64::from).to_vec())).unwrap();
            }
        }
    }
    t
}

/// The Luau state compared with the Rust state, bit for bit.
fn assert_state(t: &Table, s: &XformState, what: &str) {
    let pos: Option<Vec<f64>> = t.get("pos").unwrap();
    assert_eq!(
        pos.map(|p| bits4(&p)),
        s.pos.map(|p| bits4(&p.to_array())),
        "{what}: pos"
    );
    assert_eq!(t.get::<bool>("posBase").unwrap(), s.pos_base, "{what}");
    let kind: String = t.get("baseKind").unwrap();
    match s.base {
        RotBase::None => assert_eq!(kind, "none", "{what}"),
        RotBase::Yaw(y) => {
            assert_eq!(kind, "yaw", "{what}");
            assert_eq!(
                t.get::<f64>("yaw").unwrap().to_bits(),
                y.to_bits(),
                "{what}: yaw"
            );
        }
        RotBase::Tilted(r) => {
            assert_eq!(kind, "tilted", "{what}");
            let got: Vec<f64> = t.get("rot").unwrap();
            assert_eq!(bits4(&got), bits4(&r.to_array()), "{what}: rot");
        }
    }
    let shown: Option<Vec<f64>> = t.get("shownRot").unwrap();
    assert_eq!(
        shown.map(|p| bits4(&p)),
        s.shown_rot.map(|p| bits4(&p.to_array())),
        "{what}: shown"
    );
}

/// Yaw and axis-angle codes of random rotations (and angles), and the rotations of codes.
#[test]
fn quantizers_match_rust() {
    let host = LuauHost::new().unwrap();
    let qyaw = host.func("rply_xform", "quantizeYaw").unwrap();
    let dyaw = host.func("rply_xform", "dequantizeYaw").unwrap();
    let qaa = host.func("rply_xform", "quantizeAxisAngle").unwrap();
    let daa = host.func("rply_xform", "dequantizeAxisAngle").unwrap();
    let yaw_of_l = host.func("rply_xform", "yawOf").unwrap();
    let upright_l = host.func("rply_xform", "isUpright").unwrap();
    let wrap_l = host.func("rply_xform", "wrapAngle").unwrap();
    let mut rng = Rng(0x5EED_0201);
    let mut n = 0;
    for i in 0..60_000 {
        // Angles: spread wide, and right on the wrap edges.
        let a = match i % 4 {
            0 => rng.unit() * 20.0,
            1 => std::f64::consts::PI * (rng.range(-5, 6) as f64),
            2 => rng.unit() * 1e5,
            _ => rng.unit() * std::f64::consts::PI,
        };
        assert_eq!(
            num(wrap_l.call(a).unwrap()).to_bits(),
            wrap_angle(a).to_bits(),
            "{a}"
        );
        assert_eq!(num(qyaw.call(a).unwrap()) as i16, quantize_yaw(a), "{a}");
        n += 2;
        // Rotations: random, upright (yaw only, a small tilt), and unnormalized.
        let q = match i % 3 {
            0 => {
                DQuat::from_rotation_y(rng.unit() * 7.0)
                    * DQuat::from_rotation_x(rng.unit() * 0.012)
            }
            1 => rng.quat().as_dquat() * (0.5 + rng.f64()),
            _ => rng.quat().as_dquat(),
        };
        let qt = quat_table(&host, q);
        let qn = q.normalize();
        let qnt = quat_table(&host, qn);
        assert_eq!(
            upright_l.call::<bool>(qnt.clone()).unwrap(),
            is_upright(qn),
            "{q:?}"
        );
        assert_eq!(
            num(yaw_of_l.call(qnt).unwrap()).to_bits(),
            yaw_of(qn).to_bits(),
            "{q:?}"
        );
        n += 2;
        let got: Vec<f64> = qaa.call(qt).unwrap();
        assert_eq!(
            got.iter().map(|v| *v as i16).collect::<Vec<_>>(),
            quantize_axis_angle(q).to_vec(),
            "{q:?}"
        );
        n += 1;
        // Half turns: a code near pi read back and quantized again, both sides.
        let axis = rng.quat().as_dquat().xyz().normalize();
        let len = 32767.0 - rng.f64() * 3.0;
        let code = [axis.x, axis.y, axis.z].map(|c| (c * len).round() as i16);
        let r = dequantize_axis_angle(code);
        let got: Vec<f64> = qaa.call(quat_table(&host, r)).unwrap();
        assert_eq!(
            got.iter().map(|v| *v as i16).collect::<Vec<_>>(),
            quantize_axis_angle(r).to_vec(),
            "half turn {code:?}"
        );
        n += 1;
        // Any code decodes as in Rust (codes near pi included).
        let code = [0; 3].map(|_: i16| rng.range(-32767, 32768) as i16);
        let got: Vec<f64> = daa
            .call(host.lua.create_sequence_from(code.map(f64::from)).unwrap())
            .unwrap();
        assert_eq!(
            bits4(&got),
            bits4(&dequantize_axis_angle(code).to_array()),
            "{code:?}"
        );
        let y = rng.range(-32767, 32768) as i16;
        assert_eq!(
            num(dyaw.call(f64::from(y)).unwrap()).to_bits(),
            dequantize_yaw(y).to_bits()
        );
        n += 2;
    }
    report("Luau RPLY XFORM quantizers", n);
}

/// A path of one entity: walking (upright, yaw turns), tumbling (tilted), teleports, pauses.
fn path(rng: &mut Rng, n: usize) -> Vec<(DVec3, DQuat, bool)> {
    let mut out = Vec::with_capacity(n);
    let mut p = DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 100.0;
    let mut yaw = rng.unit() * 3.0;
    let mut tilted = rng.range(0, 2) == 0;
    let mut q = rng.quat().as_dquat();
    let mut v = DVec3::new(rng.unit(), 0.0, rng.unit()) * 0.4;
    let mut spin = 0.05 * rng.unit();
    for _ in 0..n {
        match rng.range(0, 50) {
            0 => p += DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 3000.0,
            1 => tilted = !tilted,
            2 => v = DVec3::ZERO,
            3 => v = DVec3::new(rng.unit(), rng.unit(), rng.unit()) * 6.0,
            4 => spin = rng.unit() * 0.5,
            _ => {}
        }
        p += v;
        yaw += spin;
        let rot = if tilted {
            q = (q * DQuat::from_axis_angle(DVec3::new(0.3, 1.0, -0.2).normalize(), spin))
                .normalize();
            q
        } else {
            DQuat::from_rotation_y(yaw)
        };
        let force = rng.range(0, 200) == 0;
        out.push((p, rot, force));
    }
    out
}

/// The Luau encoder emits the Rust encoder's steps (or skips where it skips) and holds the
/// same state; the Luau player's state replays the Rust steps to the same state.
#[test]
fn closed_loop_encoder_and_player_match_rust() {
    let host = LuauHost::new().unwrap();
    let new_encoder = host.func("rply_xform", "newEncoder").unwrap();
    let encode = host.func("rply_xform", "encode").unwrap();
    let new_state = host.func("rply_xform", "newState").unwrap();
    let apply = host.func("rply_xform", "apply").unwrap();
    let mut rng = Rng(0x5EED_0202);
    let th = Thresholds::default();
    let (mut steps, mut deltas, mut skips) = (0, 0, 0);
    for run in 0..60 {
        let mut rust = XformEncoder::new();
        let enc: Table = new_encoder.call(()).unwrap();
        let player: Table = new_state.call(()).unwrap();
        for (i, (p, q, force)) in path(&mut rng, 500).into_iter().enumerate() {
            let want = rust.encode(p, q, force, &th).unwrap();
            let got: Value = encode
                .call((
                    enc.clone(),
                    host.lua.create_sequence_from([p.x, p.y, p.z]).unwrap(),
                    quat_table(&host, q),
                    force,
                ))
                .unwrap();
            let got = match got {
                Value::Nil => None,
                Value::Table(t) => Some(step_of(&t)),
                other => panic!("{other:?}"),
            };
            assert_eq!(got, want, "run {run} sample {i}");
            assert_state(
                &enc.get("state").unwrap(),
                rust.state(),
                &format!("run {run} sample {i}"),
            );
            match want {
                None => skips += 1,
                Some(s) => {
                    if matches!(s, XformStep::Delta { .. }) {
                        deltas += 1;
                    }
                    apply
                        .call::<()>((player.clone(), step_table(&host, &s)))
                        .unwrap();
                    assert_state(&player, rust.state(), &format!("player {run} {i}"));
                }
            }
            steps += 1;
        }
    }
    assert!(deltas > steps / 3 && skips > 0, "{deltas} {skips} {steps}");
    report("Luau RPLY XFORM encoder samples (steps and states)", steps);
}

/// Steps the state cannot apply are refused with the Rust messages.
#[test]
fn invalid_steps_are_refused_as_in_rust() {
    let host = LuauHost::new().unwrap();
    let f: Function = host
        .eval(
            "bad",
            "return function(state, step) local ok, e = pcall(Xform.apply, state, step); return ok, tostring(e) end",
        )
        .unwrap();
    let new_state = host.func("rply_xform", "newState").unwrap();
    let cases = [
        XformStep::Delta {
            pos8: Some([1, 2, 3]),
            pos16: None,
            yaw: None,
            rot: None,
        },
        XformStep::Delta {
            pos8: None,
            pos16: None,
            yaw: Some(3),
            rot: None,
        },
        XformStep::Delta {
            pos8: None,
            pos16: None,
            yaw: None,
            rot: Some([1, 0, 0]),
        },
        XformStep::Full {
            pos: None,
            rot: Some([1, 2, 3]),
            yaw: Some(4),
        },
    ];
    for s in cases {
        let want = XformState::default().apply(&s).unwrap_err().to_string();
        let state: Table = new_state.call(()).unwrap();
        let (ok, msg): (bool, String) = f.call((state, step_table(&host, &s))).unwrap();
        assert!(!ok);
        assert_eq!(msg, want);
    }
    report("Luau RPLY XFORM refusals", cases.len());
}
