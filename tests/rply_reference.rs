//! RPLY v3 against its reference implementation's own files (`flashback-rply/` in the
//! fixtures folder; see docs/formats/rply.md, "The reference implementation's files").
//!
//! Files `A-*` were written by the reference recorder from scripted scenes; beside each,
//! `*.truth.json` is what the scene set per tick and `*.flashback.json` what the reference
//! player reports. Files `B-*` were written by this project and read by the reference player;
//! `C-idle-tail` by the reference recorder, with an idle tail (its last 50 ticks write
//! nothing, so `tick_count` is past the op stream's last marker).
//! Every file is read here, checked with every rule (`verify`), played tick by tick and
//! sought to every tick, and every tick is compared with both: positions, rotations,
//! descriptors, parents, spawn ticks, properties, animations, events, custom payloads,
//! snapshots and the reference's seek results. The two files the reference player cannot
//! read are refused here with the field and the offset.

use glam::{DQuat, DVec3};
use serde_json::Value;
use statepack::formats::rply::{self, Player, PropValue, State};
use statepack::generated::rply_v3 as raw;
use statepack_codecs::quant::angle_between_rad;
use statepack_fixtures::fixture_for_test;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Between the two players: both decode the same quantized codes, one in f64 here and one
/// in Luau numbers with float32 vectors there.
const PLAYERS_POS_STUDS: f64 = 1e-5;
const PLAYERS_ROT_RAD: f64 = 1e-5;

/// The reference's sought proxies are placed through float32 CFrames (models by their
/// pivot): against its own interpolated position.
const PROXY_POS_STUDS: f64 = 1e-3;

/// Against the scene: the reference recorder skips position changes under 1/32 stud and
/// writes deltas in 1/32 stud (within √3/64 when written); yaw changes under 1/64 rad are
/// skipped, yaw deltas are 1/64 rad steps; upright samples drop a tilt of up to 0.573°;
/// rotation deltas are 1/128 rad per axis-angle component, computed by the reference against
/// the unquantized base (2e-4 rad off after a full sample).
const TRUTH_POS_STUDS: f64 = 1.0 / 32.0 + 1e-5;
const TRUTH_ROT_RAD: f64 = 1.0 / 64.0 + statepack_codecs::rply_xform::UPRIGHT_MAX_TILT_RAD;

struct Ref {
    bytes: Vec<u8>,
    fb: Value,
    truth: Option<Value>,
}

fn load(name: &str) -> Option<Ref> {
    let rel = |ext: &str| format!("flashback-rply/{name}.{ext}");
    let bytes = std::fs::read(fixture_for_test(&rel("rply"))?).unwrap();
    let json = |p: std::path::PathBuf| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let fb = json(fixture_for_test(&rel("flashback.json"))?);
    let truth = name
        .starts_with("A-")
        .then(|| fixture_for_test(&rel("truth.json")).map(json))
        .flatten();
    Some(Ref { bytes, fb, truth })
}

fn vec3(v: &Value) -> DVec3 {
    let c = |i: usize| v[i].as_f64().unwrap_or(f64::NAN); // null is NaN (JSON has no NaN)
    DVec3::new(c(0), c(1), c(2))
}

fn quat(v: &Value) -> DQuat {
    let c = |i: usize| v[i].as_f64().unwrap_or(f64::NAN);
    DQuat::from_xyzw(c(0), c(1), c(2), c(3))
}

/// Distance, with NaN equal to NaN in the same component.
fn pos_diff(a: DVec3, b: DVec3) -> f64 {
    let n = |x: f64, y: f64| if x.is_nan() && y.is_nan() { 0.0 } else { x - y };
    DVec3::new(n(a.x, b.x), n(a.y, b.y), n(a.z, b.z)).length()
}

/// The reference player's JSON for a property value: bool, `{"Number": x}`, a plain string
/// for strings and enums, `{"Color3": [r, g, b]}` bytes, `{"Vector3": [x, y, z]}`.
fn prop_json(v: &PropValue) -> Value {
    use serde_json::json;
    match v {
        PropValue::Bool(b) => json!(b),
        PropValue::Number(n) => json!({ "Number": n }),
        PropValue::String(s) | PropValue::Enum(s) => json!(&**s),
        PropValue::Color3(c) => json!({ "Color3": c }),
        PropValue::Vector3(v) => json!({ "Vector3": v.map(f64::from) }),
    }
}

/// Numbers compare within 1e-9 relative (both sides print f64), everything else exactly.
fn json_close(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-9 * x.abs().max(1.0)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_close(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_close(v, w)))
        }
        _ => a == b,
    }
}

/// An empty Lua table prints as `[]`: read it as an empty map.
fn map(v: &Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m.clone(),
        Value::Array(a) if a.is_empty() => serde_json::Map::new(),
        Value::Null => serde_json::Map::new(),
        other => panic!("not a map: {other}"),
    }
}

#[derive(Default, Debug)]
struct Worst {
    players_pos: f64,
    players_rot: f64,
    truth_pos: f64,
    truth_rot: f64,
    compared: usize,
    truth_compared: usize,
}

/// Everything a whole play shows: every tick's state, each tick's new events and customs,
/// and each entity's last snapshot.
struct Played {
    states: Vec<State>,
    events: Vec<(u32, Arc<str>, Arc<str>)>,
    customs: Vec<(u32, Arc<str>, Vec<u8>)>,
    snapshots: BTreeMap<u16, Arc<raw::Snapshot>>,
}

fn play(bytes: &[u8]) -> Played {
    let mut p = Player::open(bytes).unwrap();
    let mut out = Played {
        states: Vec::new(),
        events: Vec::new(),
        customs: Vec::new(),
        snapshots: BTreeMap::new(),
    };
    while p.advance().unwrap() {
        let s = p.state();
        let t = s.tick.unwrap();
        for e in s.recent_events.iter().filter(|e| e.tick == t) {
            out.events.push((t, e.name.clone(), e.payload.clone()));
        }
        for c in s.recent_custom.iter().filter(|c| c.tick == t) {
            out.customs.push((t, c.channel.clone(), c.data.clone()));
        }
        out.states.push(s.clone());
    }
    // The last SNAPSHOT of each entity as the op stream holds it: the reference recorder
    // writes an entity's snapshot when it despawns (or at the end), so a tick's state, taken
    // after the despawn, does not show it.
    for op in rply::RplyV3::decode(bytes).unwrap().ops.ops {
        if let rply::OpBody::OpSnapshot(s) = op.body {
            out.snapshots.insert(s.entity_id, Arc::new(*s.snapshot));
        }
    }
    out
}

/// Joints the reference's snapshot decoder builds: welds and motors always, the two
/// constraint kinds only when both parts carry an Attachment (a direct child) of the
/// recorded name.
fn buildable_joints(s: &raw::Snapshot) -> usize {
    let has_attachment = |part: u16, name: &str| {
        usize::from(part)
            .checked_sub(1)
            .and_then(|i| s.parts.get(i))
            .is_some_and(|p| {
                p.effects.iter().any(|e| {
                    e.class == raw::EffectClass::Attachment
                        && e.parent_index == 0
                        && e.name.value == name
                })
            })
    };
    s.joints
        .iter()
        .filter(|j| match &j.body {
            raw::JointBody::JointCframes(_) => true,
            raw::JointBody::JointAttachments(a) => {
                has_attachment(a.part0_index, &a.attachment0_name.value)
                    && has_attachment(a.part1_index, &a.attachment1_name.value)
            }
        })
        .count()
}

/// Reads a readable file with every check, then compares it with the reference player's
/// report and (for `A-*` files) the scene's truth. Returns the worst differences.
fn check(name: &str) -> Option<Worst> {
    let r = load(name)?;
    let ops = rply::verify(&r.bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(ops > 0, "{name}");
    let played = play(&r.bytes);
    let h = *Player::open(&r.bytes).unwrap().header();
    let fh = &r.fb["header"];
    assert_eq!(fh["tickCount"], h.tick_count, "{name}");
    assert_eq!(fh["tickRate"], h.tick_rate, "{name}");
    assert_eq!(fh["placeVersion"], h.place_version, "{name}");
    assert_eq!(fh["startUnix"].as_f64(), Some(h.start_unix), "{name}");
    assert_eq!(played.states.len() as u32, h.tick_count + 1, "{name}");

    // Seeking equals playing: backwards from the end, and a fresh player per tick.
    let mut back = Player::open(&r.bytes).unwrap();
    for t in (0..played.states.len()).rev() {
        back.seek(t as u32).unwrap();
        assert_eq!(back.state(), &played.states[t], "{name}: seek back to {t}");
        let mut fresh = Player::open(&r.bytes).unwrap();
        fresh.seek(t as u32).unwrap();
        assert_eq!(
            fresh.state(),
            &played.states[t],
            "{name}: fresh seek to {t}"
        );
    }

    let mut w = Worst::default();
    let ticks = r.fb["ticks"].as_object().expect("ticks");
    assert_eq!(ticks.len(), played.states.len(), "{name}: ticks reported");
    for (tk, ents) in ticks {
        let t: usize = tk.parse().unwrap();
        let s = &played.states[t];
        let ents = map(ents);
        let ids: Vec<u16> = s.entities.keys().copied().collect();
        let mut fids: Vec<u16> = ents.keys().map(|k| k.parse().unwrap()).collect();
        fids.sort_unstable();
        assert_eq!(ids, fids, "{name} tick {t}: live entities");
        for (k, fe) in &ents {
            let e = &s.entities[&k.parse::<u16>().unwrap()];
            let at = format!("{name} tick {t} entity {}", e.id);
            assert_eq!(fe["descriptor"].as_str(), Some(&*e.descriptor), "{at}");
            assert_eq!(fe["parent"], e.parent, "{at}");
            assert_eq!(fe["spawnTick"], e.spawn_tick, "{at}");
            match (fe.get("pos"), e.xform.pos) {
                (None, None) => {}
                (Some(fp), Some(p)) => {
                    let d = pos_diff(vec3(fp), p);
                    assert!(d <= PLAYERS_POS_STUDS, "{at}: position {p} vs {fp} ({d})");
                    w.players_pos = w.players_pos.max(d);
                }
                (a, b) => panic!("{at}: position {a:?} vs {b:?}"),
            }
            match (fe.get("quat"), e.xform.shown_rot) {
                (None, None) => {}
                (Some(fq), Some(q)) => {
                    let d = angle_between_rad(quat(fq).normalize(), q);
                    assert!(d <= PLAYERS_ROT_RAD, "{at}: rotation {q} vs {fq} ({d} rad)");
                    w.players_rot = w.players_rot.max(d);
                }
                // The reference shows a position-only entity with the identity rotation.
                (Some(fq), None) => {
                    assert!(e.xform.pos.is_some(), "{at}");
                    assert!(
                        angle_between_rad(quat(fq).normalize(), DQuat::IDENTITY) < 1e-9,
                        "{at}"
                    )
                }
                (None, Some(_)) => panic!("{at}: rotation shown here only"),
            }
            let props: serde_json::Map<String, Value> = e
                .props
                .iter()
                .map(|(k, v)| (k.to_string(), prop_json(v)))
                .collect();
            let fprops = map(&fe["props"]);
            assert!(
                json_close(
                    &Value::Object(props.clone()),
                    &Value::Object(fprops.clone())
                ),
                "{at}: properties\n here {props:?}\n there {fprops:?}"
            );
            let anims: Vec<Value> = e
                .anims
                .iter()
                .map(|(h, a)| {
                    serde_json::json!({"animId": &*a.anim_id, "fade": a.fade_s, "handle": h,
                        "speed": a.speed, "tick": a.started_tick})
                })
                .collect();
            assert!(
                json_close(&Value::Array(anims.clone()), &fe["anims"]),
                "{at}: animations {anims:?} vs {}",
                fe["anims"]
            );
            w.compared += 1;
        }
    }

    // Events and custom payloads, in order.
    let fev = r.fb["events"].as_array().unwrap();
    assert_eq!(fev.len(), played.events.len(), "{name}: events");
    for (f, (t, n, p)) in fev.iter().zip(&played.events) {
        assert_eq!(f["tick"], *t, "{name}: event tick");
        assert_eq!(f["name"].as_str(), Some(&**n), "{name}: event name");
        let fp: Value = serde_json::from_str(f["payload"].as_str().unwrap()).unwrap();
        let ours: Value = serde_json::from_str(p).unwrap();
        // An empty Lua table decodes as `[]` whether it was written `{}` or `[]`.
        let empty = |v: &Value| v == &serde_json::json!([]) || v == &serde_json::json!({});
        assert!(
            fp == ours || (empty(&fp) && empty(&ours)),
            "{name}: payload {p} vs {fp}"
        );
    }
    let fcu = r.fb["customs"].as_array().unwrap();
    assert_eq!(fcu.len(), played.customs.len(), "{name}: customs");
    for (f, (t, c, d)) in fcu.iter().zip(&played.customs) {
        assert_eq!(f["tick"], *t, "{name}: custom tick");
        assert_eq!(f["channel"].as_str(), Some(&**c), "{name}: custom channel");
        let hex: String = d.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            f["hex"].as_str(),
            Some(hex.as_str()),
            "{name}: custom bytes at {t}"
        );
    }

    // Snapshots: what the reference's decoder found in each entity's last one.
    for (k, fs) in map(&r.fb["snapshots"]) {
        let id: u16 = k.parse().unwrap();
        let at = format!("{name} snapshot of entity {id}");
        let s = played
            .snapshots
            .get(&id)
            .unwrap_or_else(|| panic!("{at}: none here"));
        assert_eq!(fs["bytes"], s.encoded_len(), "{at}");
        assert_eq!(fs["isModel"], s.is_model == 1, "{at}");
        // The reference rebuilds a single part (a tool, a debris part) as that part, named
        // after it; a model keeps the snapshot's name.
        let built_name = if s.is_model == 1 {
            &s.name.value
        } else {
            &s.parts[0].name.value
        };
        assert_eq!(fs["name"].as_str(), Some(built_name.as_str()), "{at}");
        assert_eq!(
            fs["source"].as_str(),
            Some(s.source_key.value.as_str()),
            "{at}"
        );
        assert_eq!(
            fs["root"].as_str(),
            Some(s.root_path.value.as_str()),
            "{at}"
        );
        assert_eq!(fs["parts"], s.parts.len(), "{at}");
        // Constraint joints whose attachments the parts lack are read here and dropped
        // there (B-sample-every-op has two).
        assert_eq!(fs["joints"], buildable_joints(s), "{at}");
        let effects: usize = s.parts.iter().map(|p| p.effects.len()).sum();
        let classes: Vec<String> = s
            .parts
            .iter()
            .flat_map(|p| {
                p.effects
                    .iter()
                    .map(|e| format!("{:?}@{}", e.class, e.parent_index))
            })
            .collect();
        if (name, id) == ("B-sample-every-op", 2) {
            // One effect of each of the 11 classes; the reference's report counts 7 of them
            // although its decoder reads every effect's bytes and rebuilds the model
            // (`buildOk`, and the parts and joints after the effects come out right).
            assert_eq!(
                (fs["effects"].as_u64(), effects),
                (Some(7), 11),
                "{at}: {classes:?}"
            );
        } else {
            assert_eq!(fs["effects"], effects, "{at}: {classes:?}");
        }
        let meshes: Vec<&str> = s.mesh_ids.iter().map(|m| m.value.as_str()).collect();
        assert_eq!(fs["meshes"], serde_json::json!(meshes), "{at}");
        let unions: Vec<&str> = s.union_keys.iter().map(|m| m.value.as_str()).collect();
        assert_eq!(fs["unions"], serde_json::json!(unions), "{at}");
        assert_eq!(fs["keysOk"], true, "{at}");
    }

    // The reference's seeks: proxies at the tick (position, rotation, attributes, scale).
    for (tk, fs) in map(&r.fb["seeks"]) {
        let t: u32 = tk.parse().unwrap();
        assert_eq!(fs["ok"], true, "{name}: reference seek to {t}");
        let mut p = Player::open(&r.bytes).unwrap();
        if t > h.tick_count {
            // The reference clamps a seek past the end; here it is an error.
            assert_eq!(
                p.seek(t),
                Err(rply::RplyError::TickOutOfRange {
                    tick: t,
                    tick_count: h.tick_count
                }),
                "{name}"
            );
            continue;
        }
        p.seek(t).unwrap();
        for (k, fe) in map(&fs["entities"]) {
            let id: u16 = k.parse().unwrap();
            let at = format!("{name} seek {t} entity {id}");
            let e = &p.state().entities[&id];
            let fpos = fe.get("pos").map(vec3);
            let held = e.xform.pos;
            // The reference places a sought proxy with its interpolating `cframeAt`, at an
            // integer tick the held sample moved toward the next one (NaN when the next is
            // NaN); the state here is the held sample (the tick's `pos`).
            let lerp = r.fb["ticks"][tk.as_str()][k.as_str()]
                .get("lerpPos")
                .map(vec3);
            match (fpos, lerp, held) {
                (Some(f), Some(l), Some(_)) => {
                    assert!(
                        pos_diff(f, l) <= PROXY_POS_STUDS,
                        "{at}: seek {f} vs lerp {l}"
                    );
                }
                (Some(f), None, Some(pos)) => {
                    assert!(
                        pos_diff(f, pos) <= PROXY_POS_STUDS,
                        "{at}: position {pos} vs {f}"
                    );
                }
                _ => {}
            }
            let attrs: serde_json::Map<String, Value> = e
                .props
                .iter()
                .filter_map(|(k, v)| Some((k.strip_prefix('@')?.to_string(), prop_json(v))))
                .collect();
            let fattrs = map(&fe["attributes"]);
            assert!(
                json_close(
                    &Value::Object(attrs.clone()),
                    &Value::Object(fattrs.clone())
                ),
                "{at}: attributes {attrs:?} vs {fattrs:?}"
            );
            // The reference applies `Scale` to models only (`Model:ScaleTo`).
            let scale = match e.props.get("Scale") {
                Some(PropValue::Number(s)) if fe["class"] == "Model" => *s,
                _ => 1.0,
            };
            assert_eq!(fe["scale"].as_f64(), Some(scale), "{at}: scale");
        }
    }

    // The scene's truth: every entity the scene shows at a tick is live here, within the
    // format's quantization of where the scene put it, except where the file itself holds
    // something else (each case below is a decision in docs/formats/rply.md, counted so that
    // it cannot hide anything else).
    let mut stamped_early = 0;
    let mut nan_kept = 0;
    let mut frozen = 0;
    if let Some(truth) = &r.truth {
        let truth_ticks = map(&truth["ticks"]);
        let in_truth = |t: usize, id: u16| {
            truth_ticks
                .get(&t.to_string())
                .is_some_and(|te| map(&te["entities"]).contains_key(&id.to_string()))
        };
        for (tk, te) in &truth_ticks {
            let t: usize = tk.parse().unwrap();
            let s = &played.states[t];
            for (k, tv) in map(&te["entities"]) {
                let id: u16 = k.parse().unwrap();
                let at = format!("{name} truth tick {t} entity {id}");
                let Some(e) = s.entities.get(&id) else {
                    // Despawns the reference recorder writes from a signal handler land in the
                    // tick before the scene's ("stamped t-1").
                    assert!(
                        played.states[t - 1].entities.contains_key(&id),
                        "{at}: not live here"
                    );
                    stamped_early += 1;
                    continue;
                };
                let pos = e
                    .xform
                    .pos
                    .unwrap_or_else(|| panic!("{at}: no position here"));
                let tp = vec3(&tv["pos"]);
                if tp.is_nan() != pos.is_nan() {
                    // The reference recorder compares with NaN (always false): it writes no
                    // change while the scene is NaN until a keyframe writes the NaN raw, then
                    // never moves the entity again.
                    assert_eq!(name, "A-nan", "{at}: position {pos} vs {tp}");
                    nan_kept += 1;
                    continue;
                }
                let d = pos_diff(tp, pos);
                assert!(d <= TRUTH_POS_STUDS, "{at}: position {pos} vs {tp} ({d})");
                w.truth_pos = w.truth_pos.max(d);
                let tq = quat(&tv["quat"]);
                let q = e.xform.shown_rot.unwrap_or(DQuat::IDENTITY);
                let d = angle_between_rad(tq.normalize(), q);
                assert!(d <= TRUTH_ROT_RAD, "{at}: rotation {q} vs {tq} ({d} rad)");
                w.truth_rot = w.truth_rot.max(d);
                w.truth_compared += 1;
            }
            // Entities live here that the scene does not show: spawned from a signal handler
            // (stamped the tick before), or kept live without parts (A-rootless), frozen.
            for e in s.entities.values() {
                if in_truth(t, e.id) {
                    continue;
                }
                let at = format!(
                    "{name} tick {t} entity {}: live here, not in the scene",
                    e.id
                );
                if e.spawn_tick as usize == t && in_truth(t + 1, e.id) {
                    stamped_early += 1;
                } else {
                    let last = (1..t).rev().find(|&u| in_truth(u, e.id)).expect(&at);
                    assert_eq!(e.xform, played.states[last].entities[&e.id].xform, "{at}");
                    frozen += 1;
                }
            }
        }
    }
    if name == "A-nan" {
        assert_eq!(
            nan_kept, 5,
            "{name}: ticks 3-5 hold (0, 1, 0), ticks 7-8 hold NaN"
        );
    }
    if name == "A-rootless" {
        assert_eq!(frozen, 13, "{name}: entity 1 from tick 8 to 20");
    } else {
        assert_eq!(frozen, 0, "{name}");
    }
    println!("{name}: signal ops a tick early {stamped_early}, frozen without parts {frozen}");
    println!("{name}: {w:?}");
    Some(w)
}

macro_rules! reference_file {
    ($test:ident, $name:literal) => {
        #[test]
        fn $test() {
            check($name);
        }
    };
}

reference_file!(a_full, "A-full");
reference_file!(a_kf1, "A-kf1");
reference_file!(a_rate60, "A-rate60");
reference_file!(a_sparse, "A-sparse");
reference_file!(a_empty, "A-empty");
reference_file!(a_rootless, "A-rootless");
reference_file!(a_nan, "A-nan");
reference_file!(a_hdrcolor, "A-hdrcolor");
reference_file!(b_walk, "B-walk");
reference_file!(b_sample_every_op, "B-sample-every-op");
reference_file!(c_idle_tail, "C-idle-tail");

/// C-idle-tail's last 50 ticks are idle: the reference recorder writes nothing for them, so
/// its op stream's last marker is tick 650 and `tick_count` is 700. Read with every rule
/// and compared tick by tick above; here, that the file does end its stream early and that
/// the ticks of the idle tail show the reference player's held samples (entity 1 last
/// sampled at tick 601, entity 2 at tick 650).
#[test]
fn c_idle_tail_ends_its_op_stream_early() {
    let Some(r) = load("C-idle-tail") else { return };
    let file = rply::RplyV3::decode(&r.bytes).unwrap();
    let mut last_marker = 0;
    for op in &file.ops.ops {
        match &op.body {
            rply::OpBody::OpTick(t) => last_marker = t.tick,
            rply::OpBody::OpTickNext(_) => last_marker += 1,
            _ => {}
        }
    }
    assert_eq!((last_marker, file.head.tick_count), (650, 700));
    let mut p = Player::open(&r.bytes).unwrap();
    for t in [650, 651, 699, 700] {
        p.seek(t).unwrap();
        for (id, sampled) in [(1u16, 601), (2, 650)] {
            let fe = &r.fb["ticks"][t.to_string()][id.to_string()];
            assert_eq!(fe["sampleTick"], sampled, "tick {t} entity {id}");
            let pos = p.state().entities[&id].xform.pos.unwrap();
            assert!(
                pos_diff(vec3(&fe["pos"]), pos) <= PLAYERS_POS_STUDS,
                "tick {t} entity {id}: {pos}"
            );
        }
    }
}

/// The two files the reference player cannot read (it reports an unknown op where its
/// stream goes out of step, a writer having wrapped a count or a length past 65,535):
/// refused here at open, naming the first field that gives the wrapping away and its
/// offset. In both the string table is longer than a wrapped count or string length says
/// (A-bigpayload's payload is a string of the table), so the keyframe index
/// is read from string bytes and its first tick is past `tick_count` (the rule of
/// `schema/rply_v3.ksy`).
#[test]
fn files_the_reference_cannot_read_are_refused() {
    for (name, expect) in [
        ("A-strings", "head.keyframes[0].tick (byte offset 53615)"),
        ("A-bigpayload", "head.keyframes[0].tick (byte offset 4525)"),
    ] {
        let Some(r) = load(name) else { return };
        assert!(
            r.fb["error"].as_str().unwrap().contains("unknown op"),
            "{name}"
        );
        let e = Player::open(&r.bytes).unwrap_err().to_string();
        assert!(e.contains(expect), "{name}: {e}");
        assert!(rply::verify(&r.bytes).is_err(), "{name}");
    }
}
