//! Memory bound of the streaming interpreter (`statepack_codegen::interp::stream`, behind
//! `decode --schema` and `inspect --schema`) on hostile inputs: at most 64 bytes per input
//! byte plus a fixed allowance, plus the bytes of the processed field being read.
//!
//! The interpreter reads on a thread of its own, so the allocation counter
//! (`tests/common/counting_alloc.rs`) counts every thread here ([`measure_all_threads`]);
//! this file holds a single test so that nothing else runs while it counts. The bound is
//! asserted on the peak of live bytes (the total of every allocation grows with the bytes
//! read, as each element is read and dropped).
//!
//! The inputs, each a test of its own below:
//! - a `repeat: eos` list of a struct of eight `b1` over 1 MiB (one element per byte);
//! - a `repeat: eos` list of a struct of one `u1` over 1 MiB;
//! - a 64 MiB field of zeros stored as `process: zlib` (65 KB of input);
//! - the nested zlib bomb (`tests/schemas/nested_zlib.ksy`, a 1.8 KB file whose inner stream
//!   inflates to 1 GiB): refused by the file's processed-bytes budget, by name.
//!
//! The same inputs run through the commands, as processes, in `tests/cli_memory_schema.rs`.

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::measure_all_threads;
use statepack_codegen::interp::{self, DynValue, Label, Sink};
use std::io::{self, Write};

/// Bytes of memory allowed per input byte.
const PER_BYTE: usize = 64;
/// The fixed allowance: the schema's plan, the reader's thread and buffers, error values.
const FIXED: usize = 1 << 20;

/// A sink that formats every value (as a command's output would) into a buffer it reuses,
/// and counts the events.
#[derive(Default)]
struct Formatting {
    line: Vec<u8>,
    events: usize,
}

impl Sink for Formatting {
    fn key(&mut self, label: Label) -> io::Result<()> {
        self.events += 1;
        self.line.clear();
        write!(self.line, "{label:?}")
    }
    fn open_struct(&mut self, t: &'static str) -> io::Result<()> {
        self.events += 1;
        write!(self.line, "{t}")
    }
    fn close_struct(&mut self, span: Option<(u64, u64)>) -> io::Result<()> {
        self.events += 1;
        write!(self.line, "{span:?}")
    }
    fn open_list(&mut self) -> io::Result<()> {
        self.events += 1;
        Ok(())
    }
    fn close_list(&mut self, span: (u64, u64), count: usize) -> io::Result<()> {
        self.events += 1;
        write!(self.line, "{span:?} {count}")
    }
    fn leaf(
        &mut self,
        v: &DynValue,
        span: Option<(u64, u64)>,
        bits: Option<(u64, u64)>,
    ) -> io::Result<()> {
        self.events += 1;
        self.line.clear();
        match v {
            // Written in chunks, as `decode --schema` writes a byte array's hex.
            DynValue::Bytes(b) => {
                for chunk in b.chunks(1 << 14) {
                    self.line.clear();
                    for x in chunk {
                        write!(self.line, "{x:02x}")?;
                    }
                }
                Ok(())
            }
            other => write!(self.line, "{other} {span:?} {bits:?}"),
        }
    }
    fn value(&mut self, v: &DynValue) -> io::Result<()> {
        self.events += 1;
        write!(self.line, "{v}")
    }
}

fn schema(text: &str, name: &str) -> statepack_codegen::typed::Checked {
    statepack_codegen::load_checked(text, name, std::path::Path::new(name), &[])
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
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

fn zlib_of_zeros(n: usize, prefix: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(prefix).expect("write to memory");
    let block = vec![0u8; 1 << 16];
    let mut left = n;
    while left > 0 {
        let k = left.min(block.len());
        e.write_all(&block[..k]).expect("write to memory");
        left -= k;
    }
    e.finish().expect("finish in memory")
}

const EIGHT_B1: &str = "meta:\n  id: eight_b1\nseq:\n  - id: items\n    type: flags\n    repeat: eos\ntypes:\n  flags:\n    seq:\n      - id: a\n        type: b1\n      - id: b\n        type: b1\n      - id: c\n        type: b1\n      - id: d\n        type: b1\n      - id: e\n        type: b1\n      - id: f\n        type: b1\n      - id: g\n        type: b1\n      - id: h\n        type: b1\n";

const ONE_U1: &str = "meta:\n  id: one_u1\nseq:\n  - id: items\n    type: one\n    repeat: eos\ntypes:\n  one:\n    seq:\n      - id: v\n        type: u1\n";

const ZLIB_FIELD: &str = "meta:\n  id: zlib_field\n  endian: le\nseq:\n  - id: len\n    type: u4\n  - id: body\n    size: len\n    process: zlib\n";

/// Streams `bytes` with `schema` and returns the result, the events seen and the peak of
/// live bytes while it ran.
fn streamed(
    schema: &statepack_codegen::typed::Checked,
    bytes: &[u8],
) -> (Result<(), String>, usize, usize) {
    let mut sink = Formatting::default();
    let (res, u) = measure_all_threads(|| {
        interp::stream(schema, bytes, &mut sink)
            .map(drop)
            .map_err(|e| e.to_string())
    });
    (res, sink.events, u.peak)
}

#[test]
fn hostile_inputs_stream_within_64_bytes_per_input_byte() {
    // The two lists: one element per input byte, each handed over and dropped.
    for (name, text) in [("eight b1", EIGHT_B1), ("one u1", ONE_U1)] {
        let s = schema(text, "list.ksy");
        let bytes = noise(1 << 20);
        let (res, events, peak) = streamed(&s, &bytes);
        res.unwrap_or_else(|e| panic!("{name}: {e}"));
        let bound = PER_BYTE * bytes.len() + FIXED;
        eprintln!(
            "{name} list over {} bytes: {events} events, peak {peak} bytes ({:.2} per input byte), bound {bound}",
            bytes.len(),
            peak as f64 / bytes.len() as f64
        );
        assert!(events > bytes.len(), "{name}: every element is handed over");
        assert!(peak <= bound, "{name}: peak {peak} above {bound}");
    }

    // A 64 MiB processed field: its bytes are held once while they are written (they are
    // within the file's processed-bytes budget), never as hex text.
    let s = schema(ZLIB_FIELD, "zlib_field.ksy");
    let body_len = 64 << 20;
    let z = zlib_of_zeros(body_len, &[]);
    let mut bytes = (z.len() as u32).to_le_bytes().to_vec();
    bytes.extend_from_slice(&z);
    let (res, _, peak) = streamed(&s, &bytes);
    res.expect("the 64 MiB field reads");
    // The inflated bytes grow by doubling, so their buffer is at most twice what it holds.
    let bound = PER_BYTE * bytes.len() + 2 * body_len + FIXED;
    eprintln!(
        "64 MiB zlib field ({} input bytes): peak {peak} bytes ({:.2} per inflated byte), bound {bound}",
        bytes.len(),
        peak as f64 / body_len as f64
    );
    assert!(peak <= bound, "zlib field: peak {peak} above {bound}");

    // The nested bomb: refused by the file's budget, in memory of the order of that budget.
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/nested_zlib.ksy");
    let text = std::fs::read_to_string(&path).expect("read the schema");
    let s = statepack_codegen::load_checked(&text, "nested_zlib.ksy", &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let body = zlib_of_zeros(1 << 30, &[]);
    let mut record = (body.len() as u32).to_le_bytes().to_vec();
    record.extend_from_slice(&body);
    let outer = zlib_of_zeros(0, &record);
    let mut bomb = (outer.len() as u32).to_le_bytes().to_vec();
    bomb.extend_from_slice(&outer);
    let budget = statepack_runtime::positional::processed_budget(bomb.len()) as usize;
    let (res, _, peak) = streamed(&s, &bomb);
    let message = res.expect_err("the bomb is refused");
    let bound = PER_BYTE * bomb.len() + 4 * budget + FIXED;
    eprintln!(
        "nested zlib bomb ({} bytes, budget {budget}): peak {peak} bytes, bound {bound}: {message}",
        bomb.len()
    );
    assert!(
        message.contains("processed fields produced more than"),
        "refused for another reason: {message}"
    );
    assert!(peak <= bound, "bomb: peak {peak} above {bound}");
}
