//! `statepack inspect` of every allocation bomb the tests hold (`tests/hostile_formats`)
//! stays within what the format's decode needs (raw layer or full check, the larger; twice
//! that where `inspect` prints a content summary) plus 64 bytes per input byte: the tree
//! it prints keeps 8 bytes per printed line of a field with members, and lines past `--max-items` in a list keep
//! nothing, so a zlib chunk that inflates to millions of column values costs its raw
//! decode, not a line end per value. CBTK is held tighter, to 64 bytes per input byte and
//! nothing for its decode: its tree is read one chunk at a time
//! (`cbtrack::decode_events`), as its full check and content summary are.
//!
//! The decodes' peak is counted in this process (the counting global allocator of
//! `tests/common/counting_alloc.rs`); the
//! command's peak is its largest resident set (`wait4`'s rusage), less the resident set of
//! `inspect` of the format's smallest sample file (the process, its code and its buffers);
//! each is run three times, the bomb's smallest peak and the sample's largest are kept.

mod hostile_formats;

use statepack::formats::FORMATS;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

/// Peak live heap bytes of this thread while `f` runs.
fn heap_peak(f: impl FnOnce()) -> usize {
    counting_alloc::measure(f).1.peak
}

#[path = "common/process.rs"]
mod process;

/// Runs `statepack args` and gives its exit code and largest resident set in bytes.
fn run(args: &[&str]) -> (i32, u64) {
    let r = process::statepack(args);
    (r.exit(), r.peak)
}

/// This process's own peak resident set (`VmHWM`), in bytes.
fn own_peak() -> u64 {
    let st = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    st.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |k| k * 1024)
}

/// Set to a folder: the test writes the files there, lists them on stdout and ends.
const WRITE_TO: &str = "STATEPACK_INSPECT_MEM_WRITE_TO";

/// Writes each format's smallest sample as `<format>-sample.bin` and its bombs as
/// `<format>-<i>.bin` in `dir`, listing each bomb as `bomb<TAB>format<TAB>i<TAB>name`.
fn write_files(dir: &std::path::Path) {
    for f in FORMATS {
        let samples = (f.samples)();
        let (_, small) = samples.iter().min_by_key(|s| s.1.len()).expect("a sample");
        std::fs::write(dir.join(format!("{}-sample.bin", f.name)), small).unwrap();
        drop(samples);
        for (i, (name, bytes)) in (hostile_formats::plug(f).bombs)().into_iter().enumerate() {
            std::fs::write(dir.join(format!("{}-{i}.bin", f.name)), &bytes).unwrap();
            println!("bomb\t{}\t{i}\t{name}", f.name);
        }
    }
}

#[test]
fn inspect_of_every_bomb_stays_within_its_decodes_and_64_bytes_per_input_byte() {
    if let Some(dir) = std::env::var_os(WRITE_TO) {
        write_files(std::path::Path::new(&dir));
        return;
    }
    let dir = std::env::temp_dir().join(format!("statepack-inspect-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A child started from this process reports at least this process's peak resident set
    // (the peak carries over when it starts), so the files are made by another process (this
    // test, started again with `WRITE_TO` set), the commands run next, and only then are
    // the raw decodes counted here.
    let listed = process::rerun_self(
        "inspect_of_every_bomb_stays_within_its_decodes_and_64_bytes_per_input_byte",
        WRITE_TO,
        &dir,
    );
    struct Case {
        title: &'static str,
        name: String,
        path: std::path::PathBuf,
        len: u64,
        fixed: u64,
        peak: u64,
    }
    let mut cases = Vec::new();
    for l in listed.lines() {
        let Some(rest) = l.strip_prefix("bomb\t") else {
            continue;
        };
        let mut p = rest.splitn(3, '\t');
        let (format, i, name) = (p.next().unwrap(), p.next().unwrap(), p.next().unwrap());
        let f = FORMATS.iter().find(|f| f.name == format).unwrap();
        let path = dir.join(format!("{format}-{i}.bin"));
        let len = std::fs::metadata(&path).unwrap().len();
        cases.push(Case {
            title: f.title,
            name: name.to_string(),
            path,
            len,
            fixed: 0,
            peak: 0,
        });
    }
    eprintln!(
        "this process's peak before the commands: {} bytes",
        own_peak()
    );
    // The resident set of one command varies from run to run by up to about 1 MB (seen:
    // 8.6 to 11.0 MB for files refused at their header): each command runs `RUNS` times,
    // the sample's largest peak and the bomb's smallest are compared.
    const RUNS: usize = 3;
    for c in &mut cases {
        let f = FORMATS.iter().find(|f| f.title == c.title).unwrap();
        let sample = dir.join(format!("{}-sample.bin", f.name));
        let (mut fixed, mut peak) = (0, u64::MAX);
        for _ in 0..RUNS {
            let (code, p) = run(&["inspect", sample.to_str().unwrap()]);
            assert_eq!(code, 0, "{}: inspect of its smallest sample", f.title);
            fixed = fixed.max(p);
            let (code, p) = run(&["inspect", c.path.to_str().unwrap()]);
            assert!(
                code == 0 || code == 1,
                "{}: {}: exit {code}",
                c.title,
                c.name
            );
            peak = peak.min(p);
        }
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
        // CBTK reads its tree, its full check and its content summary one chunk at a time:
        // 64 bytes per input byte (one inflated chunk is at most 64 times its stored
        // bytes) and the same allowance, whatever the root type's decode would hold.
        let bound = if f.name == "cbtrack" {
            c.fixed + (1 << 20) + 64 * c.len
        } else {
            c.fixed + (1 << 20) + 2 * raw + raw / 4 + 64 * c.len
        };
        eprintln!(
            "{}: {} ({} bytes): inspect peak {}, decode heap {raw}, bound {bound}",
            c.title, c.name, c.len, c.peak
        );
        assert!(
            c.peak <= bound,
            "{}: inspect of {} ({} bytes) took {} bytes resident, more than {bound} \
             (inspect of a sample {} + 1 MiB + 64 per input byte, + 2.25 x decode {raw} \
             but for CBTK)",
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
