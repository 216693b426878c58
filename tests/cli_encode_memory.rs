//! `statepack encode --format cbtrack` reads its JSON straight into the raw layer: its peak
//! memory stays within 5 bytes per byte of JSON (the text itself, the raw layer's values, the
//! written track and the JSON of the track read back, printed and reduced to its keys; about
//! 3.3 measured), where a `serde_json::Value` of the document takes about 4.6 bytes per byte of
//! this JSON (32 bytes per number) and the earlier path, with a second `Value` of the track
//! read back, peaked at 10.7. The track comes back byte-identical.
//!
//! Peak memory is the largest resident set of the commands this test runs
//! (`getrusage(RUSAGE_CHILDREN)`); this file holds one test so no other test's commands
//! count. The allowance adds the fixed cost of a process that reads nothing (measured here
//! with `statepack --version`, which also holds what a child started by fork shares with this
//! test before it runs the tool).

use statepack::sim::cbtrack_match::MatchSpec;
use statepack_codecs::motion::walk::study_walk_clip;
use std::process::{Command, Stdio};

/// The largest resident set of any child waited for so far, in bytes.
fn children_peak_bytes() -> u64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage; RUSAGE_CHILDREN is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    assert_eq!(rc, 0, "getrusage failed");
    // Linux reports ru_maxrss in KiB.
    u.ru_maxrss as u64 * 1024
}

fn run(dir: &std::path::Path, args: &[&str], stdout: Stdio) {
    let st = Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(args)
        .current_dir(dir)
        .stdout(stdout)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "statepack {args:?} failed");
}

#[test]
fn cbtrack_encode_stays_within_5_bytes_per_json_byte() {
    let dir = std::env::temp_dir().join(format!("statepack-encmem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut spec = MatchSpec::crowd(study_walk_clip(), 12, 3600);
    spec.window_length = 900;
    let mut cur = std::io::Cursor::new(Vec::new());
    spec.write(&mut cur, |_, _| {}).unwrap();
    let track = cur.into_inner();
    std::fs::write(dir.join("t.cbtrack"), &track).unwrap();
    run(&dir, &["--version"], Stdio::null());
    let fixed = children_peak_bytes();
    let json = std::fs::File::create(dir.join("t.json")).unwrap();
    run(&dir, &["decode", "t.cbtrack"], Stdio::from(json));
    let json_len = std::fs::metadata(dir.join("t.json")).unwrap().len();
    run(
        &dir,
        &["encode", "--format", "cbtrack", "t.json", "-o", "u.cbtrack"],
        Stdio::null(),
    );
    let peak = children_peak_bytes();
    let back = std::fs::read(dir.join("u.cbtrack")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(back == track, "encode did not give the same track back");
    eprintln!(
        "track {} bytes, JSON {json_len} bytes, peak {peak} bytes ({:.2} per JSON byte over the fixed {fixed})",
        track.len(),
        peak.saturating_sub(fixed) as f64 / json_len as f64
    );
    assert!(
        json_len > 4_000_000,
        "the JSON ({json_len} bytes) must dwarf the fixed cost"
    );
    assert!(
        peak <= fixed + 5 * json_len,
        "peak {peak} bytes, over {fixed} + 5 x {json_len} JSON bytes"
    );
}
