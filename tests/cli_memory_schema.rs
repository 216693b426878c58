//! The memory of `statepack decode --schema`, `inspect --schema` and `encode --schema`, as
//! processes, on hostile inputs: each command's largest resident set (`wait4`'s `ru_maxrss`,
//! per command) above that of a process that reads nothing (`statepack --version`).
//!
//! - A `repeat: eos` list of a struct of eight `b1`, and one of a struct of one `u1`, over
//!   1 MiB (one element per input byte): `decode` and `inspect` (`--max-items 0`, every
//!   line) within 64 bytes per input byte plus 1 MiB; they write as they read and keep
//!   what the schema's expressions can still read (nothing, here). `inspect` records 16
//!   bytes per line of a user type or list (24 for a list) before it prints.
//! - `encode --schema` of the one-`u1` list's JSON (28 MiB of text): within 64 bytes per
//!   byte of JSON plus 1 MiB.
//! - A 64 MiB field of zeros stored as `process: zlib` (65 KB of input): within 64 bytes
//!   per input byte plus twice the inflated bytes plus 1 MiB (the field's bytes are held
//!   once while they are written, never as hex text).
//! - The nested zlib bomb of `tests/hostile_alloc.rs` (a 1.8 KB file whose inner zlib
//!   stream inflates to 1 GiB, with `tests/schemas/nested_zlib.ksy`): refused by the file's
//!   processed-bytes budget (65,536 plus 1,032 bytes per input byte, shared by nested
//!   processed fields), in memory of the order of that budget, where one budget per reader
//!   let it reach 1 GiB.
//!
//! The same inputs are counted in the process by the allocation counter, through the
//! library's streaming reader, in `tests/interp_memory.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};

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

/// Seeded bytes (xorshift), the same on every run.
fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[path = "common/process.rs"]
mod process;

use process::Ran;

/// Runs `statepack args`, standard output to `stdout` (or nowhere), and measures it alone.
fn run(args: &[&std::ffi::OsStr], stdout: Option<&Path>) -> Ran {
    process::statepack_in(None, args, stdout)
}

struct Setup {
    dir: PathBuf,
    base: u64,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let dir = std::env::temp_dir().join(format!(
            "statepack-mem-schema-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let r = run(&["--version".as_ref()], None);
        assert_eq!(r.code, Some(0));
        Setup { dir, base: r.peak }
    }

    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    /// Runs `cmd --schema schema file [extra]`, requires `code`, and returns the memory
    /// above the base with the standard error.
    fn measure(
        &self,
        cmd: &str,
        extra: &[&str],
        schema: &Path,
        file: &Path,
        code: i32,
    ) -> (u64, String) {
        let mut args: Vec<&std::ffi::OsStr> = vec![cmd.as_ref()];
        args.extend(extra.iter().map(|a| std::ffi::OsStr::new(*a)));
        args.extend(["--schema".as_ref(), schema.as_os_str(), file.as_os_str()]);
        let r = run(&args, None);
        assert_eq!(r.code, Some(code), "{cmd} {extra:?}: {}", r.stderr);
        (r.peak.saturating_sub(self.base), r.stderr)
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const EIGHT_B1: &str = "meta:\n  id: eight_b1\nseq:\n  - id: items\n    type: flags\n    repeat: eos\ntypes:\n  flags:\n    seq:\n      - id: a\n        type: b1\n      - id: b\n        type: b1\n      - id: c\n        type: b1\n      - id: d\n        type: b1\n      - id: e\n        type: b1\n      - id: f\n        type: b1\n      - id: g\n        type: b1\n      - id: h\n        type: b1\n";

const ONE_U1: &str = "meta:\n  id: one_u1\nseq:\n  - id: items\n    type: one\n    repeat: eos\ntypes:\n  one:\n    seq:\n      - id: v\n        type: u1\n";

const ZLIB_FIELD: &str = "meta:\n  id: zlib_field\n  endian: le\nseq:\n  - id: len\n    type: u4\n  - id: body\n    size: len\n    process: zlib\n";

const MIB: u64 = 1 << 20;

#[test]
fn lists_of_one_element_per_input_byte_stay_within_64_bytes_per_byte() {
    let s = Setup::new("lists");
    let bytes = noise(1 << 20);
    let file = s.file("noise.bin", &bytes);
    let bound = 64 * bytes.len() as u64 + MIB;
    for (name, text) in [("eight_b1", EIGHT_B1), ("one_u1", ONE_U1)] {
        let schema = s.file(&format!("{name}.ksy"), text.as_bytes());
        for (cmd, extra) in [("decode", &[][..]), ("inspect", &["--max-items", "0"][..])] {
            let (mem, _) = s.measure(cmd, extra, &schema, &file, 0);
            eprintln!(
                "{cmd} --schema {name}.ksy over {} bytes: {mem} bytes above a process that reads nothing ({:.1} per input byte), bound {bound}",
                bytes.len(),
                mem as f64 / bytes.len() as f64
            );
            assert!(mem <= bound, "{cmd} {name}: {mem} bytes above {bound}");
        }
    }
    // `encode --schema` of what `decode --schema` printed for the one-u1 list.
    let schema = s.file("one_u1.ksy", ONE_U1.as_bytes());
    let json = s.dir.join("one_u1.json");
    let args: [&std::ffi::OsStr; 4] = [
        "decode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        file.as_os_str(),
    ];
    assert_eq!(run(&args, Some(&json)).code, Some(0));
    let json_len = std::fs::metadata(&json).unwrap().len();
    let out = s.dir.join("back.bin");
    let args: [&std::ffi::OsStr; 6] = [
        "encode".as_ref(),
        "--schema".as_ref(),
        schema.as_os_str(),
        json.as_os_str(),
        "--output".as_ref(),
        out.as_os_str(),
    ];
    let r = run(&args, None);
    assert_eq!(r.code, Some(0), "encode: {}", r.stderr);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        bytes,
        "encode writes the file back"
    );
    let mem = r.peak.saturating_sub(s.base);
    let bound = 64 * json_len + MIB;
    eprintln!(
        "encode --schema one_u1.ksy of {json_len} bytes of JSON: {mem} bytes above a process that reads nothing ({:.1} per JSON byte), bound {bound}",
        mem as f64 / json_len as f64
    );
    assert!(mem <= bound, "encode: {mem} bytes above {bound}");
}

#[test]
fn a_64_mib_zlib_field_is_written_without_its_text_in_memory() {
    let s = Setup::new("zlib");
    let body_len: u64 = 64 << 20;
    let z = zlib(body_len as usize, &[]);
    let mut bytes = (z.len() as u32).to_le_bytes().to_vec();
    bytes.extend_from_slice(&z);
    let file = s.file("z.bin", &bytes);
    let schema = s.file("zlib_field.ksy", ZLIB_FIELD.as_bytes());
    let bound = 64 * bytes.len() as u64 + 2 * body_len + MIB;
    for cmd in ["decode", "inspect"] {
        let (mem, _) = s.measure(cmd, &[], &schema, &file, 0);
        eprintln!(
            "{cmd} --schema of a 64 MiB zlib field ({} input bytes): {mem} bytes above a process that reads nothing, bound {bound}",
            bytes.len()
        );
        assert!(mem <= bound, "{cmd}: {mem} bytes above {bound}");
    }
}

#[test]
fn schema_commands_refuse_the_nested_zlib_bomb_within_the_files_budget() {
    let s = Setup::new("bomb");
    let bytes = bomb();
    let file = s.file("bomb.bin", &bytes);
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/nested_zlib.ksy");
    let budget = 65_536 + 1032 * bytes.len() as u64;
    // Each stream's buffer grows by doubling (twice what it holds), both levels together
    // hold at most the budget.
    let bound = 4 * budget + MIB;
    for cmd in ["decode", "inspect"] {
        let (mem, err) = s.measure(cmd, &[], &schema, &file, 1);
        assert!(
            err.contains("processed fields produced more than"),
            "{cmd}: {err}"
        );
        eprintln!(
            "{cmd} --schema of the nested zlib bomb ({} bytes, budget {budget}): {mem} bytes above a process that reads nothing, bound {bound}",
            bytes.len()
        );
        assert!(mem <= bound, "{cmd}: {mem} bytes above {bound}");
    }
}
