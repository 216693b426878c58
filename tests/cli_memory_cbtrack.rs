//! `statepack decode` of a CBTK track keeps at most 64 bytes per input byte: it checks the
//! track one chunk at a time, keeping nothing ([`statepack::formats::cbtrack::decode_all`]),
//! then writes the raw layer's JSON one chunk at a time, each chunk inflated, its columns
//! read where they lie and written as they are read
//! ([`statepack::formats::cbtrack::write_json`]). A chunk inflates to at most 64 times its
//! stored bytes, so one inflated chunk and the file stay within 64 bytes per input byte
//! (the header and index come before any chunk).
//!
//! Over every CBTK allocation bomb the tests hold (`tests/hostile_formats/cbtrack.rs`), the
//! samples and the fixture track: the command's largest resident set (`wait4`'s rusage) is at
//! most the resident set of `decode` of the smallest sample, plus 64 bytes per input byte,
//! plus 1 MiB for whole pages, what the allocator keeps after a free and the code pages of
//! paths the sample does not take (an error and its message). Before, the bomb of 200,000
//! units at the chunk ratio limit (26 KB) took 44 MB over the sample.

mod hostile_formats;

use std::process::{Command, Stdio};

/// Runs `statepack args` and gives its exit code and largest resident set in bytes.
fn run(args: &[&str]) -> (i32, u64) {
    let child = Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut status = 0;
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our unwaited child; `status` and `u` are valid and writable.
    let rc = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut u) };
    assert_eq!(rc, child.id() as libc::pid_t, "wait4 failed");
    // Linux reports ru_maxrss in KiB.
    (libc::WEXITSTATUS(status), u.ru_maxrss as u64 * 1024)
}

#[test]
fn decode_of_every_cbtrack_bomb_and_track_stays_within_64_bytes_per_input_byte() {
    let f = statepack::formats::by_name("cbtrack").expect("cbtrack is registered");
    let dir = std::env::temp_dir().join(format!("statepack-cbtk-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let samples = (f.samples)();
    let (_, small) = samples.iter().min_by_key(|s| s.1.len()).expect("a sample");
    let sample = dir.join("sample.cbtrack");
    std::fs::write(&sample, small).unwrap();
    drop(samples);
    let files: Vec<(String, std::path::PathBuf, u64)> = (hostile_formats::plug(f).bombs)()
        .into_iter()
        .chain(hostile_formats::inputs(f))
        .enumerate()
        .map(|(i, (name, bytes))| {
            let path = dir.join(format!("{i}.cbtrack"));
            std::fs::write(&path, &bytes).unwrap();
            (name, path, bytes.len() as u64)
        })
        .collect();
    let mut most = (i64::MIN, String::new());
    for (name, path, len) in &files {
        let (code, fixed) = run(&["decode", sample.to_str().unwrap()]);
        assert_eq!(code, 0, "decode of the smallest sample");
        let (code, peak) = run(&["decode", path.to_str().unwrap()]);
        assert!(code == 0 || code == 1, "{name}: exit {code}");
        let bound = fixed + (1 << 20) + 64 * len;
        eprintln!(
            "decode {name} ({len} bytes, exit {code}): peak {peak}, sample {fixed}, bound {bound}"
        );
        assert!(
            peak <= bound,
            "decode of {name} ({len} bytes) took {peak} bytes resident, more than {bound} \
             (decode of a sample {fixed} + 1 MiB + 64 per input byte)"
        );
        let above = peak as i64 - fixed as i64 - 64 * *len as i64;
        if above > most.0 {
            most = (above, name.clone());
        }
    }
    eprintln!(
        "decode: most above the sample plus 64 x len: {} bytes ({})",
        most.0, most.1
    );
    assert!(files.len() > 15, "{} files", files.len());
    std::fs::remove_dir_all(&dir).ok();
}
