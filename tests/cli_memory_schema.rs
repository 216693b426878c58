//! `statepack decode --schema` and `inspect --schema` on the nested zlib bomb of
//! `tests/hostile_alloc.rs` (a 1.7 KB file whose inner zlib stream inflates to 1 GiB, with
//! the test schema `tests/schemas/nested_zlib.ksy`): both refuse it by the file's
//! processed-bytes budget (65,536 plus 1,032 bytes per input byte, shared by nested
//! processed fields) in memory of the order of that budget, where one budget per reader let
//! it reach 1 GiB. The interpreter reads on a thread of its own, which the in-process
//! allocation counter of `hostile_alloc` does not see, so the bound is checked here on the
//! process: the largest resident set of the commands (`getrusage(RUSAGE_CHILDREN)`; this
//! file holds one test so no other test's commands count), above the fixed cost of a
//! process that reads nothing (`statepack --version`).

use std::io::Write;
use std::process::{Command, Stdio};

fn zlib(data_len: usize, prefix: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(prefix).unwrap();
    let block = vec![0u8; 1 << 16];
    let mut left = data_len;
    while left > 0 {
        let k = left.min(block.len());
        e.write_all(&block[..k]).unwrap();
        left -= k;
    }
    e.finish().unwrap()
}

fn bomb() -> Vec<u8> {
    let body = zlib(1 << 30, &[]);
    let mut record = (body.len() as u32).to_le_bytes().to_vec();
    record.extend_from_slice(&body);
    let outer = zlib(0, &record);
    let mut file = (outer.len() as u32).to_le_bytes().to_vec();
    file.extend_from_slice(&outer);
    file
}

/// The largest resident set of any child waited for so far, in bytes.
fn children_peak_bytes() -> u64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a valid, writable rusage; RUSAGE_CHILDREN is a valid `who`.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) };
    assert_eq!(rc, 0, "getrusage failed");
    // Linux reports ru_maxrss in KiB.
    u.ru_maxrss as u64 * 1024
}

#[test]
fn schema_commands_refuse_the_nested_zlib_bomb_within_the_files_budget() {
    let bytes = bomb();
    let dir = std::env::temp_dir().join(format!("statepack-mem-schema-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bomb.bin");
    std::fs::write(&file, &bytes).unwrap();
    let schema =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/nested_zlib.ksy");
    let exe = env!("CARGO_BIN_EXE_statepack");
    let st = Command::new(exe)
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success());
    let base = children_peak_bytes();
    let budget = 65_536 + 1032 * bytes.len() as u64;
    for cmd in ["decode", "inspect"] {
        let o = Command::new(exe)
            .args([cmd, "--schema"])
            .arg(&schema)
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{cmd} refuses the bomb");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("processed fields produced more than"),
            "{cmd}: {err}"
        );
    }
    let peak = children_peak_bytes();
    let _ = std::fs::remove_dir_all(&dir);
    // Each stream's buffer grows by doubling (twice what it holds), both levels together
    // hold at most the budget, and the interpreter's tree of a refused file is gone.
    let bound = base + 4 * budget + (1 << 20);
    eprintln!(
        "decode and inspect --schema of the nested zlib bomb ({} bytes, budget {budget}): peak {peak} bytes resident, process base {base}, bound {bound}",
        bytes.len()
    );
    assert!(peak <= bound, "peak {peak} bytes above {bound}");
}
