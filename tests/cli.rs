//! The `statepack` command-line tool, run as a process: demo, import, inspect, decode,
//! encode, verify and sample on SNAP v1.3 files, and its refusal of other versions.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BVH: &str = "motion/cmu-131-01-walk.bvh";

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!(
            "statepack-cli-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the tool with `args` in `dir`.
fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run the statepack binary")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Runs and requires success, returning stdout.
fn ok(dir: &Path, args: &[&str]) -> String {
    let o = run(dir, args);
    assert!(
        o.status.success(),
        "statepack {args:?} failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// Checks the demo's table: a header row, one SNAP v1.3 row and one CBTK v1 row with 9 cells.
fn assert_demo_table(out: &str) {
    assert!(
        out.contains("| format | bytes | bytes/frame |"),
        "no table header:\n{out}"
    );
    let row = out
        .lines()
        .find(|l| l.starts_with("| SNAP v1.3 |"))
        .unwrap_or_else(|| panic!("no SNAP row:\n{out}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    assert_eq!(cells.len(), 9, "{row}");
    let bytes: usize = cells[1].parse().unwrap();
    assert!(bytes > 9, "{row}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| CBTK v1 "))
        .unwrap_or_else(|| panic!("no CBTK row:\n{out}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    assert_eq!(cells.len(), 9, "{row}");
    assert!(cells[1].parse::<usize>().unwrap() > 96, "{row}");
    assert!(out.contains("verified:"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| RPLY v3"))
        .unwrap_or_else(|| panic!("no RPLY row:\n{out}"));
    let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
    assert_eq!(cells.len(), 9, "{row}");
    assert!(cells[1].parse::<usize>().unwrap() > 30, "{row}");
}

#[test]
fn demo_without_arguments_prints_the_table() {
    let dir = TempDir::new("demo");
    let out = ok(&dir.0, &["demo", "--out", "walk.snap"]);
    assert_demo_table(&out);
    assert!(out.contains("30 joints, 180 frames"), "{out}");
    // The size in the table is the size of the file it wrote.
    let written = std::fs::read(dir.path("walk.snap")).unwrap();
    assert!(
        out.contains(&format!("| SNAP v1.3 | {} |", written.len())),
        "{out}"
    );
    let out = ok(&dir.0, &["demo"]);
    assert_demo_table(&out);
}

#[test]
fn demo_on_the_cmu_walk() {
    let Some(bvh) = statepack_fixtures::fixture_for_test(BVH) else {
        return;
    };
    let dir = TempDir::new("demo-bvh");
    let out = ok(&dir.0, &["demo", "--input", bvh.to_str().unwrap()]);
    assert_demo_table(&out);
    assert!(out.contains("31 joints"), "{out}");
}

#[test]
fn import_inspect_decode_encode_verify_sample() {
    let Some(bvh) = statepack_fixtures::fixture_for_test(BVH) else {
        return;
    };
    let bvh = bvh.to_str().unwrap();
    let dir = TempDir::new("pipeline");

    let out = ok(&dir.0, &["import", "--format", "snap", bvh, "-o", "x.snap"]);
    assert!(out.contains("31 recordings"), "{out}");
    let x = std::fs::read(dir.path("x.snap")).unwrap();
    assert_eq!(&x[..8], b"SNAPV1.3");
    assert_eq!(x[8], 31);
    assert!(out.contains(&format!("({} bytes)", x.len())), "{out}");
    // The file is what the library writes for the same input.
    let clip = statepack_codecs::motion::load_motion_file(Path::new(bvh)).unwrap();
    let lib = statepack::formats::snap::import_clip(
        &clip,
        statepack::formats::snap::DEFAULT_STUDS_PER_METRE,
    )
    .unwrap()
    .finish()
    .unwrap();
    assert_eq!(x, lib);

    // inspect: a tree with byte ranges.
    let out = ok(&dir.0, &["inspect", "x.snap"]);
    assert!(
        out.contains(&format!("({} bytes, SNAP v1.3)", x.len())),
        "{out}"
    );
    let line = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().any(|w| w == name))
            .unwrap_or_else(|| panic!("no `{name}` line:\n{out}"))
            .to_owned()
    };
    let version = line("version");
    assert!(version.trim_start().starts_with("0..8 "), "{version}");
    let count = line("num_recordings");
    assert!(count.trim_start().starts_with("8..9 "), "{count}");
    assert!(count.ends_with("= 31"), "{count}");
    let recs = line("recordings");
    assert!(
        recs.trim_start().starts_with(&format!("9..{} ", x.len())),
        "{recs}"
    );
    let name_len = line("len_map_name");
    assert!(name_len.trim_start().starts_with("9..10 "), "{name_len}");
    assert!(out.contains("... 27 more"), "{out}");

    // decode > x.json, then encode gives the same bytes.
    let json = ok(&dir.0, &["decode", "x.snap"]);
    std::fs::write(dir.path("x.json"), &json).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["recordings"].as_array().unwrap().len(), 31);
    assert_eq!(v["recordings"][0]["frames"][0]["kind"], "absolute");
    ok(
        &dir.0,
        &["encode", "--format", "snap", "x.json", "-o", "y.snap"],
    );
    let y = std::fs::read(dir.path("y.snap")).unwrap();
    assert!(x == y, "y.snap differs from x.snap");

    // verify against the source motion.
    let out = ok(&dir.0, &["verify", "x.snap", "--against", bvh]);
    assert!(out.contains("worst:"), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| !l.starts_with("recording") && !l.starts_with("worst"))
            .count(),
        31,
        "{out}"
    );

    // sample at 1000 ms: one state per recording.
    let out = ok(&dir.0, &["sample", "x.snap", "--at", "1000"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let states = v.as_array().unwrap();
    assert_eq!(states.len(), 31);
    let names: Vec<&str> = clip
        .skeleton
        .bones()
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    for (s, name) in states.iter().zip(&names) {
        assert_eq!(s["recording"], *name);
        assert_eq!(s["at_ms"], 1000.0);
        let p = s["pos_studs"].as_array().unwrap();
        assert_eq!(p.len(), 3);
        assert!(p.iter().all(|c| c.as_f64().unwrap().is_finite()));
        let q: Vec<f64> = s["rot_xyzw"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_f64().unwrap())
            .collect();
        assert_eq!(q.len(), 4);
        let len = q.iter().map(|c| c * c).sum::<f64>().sqrt();
        assert!((len - 1.0).abs() < 1e-5, "{q:?}");
    }
    // The sampled state matches the library's reader.
    let decoded = statepack::formats::snap::read(&x).unwrap();
    let (p, _) = decoded[0].sample_at(1000.0).unwrap();
    let got: Vec<f32> = states[0]["pos_studs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(got, [p.x, p.y, p.z]);
}

#[test]
fn other_versions_are_refused() {
    let dir = TempDir::new("version");
    ok(&dir.0, &["demo", "--out", "good.snap"]);
    let mut b = std::fs::read(dir.path("good.snap")).unwrap();
    b[..8].copy_from_slice(b"SNAPV1.2");
    std::fs::write(dir.path("old.snap"), &b).unwrap();
    for cmd in ["inspect", "decode", "sample"] {
        let mut args = vec![cmd, "old.snap"];
        if cmd == "sample" {
            args.extend(["--at", "0"]);
        }
        let o = run(&dir.0, &args);
        assert!(!o.status.success(), "{cmd} accepted SNAPV1.2");
        let err = stderr(&o);
        assert!(err.contains("SNAPV1.2"), "{cmd}: {err}");
        assert!(err.contains("version"), "{cmd}: {err}");
    }
    // Damage after the header: inspect prints what it could read, then fails naming the field.
    let mut b = std::fs::read(dir.path("good.snap")).unwrap();
    b.truncate(b.len() - 1);
    std::fs::write(dir.path("short.snap"), &b).unwrap();
    let o = run(&dir.0, &["inspect", "short.snap"]);
    assert!(!o.status.success());
    assert!(stdout(&o).contains("num_recordings"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(err.contains("byte offset"), "{err}");
    assert!(err.contains("recordings[29].frames[179]"), "{err}");
    // Cut inside the header: still recognised, and the error says where the input ends.
    std::fs::write(dir.path("cut.snap"), b"SNA").unwrap();
    let o = run(&dir.0, &["inspect", "cut.snap"]);
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("version (byte offset 0)"), "{err}");
    assert!(err.contains("input ends early"), "{err}");
    // Not a SNAP file at all.
    std::fs::write(dir.path("junk.bin"), b"hello world").unwrap();
    let o = run(&dir.0, &["inspect", "junk.bin"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("unknown format"), "{}", stderr(&o));
}

/// `encode` documents that it writes the file `decode` printed, byte for byte. A raw file
/// whose absolute frame holds a non-finite X is accepted by `decode` (the raw layer stores
/// any f32), so its JSON must encode back to the same bytes, or `decode` must refuse it.
#[test]
fn decode_output_encodes_back_for_non_finite_floats() {
    let dir = TempDir::new("nonfinite");
    for (name, x) in [("nan", f32::NAN), ("inf", f32::INFINITY)] {
        let mut b = b"SNAPV1.3".to_vec();
        b.push(1); // one recording
        b.push(0); // empty name
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.push(0b100);
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&x.to_le_bytes());
        b.extend_from_slice(&0f32.to_le_bytes());
        b.extend_from_slice(&(3f32.to_bits() | 3).to_le_bytes());
        b.extend_from_slice(&[0; 6]);
        let file = format!("{name}.snap");
        std::fs::write(dir.path(&file), &b).unwrap();
        let o = run(&dir.0, &["decode", &file]);
        if !o.status.success() {
            // Refusing is acceptable, with the field named.
            assert!(stderr(&o).contains("cframe"), "{}", stderr(&o));
            continue;
        }
        let json = format!("{name}.json");
        std::fs::write(dir.path(&json), &o.stdout).unwrap();
        let out = format!("{name}.2.snap");
        let o = run(&dir.0, &["encode", "--format", "snap", &json, "-o", &out]);
        assert!(
            o.status.success(),
            "decode printed JSON that encode refuses ({name}): {}",
            stderr(&o)
        );
        assert!(
            std::fs::read(dir.path(&out)).unwrap() == b,
            "{name}: bytes differ"
        );
    }
}

/// `verify` fails (exit code) when any frame is outside its bound, e.g. when the file was
/// imported at another scale than the one `verify` is given.
#[test]
fn verify_fails_outside_the_bounds() {
    let Some(bvh) = statepack_fixtures::fixture_for_test(BVH) else {
        return;
    };
    let bvh = bvh.to_str().unwrap();
    let dir = TempDir::new("verify-scale");
    ok(
        &dir.0,
        &[
            "import",
            "--format",
            "snap",
            bvh,
            "-o",
            "x.snap",
            "--studs-per-metre",
            "10",
        ],
    );
    let o = run(&dir.0, &["verify", "x.snap", "--against", bvh]);
    assert!(
        !o.status.success(),
        "verify accepted a file at another scale"
    );
    assert!(stdout(&o).contains("over the bound"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("outside the documented bounds")
            && stderr(&o).contains("at 3.571428571428571 studs per metre (verify needs the --studs-per-metre and --unit-m that import was given)"),
        "{}",
        stderr(&o)
    );
    ok(
        &dir.0,
        &[
            "verify",
            "x.snap",
            "--against",
            bvh,
            "--studs-per-metre",
            "10",
        ],
    );
}

/// `encode` refuses raw JSON that breaks a rule the layout cannot state (here: a first frame
/// that is a delta), naming the field.
#[test]
fn encode_refuses_a_delta_first_frame() {
    let dir = TempDir::new("encode-rules");
    let json = r#"{"recordings":[{"map_name":"a","frames":[{"kind":"delta_none","dt_ms":0,"cframe":null,"pos_delta":null,"rot_delta":null}]}]}"#;
    std::fs::write(dir.path("bad.json"), json).unwrap();
    let o = run(
        &dir.0,
        &["encode", "--format", "snap", "bad.json", "-o", "bad.snap"],
    );
    assert!(!o.status.success());
    let err = stderr(&o);
    assert!(err.contains("recordings[0].frames[0].kind"), "{err}");
    assert!(
        !dir.path("bad.snap").exists(),
        "an invalid file was written"
    );
}

/// RPLY v3 through the CLI: import, inspect, decode/encode byte-identical, verify, sample.
#[test]
fn rply_import_inspect_decode_encode_verify_sample() {
    let Some(bvh) = statepack_fixtures::fixture_for_test(BVH) else {
        return;
    };
    let bvh = bvh.to_str().unwrap();
    let dir = TempDir::new("rply");
    let out = ok(&dir.0, &["import", "--format", "rply", bvh, "-o", "x.rply"]);
    assert!(out.contains("1 entity, 124 ticks at 15 Hz"), "{out}");
    let x = std::fs::read(dir.path("x.rply")).unwrap();
    assert_eq!(&x[..5], b"RPLY\x03");
    let out = ok(&dir.0, &["inspect", "x.rply"]);
    assert!(
        out.contains("RPLY v3") && out.contains("opcode = snapshot (14)"),
        "{out}"
    );
    let json = ok(&dir.0, &["decode", "x.rply"]);
    std::fs::write(dir.path("x.json"), &json).unwrap();
    ok(
        &dir.0,
        &["encode", "--format", "rply", "x.json", "-o", "y.rply"],
    );
    assert!(
        x == std::fs::read(dir.path("y.rply")).unwrap(),
        "y.rply differs from x.rply"
    );
    let out = ok(&dir.0, &["verify", "x.rply"]);
    assert!(
        out.contains("valid RPLY v3: 124 ticks") && out.contains("raw round trip identical"),
        "{out}"
    );
    let out = ok(&dir.0, &["sample", "x.rply", "--at", "30"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tick"], 30);
    assert_eq!(v["entities"][0]["descriptor"], "char:1000");
    assert_eq!(v["entities"][0]["snapshot"]["parts"], 31);
    assert!(v["entities"][0]["position_studs"][0].is_number());
    // Refusals: a fractional tick, a tick past the end, a damaged file.
    assert!(!run(&dir.0, &["sample", "x.rply", "--at", "1.5"])
        .status
        .success());
    let o = run(&dir.0, &["sample", "x.rply", "--at", "999"]);
    assert!(
        stderr(&o).contains("--at 999 is outside the replay, whose ticks run from 0 to 124"),
        "{}",
        stderr(&o)
    );
    let mut bad = x.clone();
    bad[4] = 2;
    std::fs::write(dir.path("bad.rply"), &bad).unwrap();
    let o = run(&dir.0, &["verify", "bad.rply"]);
    assert!(
        !o.status.success()
            && stderr(&o).contains("head.version (byte offset 4): value 2 is not valid"),
        "{}",
        stderr(&o)
    );
    // --against: every tick of the walker against the motion it was imported from.
    let out = ok(&dir.0, &["verify", "x.rply", "--against", bvh]);
    assert!(out.contains("against the motion"), "{out}");
}

/// CBTK: import a small crowd from the CMU walk, then inspect, decode/encode, sample, verify.
#[test]
fn cbtrack_import_sample_verify() {
    let Some(bvh) = statepack_fixtures::fixture_for_test(BVH) else {
        return;
    };
    let bvh = bvh.to_str().unwrap();
    let dir = TempDir::new("cbtrack");
    let args = ["--crowd", "2", "--frames", "120"];
    let mut import = vec!["import", "--format", "cbtrack", bvh, "-o", "c.cbtrack"];
    import.extend(args);
    let out = ok(&dir.0, &import);
    assert!(out.contains("| raw / track |"), "{out}");
    let x = std::fs::read(dir.path("c.cbtrack")).unwrap();
    assert_eq!(&x[..4], b"CBTK");
    assert!(!dir.path("c.cbtrack.part").exists());

    let out = ok(&dir.0, &["inspect", "c.cbtrack"]);
    assert!(out.contains("CBTK v1"), "{out}");
    // The raw tree reads every chunk down to its columns' values, every list cut at 4, and
    // the content view shows the first window's columns, units and keys.
    for name in [
        "head",
        "info",
        "directory",
        "windows",
        "main",
        "terrain",
        "u2_values",
    ] {
        assert!(
            out.lines().any(|l| l.ends_with(&format!(" {name}"))),
            "no line for {name:?} in\n{out}"
        );
    }
    assert!(out.contains("[0] = "), "values are shown\n{out}");
    for want in [
        "content: chunks inflated",
        "    [0] frames 0..=119, main chunk: block ",
        "        [0] id 1 units.unit_id: type 2 at ",
        "        [0] unit_id 0 serial 0 def 0 team 0 flags 0 frames 0..=119: ",
        "            [0] frame 0 pos (400, 45.25, 400) rot dropped 3 codes ",
        "      ... 36 more",
    ] {
        assert!(out.contains(want), "missing {want:?} in\n{out}");
    }
    assert!(out.lines().count() < 400, "{} lines", out.lines().count());
    assert!(out.len() < 32_000, "{} bytes", out.len());
    // --max-items 0 shows everything: no list or byte run is cut.
    let all = ok(&dir.0, &["inspect", "c.cbtrack", "--max-items", "0"]);
    assert!(!all.contains(" more"), "a cut list with --max-items 0");
    assert!(all.contains("      [39] feature_id 39 "), "every feature");
    assert!(all.lines().count() > out.lines().count() * 3);
    let json = ok(&dir.0, &["decode", "c.cbtrack"]);
    // Byte fields are hex strings (one line each); the chunks are there as columns of values.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["head"]["game_id"], "00000000000000000000000000000000");
    let units = &v["windows"][0]["main"]["directory"]["columns"][0];
    assert_eq!(units["id"], 1);
    assert_eq!(
        units["u2_values"],
        serde_json::json!([0, 1]),
        "the two unit ids"
    );
    assert!(v["__beyond"].as_str().is_some_and(|h| h.len() % 2 == 0));
    std::fs::write(dir.path("c.json"), &json).unwrap();
    ok(
        &dir.0,
        &["encode", "--format", "cbtrack", "c.json", "-o", "d.cbtrack"],
    );
    assert!(std::fs::read(dir.path("d.cbtrack")).unwrap() == x);

    let out = ok(&dir.0, &["sample", "c.cbtrack", "--at", "60.5"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["frame"], 60.5);
    assert_eq!(v["units"].as_array().unwrap().len(), 2);
    assert!(v["units"][0]["pieces"].as_array().unwrap().len() > 1);

    let mut verify = vec!["verify", "c.cbtrack", "--against", bvh];
    verify.extend(args);
    let out = ok(&dir.0, &verify);
    assert!(out.contains("verified:"), "{out}");
    let worst: f64 = out
        .lines()
        .find(|l| l.starts_with("furthest unit sample"))
        .and_then(|l| l.split(": ").nth(1))
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(worst <= 0.5, "{out}");
    // Another scale than import's fails, naming the worst figure and the options to match.
    let mut wrong = verify.clone();
    wrong.extend(["--elmos-per-metre", "20"]);
    let o = run(&dir.0, &wrong);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("elmo from the track, over the tolerance of 0.5 elmo")
            && e.contains("--elmos-per-metre")
            && e.contains("--unit-m"),
        "{e}"
    );
    // a frame outside the track is an error
    let o = run(&dir.0, &["sample", "c.cbtrack", "--at", "500"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("--at 500 is outside the track, whose frames run from 0 to 119"),
        "{}",
        stderr(&o)
    );
}

/// World snapshot: `wsnap write` makes a snapshot, `inspect` shows its bit fields with bit
/// ranges (and a compressed body decompressed), `decode`/`encode` give back the same bytes,
/// `wsnap sim` prints the table, `import` refuses the format.
#[test]
fn world_snapshot_write_inspect_decode_encode_and_sim() {
    let d = TempDir::new("wsnap");
    let dir = &d.0;
    for (file, zstd) in [("w.wsnap", false), ("z.wsnap", true)] {
        let mut args = vec!["wsnap", "write", "-o", file, "--clients", "4"];
        if zstd {
            args.push("--zstd");
        }
        ok(dir, &args);
        let tree = ok(dir, &["inspect", file]);
        assert!(tree.contains("MsgWorldSnapshot"), "{tree}");
        if zstd {
            assert!(
                tree.contains("flags = 1") && tree.contains("decompressed body"),
                "{tree}"
            );
        }
        // The first record's first bit field: 24 + 24 (one origin) + 2 varint bytes = byte 50.
        // A bit field shows the byte it lies in, its size in bits and its bit range.
        let full = tree.lines().find(|l| l.contains(" full = false")).unwrap();
        assert!(
            full.trim_start().starts_with("50..51")
                && full.contains("1 b ")
                && full.ends_with("full = false  (bits 400..401)"),
            "{full}"
        );
        let json = ok(dir, &["decode", file]);
        std::fs::write(d.path("w.json"), json).unwrap();
        ok(
            dir,
            &["encode", "--format", "wsnap", "w.json", "-o", "again.wsnap"],
        );
        assert_eq!(
            std::fs::read(d.path(file)).unwrap(),
            std::fs::read(d.path("again.wsnap")).unwrap()
        );
    }
    let table = ok(
        dir,
        &[
            "wsnap",
            "sim",
            "--clients",
            "4",
            "--hz",
            "10",
            "--seconds",
            "0.5",
        ],
    );
    assert!(
        table.contains("old fixed records (88 / 64 B)") && table.contains("worst position error"),
        "{table}"
    );
    let o = run(
        dir,
        &["import", "--format", "wsnap", "x.bvh", "-o", "x.wsnap"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("invalid value 'wsnap' for '--format <FORMAT>'"),
        "{}",
        stderr(&o)
    );
}

/// `clip compress`, `clip study`, `clip sweep --plot` and the registry commands on both
/// animation formats.
#[test]
fn clip_commands() {
    let Some(walk) = statepack_fixtures::fixture_for_test("study/study-walk.json") else {
        return;
    };
    let walk = walk.to_str().expect("a UTF-8 path").to_owned();
    let dir = TempDir::new("clip");
    let d = &dir.0;
    let out = ok(
        d,
        &[
            "clip",
            "compress",
            &walk,
            "--tolerance-mm",
            "2",
            "-o",
            "w.clip",
        ],
    );
    assert!(out.contains("worst error decoded from the file"), "{out}");
    let json = ok(d, &["decode", "w.clip"]);
    std::fs::write(dir.path("w.json"), json).unwrap();
    ok(
        d,
        &["encode", "--format", "anim-clip", "w.json", "-o", "w2.clip"],
    );
    assert_eq!(
        std::fs::read(dir.path("w.clip")).unwrap(),
        std::fs::read(dir.path("w2.clip")).unwrap()
    );
    let tree = ok(d, &["inspect", "w.clip"]);
    assert!(tree.contains("statepack animation clip v2"), "{tree}");
    // The content view decodes the tracks, bit stream included: the root bone's rotation
    // keys with their frames and values, bounded by --max-items (4).
    assert!(
        tree.contains("content: the clip as the decoder reads it"),
        "{tree}"
    );
    let rot = tree
        .lines()
        .find(|l| l.trim_start().starts_with("rotation: ") && l.contains(" keys, bits "))
        .unwrap_or_else(|| panic!("no animated rotation in\n{tree}"));
    assert!(
        rot.contains(": frame 0 [") && rot.contains(" more"),
        "{rot}"
    );
    // The study's pipeline misses 1 mm on the study's own walk (7.2 mm from the file): the
    // command says so and exits non-zero; the file is kept for inspection.
    let o = run(d, &["clip", "study-compress", &walk, "-o", "w.strk"]);
    assert!(stdout(&o).contains("6688 bytes"), "{}", stdout(&o));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("missed the tolerance: worst joint error decoded from w.strk is 7.20")
            && stderr(&o).contains("over 1 mm"),
        "{}",
        stderr(&o)
    );
    assert!(ok(d, &["inspect", "w.strk"]).contains("quantized_keys"));
    // (It succeeds where the joints stay within the tolerance: see
    // `motion_units_on_every_motion_command`.) The help says which inputs it misses.
    let help = ok(d, &["clip", "study-compress", "--help"]);
    assert!(
        help.contains("455.58 mm") && help.contains("exits non-zero"),
        "{help}"
    );
    let out = ok(d, &["clip", "study"]);
    assert!(out.contains("177/180 scalar channels constant"), "{out}");
    assert!(out.contains("24068"), "{out}");
    let out = ok(
        d,
        &["clip", "sweep", &walk, "--every", "3", "--plot", "s.png"],
    );
    assert!(out.contains("cubic"), "{out}");
    let png = std::fs::read(dir.path("s.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
    // The first chunk is IHDR (13 bytes): width and height big-endian, then bit depth 8 and
    // colour type 2 (RGB).
    assert_eq!(&png[8..16], b"\0\0\0\x0dIHDR");
    let be = |o: usize| u32::from_be_bytes(png[o..o + 4].try_into().unwrap());
    assert_eq!((be(16), be(20)), (900, 560));
    assert_eq!(&png[24..26], &[8, 2]);
    let o = run(d, &["clip", "sweep", &walk, "--plot", "s.svg"]);
    assert!(
        !o.status.success() && stderr(&o).contains("ending in .png"),
        "{}",
        stderr(&o)
    );
    let o = run(d, &["import", "--format", "anim-clip", &walk, "-o", "x"]);
    assert!(
        !o.status.success() && stderr(&o).contains("[possible values: snap, rply, cbtrack]"),
        "{}",
        stderr(&o)
    );
}

/// A standing figure of 10 joints, 170 file units tall (a chain along +Y from the hips at 90
/// units down to the feet and up to the head), 6 frames at 30 fps with a small sway: a
/// human-sized BVH when its unit is the centimetre.
fn figure_bvh(hips_height: f64) -> String {
    let mut s = String::from("HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n");
    s.push_str("  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n");
    // Legs: down 90 units in three joints; spine and head: up 80 units in five.
    let down = ["LeftUpLeg", "LeftLeg", "LeftFoot"];
    let up = ["Spine", "Spine1", "Neck", "Head", "HeadTop"];
    let mut close = 0;
    for (i, name) in down.iter().enumerate() {
        let dy = if i == 0 { 0.0 } else { -45.0 };
        s.push_str(&format!(
            "JOINT {name}\n{{\n  OFFSET 10 {dy} 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        ));
        close += 1;
    }
    s.push_str("End Site\n{\n  OFFSET 0 0 0\n}\n");
    s.push_str(&"}\n".repeat(close));
    close = 0;
    for name in up {
        s.push_str(&format!(
            "JOINT {name}\n{{\n  OFFSET 0 16 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n"
        ));
        close += 1;
    }
    s.push_str("End Site\n{\n  OFFSET 0 0 0\n}\n");
    s.push_str(&"}\n".repeat(close));
    s.push_str("}\nMOTION\nFrames: 6\nFrame Time: 0.0333333\n");
    for f in 0..6 {
        let a = f as f64 * 2.0;
        let mut row = vec![
            format!("{}", f as f64),
            format!("{hips_height}"),
            "0".into(),
        ];
        row.extend(["0".into(), "0".into(), format!("{a}")]);
        for j in 0..8 {
            row.extend([
                format!("{}", a * 0.5),
                format!("{}", j as f64 * 0.3),
                "0".into(),
            ]);
        }
        s.push_str(&row.join(" "));
        s.push('\n');
    }
    s
}

/// Writes the centimetre figure as `cm.bvh` into `dir`.
fn write_cm_figure(dir: &TempDir) {
    std::fs::write(dir.path("cm.bvh"), figure_bvh(90.0)).unwrap();
}

/// Clap's exit status for an argument error.
const ARG_ERROR: i32 = 2;

#[track_caller]
fn assert_arg_error(dir: &Path, args: &[&str], needle: &str) {
    let o = run(dir, args);
    assert_eq!(
        o.status.code(),
        Some(ARG_ERROR),
        "statepack {args:?}: {:?}\n{}",
        o.status,
        stderr(&o)
    );
    assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
}

/// Every command that reads motion takes `--unit-m`, refuses a zero, negative or NaN unit as
/// an argument error, and warns with the computed height and the option to use when the
/// figure comes out outside 0.3-3 m; with the right unit there is no warning and the file is
/// in metres.
#[test]
fn motion_units_on_every_motion_command() {
    let dir = TempDir::new("units");
    let d = &dir.0;
    write_cm_figure(&dir);
    let commands: Vec<Vec<&str>> = vec![
        vec!["import", "--format", "snap", "cm.bvh", "-o", "a.snap"],
        vec!["import", "--format", "rply", "cm.bvh", "-o", "a.rply"],
        vec![
            "import",
            "--format",
            "cbtrack",
            "cm.bvh",
            "-o",
            "a.cbtrack",
            "--crowd",
            "1",
            "--frames",
            "30",
        ],
        vec!["demo", "--input", "cm.bvh"],
        vec![
            "clip",
            "compress",
            "cm.bvh",
            "-o",
            "a.clip",
            "--tolerance-mm",
            "5",
        ],
        vec!["clip", "sweep", "cm.bvh"],
        vec![
            "clip",
            "study-compress",
            "cm.bvh",
            "-o",
            "a.strk",
            "--tolerance-mm",
            "50",
        ],
        vec![
            "rply-crowd",
            "--motion",
            "cm.bvh",
            "--characters",
            "1",
            "--seconds",
            "1",
            "--seeks",
            "1",
        ],
    ];
    for cmd in &commands {
        let o = run(d, cmd);
        let err = stderr(&o);
        assert!(
            err.contains("warning: cm.bvh: the skeleton is 169.88 m tall at 1 m per file unit")
                && err.contains("if the file is in centimetres, pass --unit-m 0.01 (1.70 m tall)"),
            "{cmd:?}: {err}"
        );
        for bad in ["0", "-1", "nan", "inf"] {
            let mut args = cmd.clone();
            args.extend(["--unit-m", bad]);
            assert_arg_error(d, &args, "--unit-m");
        }
        let mut args = cmd.clone();
        args.extend(["--unit-m", "0.01"]);
        let o = run(d, &args);
        assert!(!stderr(&o).contains("warning"), "{args:?}: {}", stderr(&o));
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    }
    // The unit reaches the file: verify with the same unit passes, without it fails.
    ok(
        d,
        &[
            "import", "--format", "snap", "cm.bvh", "-o", "m.snap", "--unit-m", "0.01",
        ],
    );
    ok(
        d,
        &[
            "verify",
            "m.snap",
            "--against",
            "cm.bvh",
            "--unit-m",
            "0.01",
        ],
    );
    let o = run(d, &["verify", "m.snap", "--against", "cm.bvh"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--unit-m 0.01"), "{}", stderr(&o));
    // The hips sit 0.9 m up: 0.9 / 0.28 studs at the default scale.
    let out = ok(d, &["sample", "m.snap", "--at", "0"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let y = v[0]["pos_studs"][1].as_f64().unwrap();
    assert!((y - 0.9 / 0.28).abs() < 1e-3, "{y}");
    // The same figure in metres needs no option and gets no warning.
    std::fs::write(
        dir.path("m.bvh"),
        figure_bvh(90.0)
            .replace("OFFSET 10 ", "OFFSET 0.1 ")
            .replace("OFFSET 0 16 0", "OFFSET 0 0.16 0")
            .replace("OFFSET 0.1 -45 0", "OFFSET 0.1 -0.45 0"),
    )
    .unwrap();
    let o = run(d, &["import", "--format", "snap", "m.bvh", "-o", "n.snap"]);
    assert!(
        o.status.success() && stderr(&o).is_empty(),
        "{}",
        stderr(&o)
    );
}

/// One notion of valid for CBTK: a truncated track and a track with a corrupt info chunk are
/// refused by `inspect`, `decode`, `verify` and `sample` alike, and `encode` writes nothing
/// that `inspect` refuses.
#[test]
fn cbtrack_one_notion_of_valid() {
    let dir = TempDir::new("cbtk-valid");
    let d = &dir.0;
    write_cm_figure(&dir);
    let import = [
        "import",
        "--format",
        "cbtrack",
        "cm.bvh",
        "-o",
        "t.cbtrack",
        "--crowd",
        "2",
        "--frames",
        "60",
        "--unit-m",
        "0.01",
    ];
    ok(d, &import);
    let good = std::fs::read(dir.path("t.cbtrack")).unwrap();
    // verify takes the crowd and the frames from the header.
    let out = ok(
        d,
        &[
            "verify",
            "t.cbtrack",
            "--against",
            "cm.bvh",
            "--unit-m",
            "0.01",
        ],
    );
    assert!(
        out.contains("crowd of 2, 60 frames") && out.contains("verified:"),
        "{out}"
    );
    let o = run(
        d,
        &[
            "verify",
            "t.cbtrack",
            "--against",
            "cm.bvh",
            "--unit-m",
            "0.01",
            "--crowd",
            "24",
        ],
    );
    assert!(
        !o.status.success() && stderr(&o).contains("header holds 2 units"),
        "{}",
        stderr(&o)
    );
    let o = run(d, &["verify", "t.cbtrack"]);
    assert!(
        !o.status.success() && stderr(&o).contains("--against"),
        "{}",
        stderr(&o)
    );

    let mut short = good.clone();
    short.truncate(good.len() - 100);
    let info_block = u32::from_le_bytes(good[36..40].try_into().unwrap()) as usize;
    let mut corrupt = good.clone();
    corrupt[info_block * 64 + 20] ^= 0xFF;
    for (name, bytes) in [("short.cbtrack", &short), ("corrupt.cbtrack", &corrupt)] {
        std::fs::write(dir.path(name), bytes).unwrap();
        for args in [
            vec!["inspect", name],
            vec!["decode", name],
            vec!["sample", name, "--at", "10"],
            vec!["verify", name, "--against", "cm.bvh", "--unit-m", "0.01"],
        ] {
            let o = run(d, &args);
            assert!(!o.status.success(), "{args:?} accepted {name}");
            assert!(
                stderr(&o).contains("is not a valid CBTK v1 file"),
                "{args:?}: {}",
                stderr(&o)
            );
        }
    }
    // The JSON of a valid file, with an info chunk that does not decode: encode refuses it.
    let json = ok(d, &["decode", "t.cbtrack"]);
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["header"]["info_len"] = serde_json::json!(3);
    std::fs::write(dir.path("bad.json"), v.to_string()).unwrap();
    let o = run(
        d,
        &[
            "encode",
            "--format",
            "cbtrack",
            "bad.json",
            "-o",
            "bad.cbtrack",
        ],
    );
    assert!(!o.status.success(), "encode wrote a file inspect refuses");
    assert!(!dir.path("bad.cbtrack").exists());
}

/// `encode` refuses a key the layout does not have, naming its path.
#[test]
fn encode_refuses_unknown_keys() {
    let dir = TempDir::new("encode-keys");
    let d = &dir.0;
    ok(d, &["demo", "-o", "w.snap"]);
    let json = ok(d, &["decode", "w.snap"]);
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["recordings"][2]["team"] = serde_json::json!(3);
    std::fs::write(dir.path("extra.json"), v.to_string()).unwrap();
    let o = run(
        d,
        &["encode", "--format", "snap", "extra.json", "-o", "x.snap"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("unknown key `recordings[2].team`"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path("x.snap").exists());
    let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
    v["recordings"][0]["frames"][1]["colour"] = serde_json::json!("red");
    std::fs::write(dir.path("extra.json"), v.to_string()).unwrap();
    let o = run(
        d,
        &["encode", "--format", "snap", "extra.json", "-o", "x.snap"],
    );
    assert!(
        stderr(&o).contains("unknown key `recordings[0].frames[1].colour`"),
        "{}",
        stderr(&o)
    );
}

/// `encode` names a wrong JSON value in JSON's words: the field's path, the JSON type (and
/// range) expected and the value found, not the Rust type it is read into.
#[test]
fn encode_errors_say_the_json_type_expected_and_found() {
    let dir = TempDir::new("encode-words");
    let d = &dir.0;
    ok(d, &["demo", "-o", "w.snap"]);
    let json = ok(d, &["decode", "w.snap"]);
    let cases = [
        (
            serde_json::json!("x"),
            "recordings[0].frames[1].dt_ms: expected an integer in 0..=65535, found the string \"x\"",
        ),
        (
            serde_json::json!(70000),
            "recordings[0].frames[1].dt_ms: 70000 does not fit in 0..=65535",
        ),
        (
            serde_json::json!(1.5),
            "recordings[0].frames[1].dt_ms: expected an integer in 0..=65535, found the number 1.5",
        ),
        (
            serde_json::json!(null),
            "recordings[0].frames[1].dt_ms: expected an integer in 0..=65535, found null",
        ),
    ];
    for (value, want) in cases {
        let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["recordings"][0]["frames"][1]["dt_ms"] = value.clone();
        std::fs::write(dir.path("bad.json"), v.to_string()).unwrap();
        let o = run(
            d,
            &["encode", "--format", "snap", "bad.json", "-o", "x.snap"],
        );
        assert_eq!(o.status.code(), Some(1), "{value}");
        assert!(stderr(&o).contains(want), "{value}: {}", stderr(&o));
        assert!(!dir.path("x.snap").exists());
    }
}

/// NaN, zero and out-of-range arguments are argument errors (exit 2, the option named).
#[test]
fn bad_numbers_are_argument_errors() {
    let dir = TempDir::new("args");
    let d = &dir.0;
    ok(d, &["demo", "-o", "w.snap"]);
    assert_arg_error(d, &["wsnap", "sim", "--clients", "0"], "--clients");
    assert_arg_error(d, &["wsnap", "sim", "--hz", "0"], "--hz");
    assert_arg_error(d, &["wsnap", "sim", "--loss", "200"], "--loss");
    assert_arg_error(d, &["wsnap", "sim", "--seconds", "nan"], "--seconds");
    assert_arg_error(d, &["rply-crowd", "--tick-rate", "0"], "--tick-rate");
    assert_arg_error(d, &["rply-crowd", "--seconds", "0"], "--seconds");
    assert_arg_error(d, &["rply-crowd", "--characters", "0"], "--characters");
    assert_arg_error(d, &["sample", "w.snap", "--at", "nan"], "--at");
    assert_arg_error(d, &["sample", "w.snap", "--at", "inf"], "--at");
    assert_arg_error(d, &["demo", "--studs-per-metre", "0"], "--studs-per-metre");
    assert_arg_error(
        d,
        &[
            "import", "--format", "cbtrack", "x.bvh", "-o", "x", "--crowd", "0",
        ],
        "--crowd",
    );
    assert_arg_error(
        d,
        &[
            "clip",
            "compress",
            "x.bvh",
            "-o",
            "x",
            "--tolerance-mm",
            "-1",
        ],
        "--tolerance-mm",
    );
    // Values that are wrong only together with another option are argument errors too
    // (status 2), naming the range: a client outside the swarm, too few ticks.
    assert_arg_error(
        d,
        &["wsnap", "write", "--client", "99", "-o", "x.wsnap"],
        "clients are 0 to 15",
    );
    assert!(!dir.path("x.wsnap").exists());
    assert_arg_error(
        d,
        &[
            "wsnap",
            "write",
            "--clients",
            "4",
            "--client",
            "4",
            "-o",
            "x.wsnap",
        ],
        "clients are 0 to 3",
    );
    assert_arg_error(
        d,
        &["wsnap", "sim", "--hz", "1", "--seconds", "0.5"],
        "no snapshot",
    );
    assert_arg_error(
        d,
        &["rply-crowd", "--tick-rate", "1", "--seconds", "0.2"],
        "--tick-rate 1",
    );
    // A budget no record fits sends nothing: a failure, not a run within every bound.
    let o = run(d, &["wsnap", "sim", "--budget", "0", "--seconds", "0.2"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("wsnap sim --budget 0: no snapshot of the run held a record"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("met"), "{}", stdout(&o));
    // 128 flying bots without a budget send more than the 150 KB/s gate: the report is
    // printed and the run exits 1; `--no-gate` only reports.
    let over = ["wsnap", "sim", "--seconds", "0.1"];
    let o = run(d, &over);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("| gate ≤ 150 KB/s | not met |"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("over the 150 KB/s gate") && stderr(&o).contains("--budget 2560"),
        "{}",
        stderr(&o)
    );
    let o = run(d, &[&over[..], &["--no-gate"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Within the gate, exit 0.
    let o = run(d, &["wsnap", "sim", "--seconds", "0.1", "--budget", "2560"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("| gate ≤ 150 KB/s | met |"),
        "{}",
        stdout(&o)
    );
}

/// A studs-per-metre that pushes positions past float32 precision writes no file (on the CMU
/// walk, 1e9 studs per metre put a frame of `LeftHip` 448 studs off).
#[test]
fn import_refuses_a_scale_its_verify_would_reject() {
    let Some(bvh) = statepack_fixtures::fixture_for_test(BVH) else {
        return;
    };
    let dir = TempDir::new("scale");
    let d = &dir.0;
    let o = run(
        d,
        &[
            "import",
            "--format",
            "snap",
            bvh.to_str().unwrap(),
            "-o",
            "x.snap",
            "--studs-per-metre",
            "1e9",
        ],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no file written")
            && stderr(&o).contains("outside the documented bounds"),
        "{}",
        stderr(&o)
    );
    assert!(!dir.path("x.snap").exists());
}

/// `sample`: negative numbers parse, and one rule for every format: a time outside the file
/// is an error naming the range.
#[test]
fn sample_outside_the_file_is_an_error_for_every_format() {
    let dir = TempDir::new("sample-range");
    let d = &dir.0;
    write_cm_figure(&dir);
    let u = ["--unit-m", "0.01"];
    let mut a = vec!["import", "--format", "snap", "cm.bvh", "-o", "x.snap"];
    a.extend(u);
    ok(d, &a);
    let mut a = vec!["import", "--format", "rply", "cm.bvh", "-o", "x.rply"];
    a.extend(u);
    ok(d, &a);
    let mut a = vec![
        "import",
        "--format",
        "cbtrack",
        "cm.bvh",
        "-o",
        "x.cbtrack",
        "--crowd",
        "1",
        "--frames",
        "30",
    ];
    a.extend(u);
    ok(d, &a);
    // The SNAP recordings end after 5 frame times of 33 or 34 ms.
    ok(d, &["sample", "x.snap", "--at", "167"]);
    for (file, end) in [
        ("x.snap", "1000"),
        ("x.rply", "1000"),
        ("x.cbtrack", "1000"),
    ] {
        for at in ["-5", end] {
            let o = run(d, &["sample", file, "--at", at]);
            assert_eq!(o.status.code(), Some(1), "{file} --at {at}: {}", stderr(&o));
            let err = stderr(&o);
            assert!(
                !err.contains("unexpected argument") && err.contains(at.trim_start_matches('-')),
                "{file} --at {at}: {err}"
            );
        }
    }
    let o = run(d, &["sample", "x.snap", "--at", "-5"]);
    assert!(stderr(&o).contains("from 0 to 167 ms"), "{}", stderr(&o));
    for (file, range) in [
        ("x.rply", "ticks run from 0 to "),
        ("x.cbtrack", "frames run from 0 to 29"),
    ] {
        for at in ["-5", "1000"] {
            let o = run(d, &["sample", file, "--at", at]);
            assert!(
                stderr(&o).contains(range),
                "{file} --at {at}: {}",
                stderr(&o)
            );
        }
    }
    // RPLY is sampled at a tick: a fraction is not a value `--at` takes there.
    assert_arg_error(d, &["sample", "x.rply", "--at", "1.5"], "whole number");
}

/// A reader that closes the pipe early ends statepack without a message or a panic.
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    let dir = TempDir::new("pipe");
    ok(&dir.0, &["demo", "-o", "w.snap"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(["decode", "w.snap"])
        .current_dir(&dir.0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is dropped here: the rest of the JSON (megabytes) meets a closed pipe.
    let o = child.wait_with_output().unwrap();
    assert_ne!(o.status.code(), Some(101), "panicked");
    assert!(
        !stderr(&o).contains("panicked") && !stderr(&o).contains("Broken pipe"),
        "{}",
        stderr(&o)
    );
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert!(
            o.status.success() || o.status.signal() == Some(libc_sigpipe()),
            "{:?}",
            o.status
        );
    }
}

#[cfg(unix)]
fn libc_sigpipe() -> i32 {
    13
}

/// A bad motion file's error says what is wrong once, with the file named once.
#[test]
fn motion_load_errors_are_not_repeated() {
    let dir = TempDir::new("motion-err");
    let d = &dir.0;
    std::fs::write(dir.path("bad.bvh"), "HIERARCHY\nROOT x\n{\n").unwrap();
    for args in [
        vec!["import", "--format", "snap", "bad.bvh", "-o", "x.snap"],
        vec![
            "import",
            "--format",
            "cbtrack",
            "bad.bvh",
            "-o",
            "x.cbtrack",
        ],
        vec!["clip", "compress", "bad.bvh", "-o", "x.clip"],
        vec!["demo", "--input", "bad.bvh"],
        vec!["import", "--format", "snap", "missing.bvh", "-o", "x.snap"],
    ] {
        let o = run(d, &args);
        let err = stderr(&o);
        assert!(!o.status.success());
        let what = if args.contains(&"missing.bvh") {
            "os error 2"
        } else {
            "BVH line 4"
        };
        assert_eq!(err.matches(what).count(), 1, "{args:?}: {err}");
        let file = if args.contains(&"missing.bvh") {
            "missing.bvh"
        } else {
            "bad.bvh"
        };
        assert_eq!(err.matches(file).count(), 1, "{args:?}: {err}");
    }
}

/// One spelling of the output flag (`-o` / `--output`, old `--out` kept), and `import --format`
/// offers only the formats it writes.
#[test]
fn output_flag_and_import_formats() {
    let dir = TempDir::new("flags");
    let d = &dir.0;
    write_cm_figure(&dir);
    ok(d, &["demo", "--output", "a.snap"]);
    ok(d, &["demo", "--out", "b.snap"]);
    assert!(dir.path("a.snap").exists() && dir.path("b.snap").exists());
    for flag in ["-o", "--output", "--out"] {
        let file = format!("c{}.clip", flag.len());
        ok(
            d,
            &[
                "clip",
                "compress",
                "cm.bvh",
                "--unit-m",
                "0.01",
                "--tolerance-mm",
                "5",
                flag,
                &file,
            ],
        );
        assert!(dir.path(&file).exists());
    }
    let help = ok(d, &["import", "--help"]);
    let values: Vec<&str> = help
        .lines()
        .map(str::trim)
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| l.split(':').next())
        .collect();
    assert_eq!(values, ["snap", "rply", "cbtrack"], "{help}");
    let o = run(d, &["import", "--format", "wsnap", "cm.bvh", "-o", "x"]);
    assert_eq!(o.status.code(), Some(ARG_ERROR));
    assert!(
        stderr(&o).contains("[possible values: snap, rply, cbtrack]"),
        "{}",
        stderr(&o)
    );
    for help in [
        ok(d, &["clip", "compress", "--help"]),
        ok(d, &["demo", "--help"]),
    ] {
        assert!(help.contains("-o, --output"), "{help}");
        assert!(!help.contains("--out "), "{help}");
    }
}

/// The demo: SNAP's notes directly under the table before RPLY's, "elmo" defined; the study
/// pipeline only with `--study`, in a table of its own after a heading that says what it is,
/// each row labelled with whether it meets 1 mm; exit 0 either way.
#[test]
fn demo_labels_and_order() {
    let dir = TempDir::new("demo-labels");
    let out = ok(&dir.0, &["demo"]);
    let at = |s: &str| out.find(s).unwrap_or_else(|| panic!("no `{s}`:\n{out}"));
    assert!(at("SNAP row:") < at("SNAP verified:"));
    assert!(at("SNAP verified:") < at("RPLY row:"));
    assert!(at("RPLY row:") < at("CBTK row:"));
    assert!(
        out.contains("an elmo is the Recoil engine's length unit"),
        "{out}"
    );
    // What the user asked for: statepack's formats only, and how to get the comparison.
    assert!(!out.contains("study pipeline"), "{out}");
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("| statepack clip, 1 mm"))
            .count(),
        2,
        "{out}"
    );
    assert!(out.contains("`--study` adds the keyframe-compression study's pipeline"));
    let out = ok(&dir.0, &["demo", "--study"]);
    let heading = out
        .find("The keyframe-compression study's pipeline on the same clip, for comparison (not a statepack format;")
        .unwrap_or_else(|| panic!("no study heading:\n{out}"));
    assert!(out[heading..].contains("do not change the exit code"));
    let study: Vec<(usize, &str)> = out
        .lines()
        .scan(0, |pos, l| {
            let at = *pos;
            *pos += l.len() + 1;
            Some((at, l))
        })
        .filter(|(_, l)| l.starts_with("| study pipeline"))
        .collect();
    assert_eq!(study.len(), 2, "{out}");
    for (at, row) in study {
        assert!(at > heading, "a study row above its heading:\n{out}");
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let mm: f64 = cells[5].parse().unwrap();
        let label = if mm <= 1.0 {
            "(meets 1 mm on joints)"
        } else {
            "(misses 1 mm on joints)"
        };
        assert!(cells[0].ends_with(label), "{row}");
    }
}

/// An empty file is no format's file: `inspect`, `decode` and `verify` refuse it by name
/// instead of reading it as a SNAP file that ends early.
#[test]
fn an_empty_file_has_no_format() {
    let d = TempDir::new("empty");
    std::fs::write(d.path("empty.bin"), b"").unwrap();
    for cmd in ["inspect", "decode", "verify"] {
        let o = run(&d.0, &[cmd, "empty.bin"]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert!(
            stderr(&o).contains("empty.bin: the file is empty"),
            "{cmd}: {}",
            stderr(&o)
        );
        assert!(!stdout(&o).contains("SNAP"), "{cmd}: {}", stdout(&o));
    }
}
