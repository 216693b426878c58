//! `statepack encode --format cbtrack` reads its JSON straight into the raw layer: its peak
//! memory stays within 5 bytes per byte of JSON (the text itself, the raw layer's values, the
//! written track and the JSON of the track read back, printed and reduced to its keys; about
//! 4.1 measured on this track, 3.3 before CBTK's JSON stopped carrying chunk bytes twice),
//! where a `serde_json::Value` of the document takes about 4.6 bytes per byte of
//! this JSON (32 bytes per number) and the earlier path, with a second `Value` of the track
//! read back, peaked at 10.7. The track comes back byte-identical.
//!
//! Peak memory is the command's own largest resident set (`tests/common/process.rs`). The
//! allowance adds the fixed cost of a process that reads nothing (measured here with
//! `statepack --version`).

use statepack::sim::cbtrack_match::MatchSpec;
use statepack_codecs::motion::walk::study_walk_clip;
use std::path::Path;

#[path = "common/process.rs"]
mod process;

/// Runs `statepack args` in `dir`, standard output to the file `stdout` (or nowhere); it must
/// succeed. Gives its largest resident set in bytes.
fn run(dir: &Path, args: &[&str], stdout: Option<&Path>) -> u64 {
    let r = process::statepack_in(Some(dir), args, stdout);
    assert_eq!(r.code, Some(0), "statepack {args:?} failed: {}", r.stderr);
    r.peak
}

/// Set to a folder: the test writes the track there as `t.cbtrack` and ends.
const WRITE_TO: &str = "STATEPACK_ENCODE_MEM_WRITE_TO";

#[test]
fn cbtrack_encode_stays_within_5_bytes_per_json_byte() {
    if let Some(dir) = std::env::var_os(WRITE_TO) {
        let mut spec = MatchSpec::crowd(study_walk_clip(), 12, 5400);
        spec.window_length = 900;
        let mut cur = std::io::Cursor::new(Vec::new());
        spec.write(&mut cur, |_, _| {}).unwrap();
        std::fs::write(Path::new(&dir).join("t.cbtrack"), cur.into_inner()).unwrap();
        return;
    }
    let dir = std::env::temp_dir().join(format!("statepack-encmem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A command started from this process carries over this process's resident set: the
    // track (and the crowd simulated to make it, about 30 MB) is made by another process,
    // this test started again with `WRITE_TO` set. Made here, every command (`--version`
    // included) reported those 30 MB, more than `encode` itself took.
    process::rerun_self(
        "cbtrack_encode_stays_within_5_bytes_per_json_byte",
        WRITE_TO,
        &dir,
    );
    let track = std::fs::read(dir.join("t.cbtrack")).unwrap();
    let fixed = run(&dir, &["--version"], None);
    run(&dir, &["decode", "t.cbtrack"], Some(&dir.join("t.json")));
    let json_len = std::fs::metadata(dir.join("t.json")).unwrap().len();
    let peak = run(
        &dir,
        &["encode", "--format", "cbtrack", "t.json", "-o", "u.cbtrack"],
        None,
    );
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
