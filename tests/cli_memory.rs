//! `statepack inspect`, `statepack decode` and `decode --offsets` stay within 64 bytes of memory per input byte
//! on a valid file whose structure has one field per input byte: a world snapshot of 16
//! despawn lists of 65,535 one-byte entries (1 MiB). `inspect` prints its tree while it reads
//! and keeps 8 bytes per field; `decode` writes its JSON as it serializes, `--offsets` its
//! tree as it reads.
//!
//! Peak memory is the largest resident set of the commands this test runs
//! (`getrusage(RUSAGE_CHILDREN)`); this file holds one test so no other test's commands
//! count. The allowance adds the fixed cost of a process that reads nothing (measured here
//! with `statepack --version`, since the children's peak is a maximum).

use statepack::formats::world_snapshot as ws;
use std::process::{Command, Stdio};

fn despawn_file() -> Vec<u8> {
    let mut tlv = Vec::new();
    for _ in 0..16 {
        tlv.push(1);
        tlv.extend_from_slice(&u16::MAX.to_le_bytes());
        tlv.extend(std::iter::repeat_n(5u8, usize::from(u16::MAX)));
    }
    let mut b = vec![ws::MSG_TYPE, 0];
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&7u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.extend_from_slice(&(tlv.len() as u32).to_le_bytes());
    b.extend_from_slice(&(tlv.len() as u32).to_le_bytes());
    b.extend_from_slice(&tlv);
    b
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

fn run(args: &[&str]) {
    let st = Command::new(env!("CARGO_BIN_EXE_statepack"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "statepack {args:?} failed");
}

#[test]
fn inspect_and_decode_stay_within_64_bytes_per_input_byte() {
    let bytes = despawn_file();
    assert!(
        (ws::FORMAT.decode_full)(&bytes).is_ok(),
        "the file is valid"
    );
    let dir = std::env::temp_dir().join(format!("statepack-mem-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("despawns.wsnap");
    std::fs::write(&path, &bytes).unwrap();
    let p = path.to_str().unwrap();

    run(&["--version"]);
    let fixed = children_peak_bytes();
    let budget = fixed + 64 * bytes.len() as u64;
    for args in [
        &["inspect", p][..],
        &["inspect", "--max-items", "0", p],
        &["decode", p],
        &["decode", "--offsets", p],
    ] {
        run(args);
        let peak = children_peak_bytes();
        assert!(
            peak <= budget,
            "statepack {args:?}: peak {peak} bytes, more than {budget} ({fixed} for the process, 64 per input byte of {})",
            bytes.len()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
