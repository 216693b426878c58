//! The `statepack` commands on RPLY v3 files with an idle tail (a `tick_count` past the op
//! stream's last marker, as the reference recorder leaves one): `verify`, `sample`,
//! `decode` (and `encode` of what it prints) and `inspect` accept them, on the reference's
//! own recording `flashback-rply/C-idle-tail` (compared with its player's reading) and on a
//! recording whose idle tail is 2^32 - 2 ticks long.

use glam::{DQuat, DVec3};
use serde_json::Value;
use statepack::formats::rply::{Recorder, RecorderOptions};
use statepack_fixtures::fixture_for_test;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Cargo's scratch folder for this test, inside the target dir (a rerun overwrites it).
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rply-cli");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(args)
        .output()
        .expect("run the statepack binary")
}

/// Runs and requires success, returning stdout.
fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "statepack {args:?} failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Per entity, its id and position in studs (`None` before its first).
type Positions = Vec<(u64, Option<[f64; 3]>)>;

/// `sample FILE --at TICK`'s JSON and its entities' [`Positions`].
fn sample_positions(file: &str, tick: u32) -> (Value, Positions) {
    let json: Value = serde_json::from_str(&ok(&["sample", file, "--at", &tick.to_string()]))
        .expect("sample prints JSON");
    let positions = json["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let p = &e["position_studs"];
            let pos = (!p.is_null()).then(|| [0, 1, 2].map(|i| p[i].as_f64().unwrap()));
            (e["id"].as_u64().unwrap(), pos)
        })
        .collect();
    (json, positions)
}

/// `decode` then `encode` of what it printed gives the file back, byte for byte.
fn decode_encode_identical(file: &str, bytes: &[u8], name: &str) -> Value {
    let text = ok(&["decode", file]);
    let json_path = scratch(&format!("{name}.json"));
    std::fs::write(&json_path, &text).unwrap();
    let back = scratch(&format!("{name}.back.rply"));
    ok(&[
        "encode",
        "--format",
        "rply",
        json_path.to_str().unwrap(),
        "-o",
        back.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(&back).unwrap(),
        bytes,
        "{name}: decode → encode"
    );
    serde_json::from_str(&text).unwrap()
}

/// The reference recorder's C-idle-tail (op stream ends at tick 650, `tick_count` 700):
/// every command accepts it, and `sample` shows at each tick what the reference player
/// shows (its held samples, within 1e-5 studs).
#[test]
fn reference_idle_tail_in_every_command() {
    let Some(path) = fixture_for_test("flashback-rply/C-idle-tail.rply") else {
        return;
    };
    let Some(fb_path) = fixture_for_test("flashback-rply/C-idle-tail.flashback.json") else {
        return;
    };
    let fb: Value = serde_json::from_str(&std::fs::read_to_string(fb_path).unwrap()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let file = path.to_str().unwrap();
    let out = ok(&["verify", file]);
    assert!(out.contains("valid RPLY v3: 700 ticks"), "{out}");
    for tick in [0, 5, 300, 410, 650, 651, 690, 700] {
        let (json, positions) = sample_positions(file, tick);
        assert_eq!(json["tick"], tick);
        let there = &fb["ticks"][tick.to_string()];
        let ids: Vec<u64> = positions.iter().map(|(id, _)| *id).collect();
        let mut fids: Vec<u64> = there
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.parse().unwrap())
            .collect();
        fids.sort_unstable();
        assert_eq!(ids, fids, "tick {tick}: entities");
        for (id, p) in positions {
            let fp = &there[id.to_string()]["pos"];
            assert_eq!(p.is_some(), !fp.is_null(), "tick {tick} entity {id}");
            for (i, c) in p.iter().flatten().enumerate() {
                let f = fp[i].as_f64().unwrap();
                assert!(
                    (c - f).abs() <= 1e-5,
                    "tick {tick} entity {id}: {p:?} vs {fp}"
                );
            }
        }
    }
    assert!(!run(&["sample", file, "--at", "701"]).status.success());
    let json = decode_encode_identical(file, &bytes, "C-idle-tail");
    assert_eq!(json["head"]["tick_count"], 700);
    let out = ok(&["inspect", file]);
    assert!(out.contains("tick_count = 700"), "{out}");
}

/// A recording whose idle tail is 2^32 - 2 ticks long (tick 1 is its last marker,
/// `tick_count` 4,294,967,295): every command accepts it; `sample` at the last tick shows
/// tick 1's state. (What this costs is counted in `rply_rules::idle_tail_costs_nothing_per_tick`.)
#[test]
fn longest_idle_tail_in_every_command() {
    let mut rec = Recorder::new(RecorderOptions::default());
    let id = rec.spawn("part:Block", None).unwrap();
    rec.begin_tick().unwrap();
    rec.transform(id, DVec3::new(4.0, 5.0, 6.0), DQuat::IDENTITY)
        .unwrap();
    let mut bytes = rec.finish().unwrap();
    bytes[18..22].copy_from_slice(&u32::MAX.to_le_bytes());
    let path = scratch("tail-max.rply");
    std::fs::write(&path, &bytes).unwrap();
    let file = path.to_str().unwrap();
    let out = ok(&["verify", file]);
    assert!(out.contains("valid RPLY v3: 4294967295 ticks"), "{out}");
    for tick in [1, 2, u32::MAX - 1, u32::MAX] {
        let (json, positions) = sample_positions(file, tick);
        assert_eq!(json["tick"], tick);
        assert_eq!(
            positions,
            vec![(u64::from(id), Some([4.0, 5.0, 6.0]))],
            "tick {tick}"
        );
    }
    let json = decode_encode_identical(file, &bytes, "tail-max");
    assert_eq!(json["head"]["tick_count"], u32::MAX);
    let out = ok(&["inspect", file]);
    assert!(out.contains("tick_count = 4294967295"), "{out}");
}
