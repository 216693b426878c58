//! `statepack inspect | decode | encode --schema FILE.ksy`, run as a process on Kaitai
//! Struct's conformance suite (`../shared/kaitai-tests`, or `STATEPACK_KAITAI_TESTS`): decode
//! gives the values the suite's `.kst` files expect, encode writes back what decode printed,
//! and a broken schema prints its diagnostics and exits non-zero.
//!
//! Without the suite these tests print why they skipped; under `CI=true` they fail.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn under_ci() -> bool {
    std::env::var("CI")
        .map(|v| v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"))
        .unwrap_or(false)
}

/// The suite folder, or `None` (after saying so) when it is not there.
fn suite() -> Option<PathBuf> {
    let dir = match std::env::var_os("STATEPACK_KAITAI_TESTS").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/kaitai-tests"),
    };
    if dir.join("formats").is_dir() {
        return Some(dir);
    }
    let msg = format!(
        "skipped: Kaitai Struct's test suite not found at {} (set STATEPACK_KAITAI_TESTS)",
        dir.display()
    );
    assert!(!under_ci(), "{msg}; under CI the suite must be present");
    eprintln!("{msg}");
    None
}

fn run(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(args)
        .output()
        .expect("run the statepack binary")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The asserts of a kst: `(actual, expected)` as written.
fn kst_asserts(kst: &str) -> (String, Vec<(String, String)>) {
    let mut data = String::new();
    let mut out = Vec::new();
    let mut actual: Option<String> = None;
    for line in kst.lines() {
        let l = line.trim();
        if let Some(d) = l.strip_prefix("data:") {
            data = d.trim().to_owned();
        } else if let Some(a) = l.strip_prefix("- actual:") {
            actual = Some(a.trim().to_owned());
        } else if let Some(e) = l.strip_prefix("expected:") {
            if let Some(a) = actual.take() {
                out.push((a, e.trim().to_owned()));
            }
        }
    }
    (data, out)
}

/// Follows `a.b[2].c` (casts `.as<...>` dropped, `.size` of a list) through decode's JSON.
fn lookup<'a>(root: &'a Value, path: &str) -> Option<Value> {
    let mut cur: &'a Value = root;
    let mut rest = path;
    while !rest.is_empty() {
        rest = rest.strip_prefix('.').unwrap_or(rest);
        if let Some(r) = rest.strip_prefix("as<") {
            rest = &r[r.find('>')? + 1..];
            continue;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        let (name, after) = rest.split_at(end);
        if name == "size" && after.is_empty() {
            return Some(Value::from(cur.as_array()?.len()));
        }
        cur = cur.get(name)?;
        rest = after;
        while let Some(r) = rest.strip_prefix('[') {
            let close = r.find(']')?;
            let i: usize = r[..close].parse().ok()?;
            cur = cur.get(i)?;
            rest = &r[close + 1..];
        }
    }
    Some(cur.clone())
}

fn int_literal(s: &str) -> Option<i128> {
    let (neg, t) = match s.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, s),
    };
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        i128::from_str_radix(h, 16).ok()?
    } else if let Some(b) = t.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else {
        t.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

/// Whether decode's JSON value `got` is what a kst's `expected` says.
fn matches(got: &Value, expected: &str) -> bool {
    // An integer the enum does not list is printed as `{"Unlisted": n}`.
    if let Some(n) = got.get("Unlisted") {
        return matches(n, expected);
    }
    let e = expected.trim_matches('\'');
    if let Some(i) = int_literal(e) {
        return got
            .as_i64()
            .map(i128::from)
            .or(got.as_u64().map(i128::from))
            == Some(i);
    }
    match e {
        "true" => return got == &Value::Bool(true),
        "false" => return got == &Value::Bool(false),
        _ => {}
    }
    if let Some(s) = e.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return got.as_str() == Some(s);
    }
    if let Some(items) = e.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        let want: Vec<Option<i128>> = items.split(',').map(|x| int_literal(x.trim())).collect();
        let Some(list) = got.as_array() else {
            return false;
        };
        return list.len() == want.len()
            && list
                .iter()
                .zip(&want)
                .all(|(g, w)| g.as_i64().map(i128::from).or(g.as_u64().map(i128::from)) == *w);
    }
    // An enum value `schema::enum::name` is printed by name.
    e.rsplit("::")
        .next()
        .is_some_and(|n| got.as_str() == Some(n))
}

/// `decode --schema formats/<id>.ksy src/<data>` gives every value the kst `id` expects.
#[test]
fn decode_with_a_suite_schema_gives_the_kst_values() {
    let Some(dir) = suite() else { return };
    let mut checked = 0;
    // `test_if_b1` (of `bits_simple`) is a value instance: `decode` prints it after the
    // fields and `inspect` shows it as not stored.
    let instances = ["test_if_b1"];
    for id in [
        "repeat_until_s4",
        "str_encodings",
        "bits_simple",
        "enum_0",
        "nested_types",
        "switch_manual_int",
    ] {
        let kst = std::fs::read_to_string(dir.join("spec/ks").join(format!("{id}.kst")))
            .expect("read the kst");
        let (data, asserts) = kst_asserts(&kst);
        assert!(!asserts.is_empty(), "{id} has asserts");
        let schema = dir.join("formats").join(format!("{id}.ksy"));
        let input = dir.join("src").join(&data);
        let o = run(&[
            "decode".as_ref(),
            "--schema".as_ref(),
            schema.as_os_str(),
            input.as_os_str(),
        ]);
        assert!(o.status.success(), "{id}: {}", text(&o.stderr));
        let json: Value = serde_json::from_slice(&o.stdout).expect("decode prints JSON");
        let shown = run(&[
            "inspect".as_ref(),
            "--schema".as_ref(),
            schema.as_os_str(),
            input.as_os_str(),
        ]);
        let shown = text(&shown.stdout);
        for (actual, expected) in asserts {
            if instances.contains(&actual.as_str()) {
                let line = format!(
                    "(not stored)  {actual} = {}",
                    int_literal(&expected).expect("an integer")
                );
                assert!(shown.contains(&line), "{id}: no `{line}` in\n{shown}");
            }
            let got = lookup(&json, &actual)
                .unwrap_or_else(|| panic!("{id}: `{actual}` is not in the JSON {json}"));
            assert!(
                matches(&got, &expected),
                "{id}: `{actual}` is {got}, the kst expects {expected}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked} asserts checked");
}

/// `encode --schema` writes back the JSON `decode --schema` printed; `inspect --schema` shows
/// the tree; a value that does not fit its type is refused naming the field.
#[test]
fn encode_with_a_suite_schema_writes_back_what_decode_printed() {
    let Some(dir) = suite() else { return };
    let tmp = std::env::temp_dir().join(format!("statepack-cli-schema-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = dir.join("formats/repeat_until_s4.ksy");
    let input = dir.join("src/repeat_until_s4.bin");
    let o = run(&[
        "decode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        input.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = tmp.join("r.json");
    std::fs::write(&json, &o.stdout).unwrap();
    let out = tmp.join("r.bin");
    let o = run(&[
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        json.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let original = std::fs::read(&input).unwrap();
    let written = std::fs::read(&out).unwrap();
    assert_eq!(written[..], original[..written.len()]);
    assert_eq!(written.len(), 23, "four s4 and \"foobar\\0\"");

    let o = run(&[
        "inspect".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        out.as_os_str(),
    ]);
    let shown = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(shown.contains("entries: 4 element(s)"), "{shown}");
    assert!(
        shown.contains("      16..23            7 B  afterall = \"foobar\""),
        "{shown}"
    );

    // A value that does not fit its stored type is refused naming the field; nothing is written.
    let bad = tmp.join("bad.json");
    std::fs::write(&bad, r#"{"entries": [1, 4294967296], "afterall": "x"}"#).unwrap();
    let out2 = tmp.join("bad.bin");
    let o = run(&[
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        bad.as_os_str(),
        "-o".as_ref(),
        out2.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("entries[1]: 4294967296 does not fit"),
        "{}",
        text(&o.stderr)
    );
    assert!(!out2.exists());

    // Value instances are printed by decode and read back by encode: the value given must be
    // the one the bytes written compute.
    let schema = dir.join("formats/bits_simple.ksy");
    let input = dir.join("src/fixed_struct.bin");
    let o = run(&[
        "decode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        input.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let mut value: Value = serde_json::from_slice(&o.stdout).expect("decode prints JSON");
    assert_eq!(value["test_if_b1"], Value::from(123), "{value}");
    let json = tmp.join("bits.json");
    std::fs::write(&json, &o.stdout).unwrap();
    let out3 = tmp.join("bits.bin");
    let o = run(&[
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        json.as_os_str(),
        "-o".as_ref(),
        out3.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    value["test_if_b1"] = Value::from(124);
    std::fs::write(&json, value.to_string()).unwrap();
    let out4 = tmp.join("bits-bad.bin");
    let o = run(&[
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        json.as_os_str(),
        "-o".as_ref(),
        out4.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains(
            "test_if_b1: a value instance, computed from the fields as 123, but the JSON gives 124"
        ),
        "{}",
        text(&o.stderr)
    );
    assert!(!out4.exists());
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A schema the generator refuses prints the diagnostics with file:line:column and exits 1;
/// a file the schema does not read exits 1 naming the field and the byte offset.
#[test]
fn broken_schema_and_bad_input_exit_non_zero() {
    let tmp = std::env::temp_dir().join(format!("statepack-cli-badschema-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = tmp.join("bad.ksy");
    std::fs::write(&schema, "meta:\n  id: bad\nseq:\n  - id: a\n    type: u9\n").unwrap();
    let input = tmp.join("in.bin");
    std::fs::write(&input, [1u8, 2, 3]).unwrap();
    for cmd in ["inspect", "decode"] {
        let o = run(&[
            cmd.as_ref(),
            "--schema".as_ref(),
            schema.as_os_str(),
            input.as_os_str(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        let err = text(&o.stderr);
        assert!(
            err.contains("bad.ksy:5:11: error: `u9` is not a KS number type"),
            "{err}"
        );
    }
    let good = tmp.join("good.ksy");
    std::fs::write(
        &good,
        "meta:\n  id: good\n  endian: le\nseq:\n  - id: magic\n    contents: GM\n  - id: n\n    type: u4\n",
    )
    .unwrap();
    let o = run(&[
        "decode".as_ref(),
        "--schema".as_ref(),
        good.as_os_str(),
        input.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("magic (byte offset 0): expected"), "{err}");
    std::fs::write(&input, b"GM\x01\x00").unwrap();
    let o = run(&[
        "decode".as_ref(),
        "--schema".as_ref(),
        good.as_os_str(),
        input.as_os_str(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("n (byte offset 2): input ends early"), "{err}");
    let _ = std::fs::remove_dir_all(&tmp);
}

/// The note about bytes after the root type counts what positional instances read: a file
/// whose index (an instance at an offset) reads its last bytes gets no note, and one with
/// bytes after the index gets a note naming where they start.
#[test]
fn trailing_note_counts_what_instances_read() {
    let tmp = std::env::temp_dir().join(format!("statepack-cli-tail-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = tmp.join("idx.ksy");
    std::fs::write(
        &schema,
        "meta:\n  id: idx\n  endian: le\nseq:\n  - id: ofs_index\n    type: u1\ninstances:\n  index:\n    pos: ofs_index\n    size: 4\n",
    )
    .unwrap();
    let whole = tmp.join("whole.bin");
    std::fs::write(&whole, [1u8, 0xa, 0xb, 0xc, 0xd]).unwrap();
    let longer = tmp.join("longer.bin");
    std::fs::write(&longer, [1u8, 0xa, 0xb, 0xc, 0xd, 0, 0]).unwrap();
    for cmd in ["inspect", "decode"] {
        let o = run(&[
            cmd.as_ref(),
            "--schema".as_ref(),
            schema.as_os_str(),
            whole.as_os_str(),
        ]);
        assert!(o.status.success(), "{cmd}: {}", text(&o.stderr));
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(!all.contains("read by no field"), "{cmd}: {all}");
        let o = run(&[
            cmd.as_ref(),
            "--schema".as_ref(),
            schema.as_os_str(),
            longer.as_os_str(),
        ]);
        assert!(o.status.success(), "{cmd}: {}", text(&o.stderr));
        let all = format!("{}{}", text(&o.stdout), text(&o.stderr));
        assert!(
            all.contains("2 byte(s) after byte 5 are read by no field or instance of the schema"),
            "{cmd}: {all}"
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// An instance that fails to read (a positional instance past the end, a value instance
/// dividing by zero) shows its error at its path, in the JSON as `{"__error": "message"}`
/// and in the tree as an error line, and the rest of the file is shown; with `--strict` the
/// first one fails the command.
#[test]
fn instances_that_fail_show_their_error_unless_strict() {
    let tmp = std::env::temp_dir().join(format!("statepack-cli-insterr-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = tmp.join("inst.ksy");
    std::fs::write(
        &schema,
        "meta:\n  id: inst\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: ofs\n    type: u1\ninstances:\n  far:\n    pos: ofs\n    type: rec\n  near:\n    pos: 0\n    type: u1\n  ratio:\n    value: 10 / n\ntypes:\n  rec:\n    seq:\n      - id: a\n        type: u1\n      - id: b\n        type: u2\n",
    )
    .unwrap();
    let input = tmp.join("in.bin");
    std::fs::write(&input, [0u8, 4, 7, 8, 9]).unwrap();
    let args = |cmd: &str, strict: bool| {
        let mut a: Vec<std::ffi::OsString> = vec![cmd.into()];
        if strict {
            a.push("--strict".into());
        }
        a.extend([
            "--schema".into(),
            schema.clone().into(),
            input.clone().into(),
        ]);
        a
    };
    let call = |a: Vec<std::ffi::OsString>| {
        let refs: Vec<&std::ffi::OsStr> = a.iter().map(|x| x.as_os_str()).collect();
        run(&refs)
    };
    let o = call(args("decode", false));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["n"], 0);
    assert_eq!(v["near"], 0);
    let far = v["far"]["__error"].as_str().expect("far shows its error");
    assert!(far.contains("b (byte offset 5): input ends early"), "{far}");
    let ratio = v["ratio"]["__error"]
        .as_str()
        .expect("ratio shows its error");
    assert!(ratio.contains("division by zero"), "{ratio}");
    let o = call(args("inspect", false));
    assert!(o.status.success(), "{}", text(&o.stderr));
    let tree = text(&o.stdout);
    assert!(
        tree.contains("far: error: b (byte offset 5): input ends early"),
        "{tree}"
    );
    assert!(tree.contains("near = 0"), "{tree}");
    assert!(
        tree.contains("ratio: error: in `10 / n`: division by zero"),
        "{tree}"
    );
    for cmd in ["decode", "inspect"] {
        let o = call(args(cmd, true));
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert!(o.stdout.is_empty(), "{cmd}: {}", text(&o.stdout));
        let err = text(&o.stderr);
        assert!(
            err.contains("far.b (byte offset 5): input ends early"),
            "{cmd}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// A positional instance that no expression names and that fails to read shows its error and
/// does not fail `decode --schema`; `encode --schema` writes that JSON back, the instances
/// that read laid out at their positions, to the same bytes.
#[test]
fn positional_instances_round_trip_through_decode_and_encode() {
    let tmp = std::env::temp_dir().join(format!("statepack-cli-posrt-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = tmp.join("pos.ksy");
    std::fs::write(
        &schema,
        "meta:\n  id: pos\n  endian: le\nseq:\n  - id: n\n    type: u1\n  - id: body\n    size: n\ninstances:\n  tail:\n    pos: 10\n    type: u2\n  near:\n    pos: 1\n    type: u1\n",
    )
    .unwrap();
    let input = tmp.join("in.bin");
    std::fs::write(&input, [2u8, 7, 8]).unwrap();
    let o = run(&[
        "decode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        input.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["near"], 7, "{v}");
    let tail = v["tail"]["__error"].as_str().expect("tail shows its error");
    assert!(tail.contains("byte offset 3"), "{tail}");
    let json = tmp.join("in.json");
    std::fs::write(&json, &o.stdout).unwrap();
    let out = tmp.join("out.bin");
    let o = run(&[
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        json.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&out).unwrap(), [2u8, 7, 8]);
    let _ = std::fs::remove_dir_all(&tmp);
}

/// What `decode --schema` prints and `encode --schema` takes back, in the words of the docs:
/// arrays of numbers 16 to a line, an integer an enum does not list as `{"Unlisted": n}`
/// (read back by `encode`), errors naming the JSON type found, a finite number too large for
/// an `f4` refused by field, a list whose count field says otherwise refused as a count
/// error, and a schema file read with a size limit.
#[test]
fn schema_json_forms_and_refusals() {
    let tmp = std::env::temp_dir().join(format!("statepack-cli-forms-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = tmp.join("forms.ksy");
    std::fs::write(
        &schema,
        "meta:\n  id: forms\n  endian: le\nseq:\n  - id: kind\n    type: u1\n    enum: animal\n  - id: ratio\n    type: f4\n  - id: n\n    type: u1\n  - id: words\n    type: u2\n    repeat: expr\n    repeat-expr: n\nenums:\n  animal:\n    1: cat\n    2: dog\n",
    )
    .unwrap();
    let mut bytes = vec![7u8];
    bytes.extend(1.5f32.to_le_bytes());
    bytes.push(20);
    for i in 0..20u16 {
        bytes.extend(i.to_le_bytes());
    }
    let input = tmp.join("forms.bin");
    std::fs::write(&input, &bytes).unwrap();
    let o = run(&[
        "decode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        input.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let printed = text(&o.stdout);
    assert!(
        printed.contains("0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,"),
        "16 numbers a line: {printed}"
    );
    let json: Value = serde_json::from_str(&printed).expect("decode prints JSON");
    assert_eq!(
        json["kind"],
        serde_json::json!({"Unlisted": 7}),
        "{printed}"
    );
    let encode = |json_text: &str, name: &str| -> Output {
        let j = tmp.join(format!("{name}.json"));
        std::fs::write(&j, json_text).unwrap();
        let out = tmp.join(format!("{name}.bin"));
        run(&[
            "encode".as_ref(),
            "--schema".as_ref(),
            schema.as_os_str(),
            j.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ])
    };
    let o = encode(&printed, "back");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(tmp.join("back.bin")).unwrap(), bytes);

    let mut big = json.clone();
    big["ratio"] = serde_json::json!(1e39);
    let o = encode(&big.to_string(), "big");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("ratio: 1000000000000000000000000000000000000000 does not fit f4"),
        "{}",
        text(&o.stderr)
    );
    let mut wrong = json.clone();
    wrong["n"] = Value::Null;
    let o = encode(&wrong.to_string(), "wrong");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("n: expected an integer, found null"),
        "{}",
        text(&o.stderr)
    );
    wrong["n"] = serde_json::json!("abc");
    let o = encode(&wrong.to_string(), "wrong2");
    assert!(
        text(&o.stderr).contains("n: expected an integer, found the string \"abc\""),
        "{}",
        text(&o.stderr)
    );

    let mut short = json.clone();
    short["words"] = serde_json::json!([1, 2, 3]);
    let o = encode(&short.to_string(), "short");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("words: 3 element(s) given, but the count `n` is 20"),
        "{}",
        text(&o.stderr)
    );

    if Path::new("/dev/zero").exists() {
        let o = run(&[
            "decode".as_ref(),
            "--schema".as_ref(),
            "/dev/zero".as_ref(),
            input.as_os_str(),
        ]);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            text(&o.stderr).contains("a schema file may have at most 16777216 bytes"),
            "{}",
            text(&o.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `inspect --schema` shows a bit field as `inspect` shows the built-in formats' bit fields:
/// the bytes it touches, its size in bits (`3 b`) and its bit range, never an empty byte
/// range (the test schema `bits.ksy`, written by `encode --schema`).
#[test]
fn inspect_with_a_schema_shows_bit_ranges() {
    let tmp = std::env::temp_dir().join(format!("statepack-cli-bits-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/bits.ksy");
    let json = tmp.join("bits.json");
    std::fs::write(
        &json,
        r#"{"flags": 5, "has_extra": true, "small": -3, "count": 2, "codes": [1, 30],
            "extra": 1000, "tail_byte": 7, "lead": 2, "bit_varint": 5, "byte_varint": 9,
            "items": [{"sign": true, "mag": 3, "align": ""}, {"sign": false, "mag": 1023, "align": ""}],
            "wide": 123456}"#,
    )
    .unwrap();
    let bin = tmp.join("bits.bin");
    let o = run(&[
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        json.as_os_str(),
        "-o".as_ref(),
        bin.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = run(&[
        "inspect".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        bin.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let shown = text(&o.stdout);
    let line = |name: &str| {
        shown
            .lines()
            .find(|l| l.contains(&format!(" {name} = ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{shown}"))
            .to_owned()
    };
    // flags: bits 0..3 of byte 0; has_extra: bit 3; small: bits 4..16 over bytes 0 and 1.
    let flags = line("flags");
    assert!(
        flags.trim_start().starts_with("0..1")
            && flags.contains(" 3 b ")
            && flags.ends_with("(bits 0..3)"),
        "{flags}"
    );
    assert!(
        line("has_extra").ends_with("has_extra = true  (bits 3..4)"),
        "{shown}"
    );
    let small = line("small");
    assert!(
        small.contains(" 12 b ") && small.ends_with("(bits 4..16)"),
        "{small}"
    );
    assert!(line("count").ends_with("(bits 16..20)"), "{shown}");
    // Elements of a list of bit fields too: codes are two b5 after count.
    assert!(line("[1]").ends_with("[1] = 30  (bits 25..30)"), "{shown}");
    // No member shows an empty byte range.
    assert!(
        !shown
            .lines()
            .any(|l| l.contains(" 0 B  ") && l.contains(" = ") && !l.contains("align")),
        "{shown}"
    );
    std::fs::remove_dir_all(&tmp).ok();
}

/// Runs `statepack args` in `dir`; it must succeed.
fn run_ok(dir: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_statepack"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run the statepack binary");
    assert!(
        o.status.success(),
        "statepack {args:?}: {}",
        text(&o.stderr)
    );
    o
}

/// `decode --schema` then `encode --schema` gives back `file` byte for byte with the
/// project's schema `schema` (under `schema/`).
fn schema_round_trip(dir: &Path, schema: &str, file: &str) {
    let ksy = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schema")
        .join(schema);
    let ksy = ksy.to_str().unwrap();
    let o = run_ok(dir, &["decode", "--schema", ksy, file]);
    std::fs::write(dir.join("v.json"), &o.stdout).unwrap();
    run_ok(
        dir,
        &["encode", "--schema", ksy, "v.json", "-o", "back.bin"],
    );
    let (a, b) = (
        std::fs::read(dir.join(file)).unwrap(),
        std::fs::read(dir.join("back.bin")).unwrap(),
    );
    assert!(a == b, "{file}: written back differently with {schema}");
}

/// A whole CBTK track (made from the smallest motion fixture), whose chunks are zlib
/// streams of level 9, 1 or 0, and an RPLY replay holding a negative NaN, go through
/// `decode --schema` and `encode --schema` unchanged.
#[test]
fn fixture_files_are_written_back_byte_for_byte() {
    let Some(motion) = statepack_fixtures::fixture_for_test("motion/rigged-simple.gltf") else {
        return;
    };
    let Some(nan) = statepack_fixtures::fixture_for_test("flashback-rply/A-nan.rply") else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("statepack-cli-fixrt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let motion = motion.to_str().unwrap();
    run_ok(
        &dir,
        &["import", "--format", "cbtrack", motion, "-o", "t.cbtrack"],
    );
    schema_round_trip(&dir, "cbtrack_v1.ksy", "t.cbtrack");
    std::fs::copy(&nan, dir.join("nan.rply")).unwrap();
    schema_round_trip(&dir, "rply_v3.ksy", "nan.rply");
    let printed = std::fs::read_to_string(dir.join("v.json")).unwrap();
    assert!(
        printed.contains("\"nan:0xfff8000000000000\""),
        "a negative NaN"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A byte array or string shorter than its `size` is refused by field, as the generated
/// writer refuses it; a `pad-right` field is padded.
#[test]
fn a_value_shorter_than_its_size_is_refused_unless_padded() {
    let dir = std::env::temp_dir().join(format!("statepack-cli-short-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("s.ksy"),
        "meta:\n  id: s\nseq:\n  - id: n\n    type: u1\n  - id: body\n    size: n\n  - id: name\n    type: str\n    size: 4\n    encoding: ASCII\n  - id: padded\n    size: 3\n    pad-right: 0x20\n",
    )
    .unwrap();
    for (json, refused) in [
        (
            r#"{"n": 3, "body": "aabb", "name": "abcd", "padded": "01"}"#,
            "body: 2 byte(s) given, but the size `n` is 3",
        ),
        (
            r#"{"n": 2, "body": "aabb", "name": "ab", "padded": "01"}"#,
            "name: 2 byte(s) given, but the size is 4",
        ),
    ] {
        std::fs::write(dir.join("v.json"), json).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_statepack"))
            .current_dir(&dir)
            .args(["encode", "--schema", "s.ksy", "v.json", "-o", "out.bin"])
            .output()
            .unwrap();
        assert!(!o.status.success(), "{json}");
        assert!(
            text(&o.stderr).contains(refused),
            "{json}: {}",
            text(&o.stderr)
        );
    }
    std::fs::write(
        dir.join("v.json"),
        r#"{"n": 2, "body": "aabb", "name": "abcd", "padded": "01"}"#,
    )
    .unwrap();
    run_ok(
        &dir,
        &["encode", "--schema", "s.ksy", "v.json", "-o", "out.bin"],
    );
    assert_eq!(
        std::fs::read(dir.join("out.bin")).unwrap(),
        [2, 0xaa, 0xbb, b'a', b'b', b'c', b'd', 1, 0x20, 0x20]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--opaque NAME=FILE.ksy` gives a `ks-opaque-types` schema its opaque type as another
/// schema for `decode`, `encode` and `inspect`; an opaque type not given, a processor written
/// in Rust and a malformed option are refused by name with exit 1.
#[test]
fn opaque_types_are_given_as_schemas() {
    let Some(dir) = suite() else { return };
    let tmp = std::env::temp_dir().join(format!("statepack-cli-opaque-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let schema = dir.join("formats/type_ternary_opaque.ksy");
    let input = dir.join("src/term_strz.bin");
    let opaque = format!(
        "hello_world={}",
        dir.join("formats/hello_world.ksy").display()
    );
    let o = run(&[
        "decode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        "--opaque".as_ref(),
        opaque.as_ref(),
        input.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let value: Value = serde_json::from_slice(&o.stdout).expect("decode prints JSON");
    assert_eq!(value["dif_wo_hack"]["one"], Value::from(0x66), "{value}");
    assert_eq!(value["dif"]["one"], Value::from(0x66), "{value}");
    let json = tmp.join("op.json");
    std::fs::write(&json, &o.stdout).unwrap();
    let out = tmp.join("op.bin");
    let o = run(&[
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        "--opaque".as_ref(),
        opaque.as_ref(),
        json.as_os_str(),
        "-o".as_ref(),
        out.as_os_str(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let original = std::fs::read(&input).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), original[..1]);
    let o = run(&[
        "inspect".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        "--opaque".as_ref(),
        opaque.as_ref(),
        input.as_os_str(),
    ]);
    let shown = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        shown.contains("dif_wo_hack") && shown.contains("one = 102"),
        "{shown}"
    );

    // Refusals: the opaque type not given, a processor written in Rust, a malformed option.
    let custom = dir.join("formats/process_custom.ksy");
    let cases: [(&[&std::ffi::OsStr], &str); 3] = [
        (
            &[
                "decode".as_ref(),
                "--schema".as_ref(),
                schema.as_os_str(),
                input.as_os_str(),
            ],
            "opaque types (hello_world) are not registered",
        ),
        (
            &[
                "decode".as_ref(),
                "--schema".as_ref(),
                custom.as_os_str(),
                input.as_os_str(),
            ],
            "process: my_custom_fx is a processor written in Rust",
        ),
        (
            &[
                "decode".as_ref(),
                "--schema".as_ref(),
                schema.as_os_str(),
                "--opaque".as_ref(),
                "hello_world".as_ref(),
                input.as_os_str(),
            ],
            "expected NAME=FILE.ksy",
        ),
    ];
    for (args, want) in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert!(
            text(&o.stderr).contains(want),
            "{args:?}: {}",
            text(&o.stderr)
        );
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
