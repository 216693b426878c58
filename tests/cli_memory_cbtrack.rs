//! `statepack decode`, `sample` and `inspect --max-items 0` of a CBTK track keep at most 64
//! bytes per input byte. `decode` and `sample` check the track one chunk at a time, keeping nothing
//! ([`statepack::formats::cbtrack::decode_all`]), then write their JSON one chunk and one
//! entry at a time, each chunk inflated, its columns read where they lie and written as they
//! are read ([`statepack::formats::cbtrack::write_json`],
//! [`statepack::formats::cbtrack::write_sample`]). A chunk inflates to at most 64 times its
//! stored bytes, so one inflated chunk and the file stay within 64 bytes per input byte
//! (the header and index come before any chunk).
//!
//! Over every CBTK allocation bomb the tests hold (`tests/hostile_formats/cbtrack.rs`), the
//! samples and the fixture track: the command's largest resident set (`wait4`'s rusage) is at
//! most the resident set of `decode` of the smallest sample, plus 64 bytes per input byte,
//! plus 1 MiB for whole pages, what the allocator keeps after a free and the code pages of
//! paths the sample does not take (an error and its message). Before, the bomb of 200,000
//! units at the chunk ratio limit (26 KB) took 44 MB over the sample with `decode` and
//! 193 MB with `sample --at 0`, and `inspect --max-items 0` 6.2 MB (8 bytes for each value's
//! line end), and its content view kept the info chunk's and the features chunk's lists
//! whole with `--max-items 0` (400,000 strings, 13 KB, took 33 MB over the sample, 100,000
//! features 3.2 MB); it now prints each item as it is read.

mod hostile_formats;

#[path = "common/process.rs"]
mod process;

/// Runs `statepack args` and gives its exit code and largest resident set in bytes.
fn run(args: &[&str]) -> (i32, u64) {
    let r = process::statepack(args);
    (r.exit(), r.peak)
}

/// Set to a folder: the test writes the files there, lists them on stdout and ends.
const WRITE_TO: &str = "STATEPACK_CBTK_MEM_WRITE_TO";

#[test]
fn decode_and_sample_of_every_cbtrack_bomb_and_track_stay_within_64_bytes_per_input_byte() {
    if let Some(dir) = std::env::var_os(WRITE_TO) {
        write_files(std::path::Path::new(&dir));
        return;
    }
    // A command started from this process reports at least this process's own peak
    // resident set (the peak carries over when it starts), so the files are made by another
    // process: this test, started again with `WRITE_TO` set.
    let dir = std::env::temp_dir().join(format!("statepack-cbtk-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let listed = process::rerun_self(
        "decode_and_sample_of_every_cbtrack_bomb_and_track_stay_within_64_bytes_per_input_byte",
        WRITE_TO,
        &dir,
    );
    let sample = dir.join("sample.cbtrack");
    let files: Vec<(String, std::path::PathBuf, u64)> = listed
        .lines()
        .filter_map(|l| {
            let mut p = l.strip_prefix("file\t")?.splitn(3, '\t');
            let (i, len, name) = (p.next()?, p.next()?, p.next()?);
            Some((
                name.to_string(),
                dir.join(format!("{i}.cbtrack")),
                len.parse().ok()?,
            ))
        })
        .collect();
    let mut most = (i64::MIN, String::new());
    // `inspect --max-items 0` prints every value of every column: its tree keeps an end per
    // list, element or type with members and none per value; its content view prints each
    // string, team, feature and entry as it is read.
    for args in [
        &["decode"][..],
        &["sample", "--at", "0"],
        &["inspect", "--max-items", "0"],
    ] {
        let command = |file: &std::path::Path| {
            let mut a = vec![args[0], file.to_str().unwrap()];
            a.extend_from_slice(&args[1..]);
            run(&a)
        };
        let (code, fixed) = command(&sample);
        assert_eq!(code, 0, "{args:?} of the smallest sample");
        for (name, path, len) in &files {
            let (code, peak) = command(path);
            assert!(code == 0 || code == 1, "{args:?} {name}: exit {code}");
            let bound = fixed + (1 << 20) + 64 * len;
            eprintln!(
                "{args:?} {name} ({len} bytes, exit {code}): peak {peak}, sample {fixed}, bound {bound}"
            );
            assert!(
                peak <= bound,
                "{args:?} of {name} ({len} bytes) took {peak} bytes resident, more than {bound} \
                 (the same command on a sample {fixed} + 1 MiB + 64 per input byte)"
            );
            let above = peak as i64 - fixed as i64 - 64 * *len as i64;
            if above > most.0 {
                most = (above, format!("{args:?} {name}"));
            }
        }
    }
    eprintln!(
        "most above the sample plus 64 x len: {} bytes ({})",
        most.0, most.1
    );
    assert!(files.len() > 15, "{} files", files.len());
    std::fs::remove_dir_all(&dir).ok();
}

/// Writes the smallest sample as `sample.cbtrack` and every bomb, sample and fixture track as
/// `<i>.cbtrack` in `dir`, listing each as `file<TAB>i<TAB>length<TAB>name` on stdout.
fn write_files(dir: &std::path::Path) {
    let f = statepack::formats::by_name("cbtrack").expect("cbtrack is registered");
    let samples = (f.samples)();
    let (_, small) = samples.iter().min_by_key(|s| s.1.len()).expect("a sample");
    std::fs::write(dir.join("sample.cbtrack"), small).unwrap();
    let files = (hostile_formats::plug(f).bombs)()
        .into_iter()
        .chain(hostile_formats::inputs(f));
    for (i, (name, bytes)) in files.enumerate() {
        std::fs::write(dir.join(format!("{i}.cbtrack")), &bytes).unwrap();
        println!("file\t{i}\t{}\t{name}", bytes.len());
    }
}
