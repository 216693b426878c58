//! `statepack inspect`, `statepack decode` and `decode --offsets` stay within 64 bytes of memory per input byte
//! on a valid file whose structure has one field per input byte: a world snapshot of 16
//! despawn lists of 65,535 one-byte entries (1 MiB). `inspect` prints its tree while it reads
//! and keeps 8 bytes per field with members (none per value); `decode` writes its JSON as it serializes, `--offsets` its
//! tree as it reads.
//!
//! Peak memory is each command's own largest resident set (`tests/common/process.rs`). The
//! allowance adds the fixed cost of a process that reads nothing (measured here with
//! `statepack --version`).

use statepack::formats::world_snapshot as ws;

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

#[path = "common/process.rs"]
mod process;

/// Runs `statepack args`, which must succeed, and gives its largest resident set in bytes.
fn run(args: &[&str]) -> u64 {
    let r = process::statepack(args);
    assert_eq!(r.code, Some(0), "statepack {args:?} failed: {}", r.stderr);
    r.peak
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

    let fixed = run(&["--version"]);
    let budget = fixed + 64 * bytes.len() as u64;
    for args in [
        &["inspect", p][..],
        &["inspect", "--max-items", "0", p],
        &["decode", p],
        &["decode", "--offsets", p],
    ] {
        let peak = run(args);
        assert!(
            peak <= budget,
            "statepack {args:?}: peak {peak} bytes, more than {budget} ({fixed} for the process, 64 per input byte of {})",
            bytes.len()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}
