//! `statepack inspect` of every allocation bomb the tests hold (`tests/hostile_formats`)
//! stays within what the format's decode needs (raw layer or full check, the larger; twice
//! that where `inspect` prints a content summary) plus 64 bytes per input byte: the tree
//! it prints keeps 8 bytes per printed line, and lines past `--max-items` in a list keep
//! nothing, so a zlib chunk that inflates to millions of column values costs its raw
//! decode, not a line end per value.
//!
//! The decodes' peak is counted in this process (the counting global allocator of
//! `tests/common/counting_alloc.rs`); the
//! command's peak is its largest resident set (`wait4`'s rusage), less the resident set of
//! `inspect` of the format's smallest sample file (the process, its code and its buffers).

mod hostile_formats;

use statepack::formats::FORMATS;
use std::process::{Command, Stdio};

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

/// Peak live heap bytes of this thread while `f` runs.
fn heap_peak(f: impl FnOnce()) -> usize {
    counting_alloc::measure(f).1.peak
}

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

/// This process's own peak resident set (`VmHWM`), in bytes.
fn own_peak() -> u64 {
    let st = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    st.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |k| k * 1024)
}

#[test]
fn inspect_of_every_bomb_stays_within_its_decodes_and_64_bytes_per_input_byte() {
    let dir = std::env::temp_dir().join(format!("statepack-inspect-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A child started from this process reports at least this process's peak resident set
    // (Linux carries the parent's high-water mark into the child it starts), so the
    // commands run before anything is decoded here: files first, then the commands, then
    // the raw decodes this process counts.
    struct Case {
        title: &'static str,
        name: String,
        path: std::path::PathBuf,
        len: u64,
        fixed: u64,
        peak: u64,
    }
    let mut cases = Vec::new();
    for f in FORMATS {
        let samples = (f.samples)();
        let (_, small) = samples.iter().min_by_key(|s| s.1.len()).expect("a sample");
        let sample = dir.join(format!("{}-sample.bin", f.name));
        std::fs::write(&sample, small).unwrap();
        drop(samples);
        for (i, (name, bytes)) in (hostile_formats::plug(f).bombs)().into_iter().enumerate() {
            let path = dir.join(format!("{}-{i}.bin", f.name));
            std::fs::write(&path, &bytes).unwrap();
            cases.push(Case {
                title: f.title,
                name,
                path,
                len: bytes.len() as u64,
                fixed: 0,
                peak: 0,
            });
        }
    }
    eprintln!(
        "this process's peak before the commands: {} bytes",
        own_peak()
    );
    for c in &mut cases {
        let f = FORMATS.iter().find(|f| f.title == c.title).unwrap();
        let sample = dir.join(format!("{}-sample.bin", f.name));
        let (code, fixed) = run(&["inspect", sample.to_str().unwrap()]);
        assert_eq!(code, 0, "{}: inspect of its smallest sample", f.title);
        let (code, peak) = run(&["inspect", c.path.to_str().unwrap()]);
        assert!(
            code == 0 || code == 1,
            "{}: {}: exit {code}",
            c.title,
            c.name
        );
        (c.fixed, c.peak) = (fixed, peak);
    }
    for c in &cases {
        let f = FORMATS.iter().find(|f| f.title == c.title).unwrap();
        let bytes = std::fs::read(&c.path).unwrap();
        // `inspect` reads the file's raw layer and checks it in full, one after the other.
        let raw = heap_peak(|| {
            let _ = (f.decode_raw)(&bytes);
        })
        .max(heap_peak(|| {
            let _ = (f.decode_full)(&bytes);
        })) as u64;
        // `inspect` holds one decode at a time, except the content summary of CBTK and
        // clips, which keeps a decoded chunk beside its columns: twice the larger decode.
        // A resident set counts whole pages and what the allocator keeps after a free: an
        // eighth more covers both; 1 MiB covers the code pages of paths the sample does
        // not take (an error and its message).
        let bound = c.fixed + (1 << 20) + 2 * raw + raw / 4 + 64 * c.len;
        eprintln!(
            "{}: {} ({} bytes): inspect peak {}, decode heap {raw}, bound {bound}",
            c.title, c.name, c.len, c.peak
        );
        assert!(
            c.peak <= bound,
            "{}: inspect of {} ({} bytes) took {} bytes resident, more than {bound} \
             (inspect of a sample {} + 1 MiB + 2.25 x decode {raw} + 64 per input byte)",
            c.title,
            c.name,
            c.len,
            c.peak,
            c.fixed
        );
    }
    assert!(cases.len() > 30, "{} bombs", cases.len());
    std::fs::remove_dir_all(&dir).ok();
}
