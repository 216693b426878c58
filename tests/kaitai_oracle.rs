//! An independent oracle: Kaitai Struct's official compiler (npm `kaitai-struct-compiler`,
//! pinned in `oracle/package-lock.json`) compiles every `schema/*.ksy` to JavaScript, and the
//! parsers it generates read the same files as our generated readers. Both must agree on every
//! field and list element: its start and end byte offset and, for leaves, its value (integers
//! exactly, floats by bit pattern, strings, bytes, enum integers and names).
//!
//! The Kaitai side runs in `oracle/kaitai_trace.js` (Node.js); `npm ci` installs the pinned
//! packages into `oracle/node_modules` when they are missing or older than the lock file.
//! Without `node`/`npm` the tests print why they skipped, except under `CI=true`, where that is
//! a failure. See `docs/oracle.md`.
//!
//! A format joins by being in [`statepack::formats::FORMATS`]: its `samples()` and seeded
//! mutations of them that still decode are its corpus. Files a format's writers make from
//! real input, or random valid files, go in the [`EXTRAS`] table. The feature schemas of
//! `tests/schemas/` are compiled too, and those in [`FEATURE_SCHEMAS`] read, so that every
//! construct the generator supports is checked, not only those today's formats use.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};
use statepack::formats::{FormatSpec, TracedDecode, FORMATS};
use statepack_runtime::io::{TraceNode, TraceValue};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

/// Extra corpus files per format (by `FormatSpec::name`), beyond its `samples()`.
const EXTRAS: &[(&str, MakeFiles)] = &[
    ("snap", snap_extras),
    ("rply", rply_extras),
    ("cbtrack", cbtrack_extras),
    ("wsnap", wsnap_extras),
    ("study-tracks", study_tracks_extras),
    ("anim-clip", anim_clip_extras),
];

/// Makes corpus files: (name, bytes).
type MakeFiles = fn() -> Vec<(String, Vec<u8>)>;

/// Seeded mutants of each format's samples that still decode, added to its corpus.
const MUTANTS_PER_FORMAT: usize = 24;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn oracle_dir() -> PathBuf {
    root().join("oracle")
}

fn under_ci() -> bool {
    std::env::var("CI")
        .map(|v| v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"))
        .unwrap_or(false)
}

// ---------------------------------------------------------------------------------------
// Setup: Node.js and the pinned packages

/// 64-bit FNV-1a: a stamp of the lock file's exact bytes (not a security measure).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn tool_version(tool: &str) -> Option<String> {
    let out = Command::new(tool).arg("--version").output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

static SETUP: Mutex<Option<bool>> = Mutex::new(None);

/// True when the oracle can run: `node` and `npm` exist and `oracle/node_modules` matches the
/// lock (installed with `npm ci` when missing or stale). False after printing why it skipped;
/// under CI a missing tool panics instead.
fn oracle_ready() -> bool {
    let mut state = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(ready) = *state {
        return ready;
    }
    let ready = setup();
    *state = Some(ready);
    ready
}

fn setup() -> bool {
    let (node, npm) = (tool_version("node"), tool_version("npm"));
    let (Some(node), Some(npm)) = (node, npm) else {
        let msg = "the Kaitai oracle needs `node` and `npm` (Node.js 18 or newer) on PATH";
        if under_ci() {
            panic!("{msg}; under CI the oracle must run");
        }
        eprintln!("skipped: {msg}");
        return false;
    };
    let dir = oracle_dir();
    let lock = std::fs::read(dir.join("package-lock.json")).expect("oracle/package-lock.json");
    let manifest = std::fs::read(dir.join("package.json")).expect("oracle/package.json");
    let stamp = format!("{:016x} {:016x}\n", fnv1a(&lock), fnv1a(&manifest));
    let stamp_path = dir.join("node_modules").join(".statepack-stamp");
    let current = std::fs::read_to_string(&stamp_path).ok();
    if current.as_deref() != Some(stamp.as_str()) {
        eprintln!("oracle: node {node}, npm {npm}: running `npm ci` in oracle/");
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir)
            .output()
            .expect("run npm ci");
        assert!(
            out.status.success(),
            "`npm ci` in oracle/ failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(&stamp_path, &stamp).expect("write the install stamp");
    }
    true
}

/// Runs `oracle/kaitai_trace.js --batch` on a request and returns its answer.
fn kaitai(request: &Value) -> Value {
    let mut child = Command::new("node")
        .arg(oracle_dir().join("kaitai_trace.js"))
        .arg("--batch")
        .current_dir(oracle_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start node");
    let body = serde_json::to_vec(request).expect("request JSON");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(&body));
    let out = child.wait_with_output().expect("wait for node");
    writer
        .join()
        .expect("writer thread")
        .expect("write request");
    assert!(
        out.status.success(),
        "oracle/kaitai_trace.js failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the oracle's answer is JSON")
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

/// The `.ksy` files of a folder of the project, sorted.
fn schema_files(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .expect("the schema folder")
        .map(|e| e.expect("a schema folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ksy"))
        .collect();
    v.sort();
    v
}

fn schema_path(f: &FormatSpec) -> PathBuf {
    root().join("schema").join(format!("{}.ksy", f.schema))
}

// ---------------------------------------------------------------------------------------
// Comparison

/// Kaitai's name for a field in generated JavaScript: `len_map_name` -> `lenMapName`.
fn kaitai_name(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for (i, part) in id.split('_').enumerate() {
        let mut cs = part.chars();
        match (i, cs.next()) {
            (0, Some(c)) => {
                out.push(c);
                out.extend(cs);
            }
            (_, Some(c)) => {
                out.extend(c.to_uppercase());
                out.extend(cs);
            }
            (_, None) => {}
        }
    }
    out
}

/// An f32 widened to f64 as JavaScript's `DataView.getFloat32` does: exact for every value;
/// a NaN keeps its sign and payload and comes out quiet (a double cannot say whether the
/// float's NaN was signalling, see docs/oracle.md).
fn widen_f32_bits(bits: u32) -> u64 {
    let f = f32::from_bits(bits);
    if f.is_nan() {
        let sign = u64::from(bits >> 31) << 63;
        let payload = u64::from(bits & 0x007f_ffff) | 0x0040_0000;
        sign | (0x7ff << 52) | (payload << 29)
    } else {
        f64::from(f).to_bits()
    }
}

/// Figures for one file (or a sum of files).
#[derive(Default, Debug, Clone, Copy)]
struct Counts {
    /// Nodes (fields and list elements) whose start and end offsets were compared.
    nodes: usize,
    /// Leaf values compared.
    values: usize,
    /// Enum values whose name was compared too.
    enum_names: usize,
    /// 64-bit integers beyond 2^53, which JavaScript numbers hold rounded: compared with our
    /// value rounded the same way.
    rounded: usize,
    /// Negative `s8` values that the Kaitai JavaScript runtime 0.11 misreads (see
    /// [`kaitai_js_s8`]): compared with the value its formula gives.
    s8_runtime_defect: usize,
}

impl Counts {
    fn add(&mut self, o: Counts) {
        self.nodes += o.nodes;
        self.values += o.values;
        self.enum_names += o.enum_names;
        self.rounded += o.rounded;
        self.s8_runtime_defect += o.s8_runtime_defect;
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} fields and elements (offsets), {} values ({} enum names) agree",
            self.nodes, self.values, self.enum_names
        )?;
        if self.rounded > 0 {
            write!(
                f,
                "; {} 64-bit values beyond 2^53 compared rounded",
                self.rounded
            )?;
        }
        if self.s8_runtime_defect > 0 {
            write!(
                f,
                "; {} negative s8 values misread by Kaitai's JavaScript runtime",
                self.s8_runtime_defect
            )?;
        }
        Ok(())
    }
}

/// What `KaitaiStream.readS8le`/`readS8be` of the JavaScript runtime 0.11.0 return for a
/// negative `v`: the formula `-(2^32 * (hi ^ 0xffffffff) + (lo ^ 0xffffffff)) - 1` with
/// JavaScript's 32-bit signed `^`, which goes wrong when the low word's top bit is clear
/// (`-2^32` reads as `0`). The runtime's own pull request #16 proposes the fix.
fn kaitai_js_s8(v: i64) -> f64 {
    let bits = v as u64;
    let (hi, lo) = ((bits >> 32) as u32, bits as u32);
    let x = |w: u32| f64::from(!(w as i32));
    -(4_294_967_296.0 * x(hi) + x(lo)) - 1.0
}

/// How a value matched.
enum Match {
    /// Exactly.
    Exact,
    /// An enum: its integer exactly, and its name.
    EnumName,
    /// A 64-bit integer beyond 2^53, rounded as JavaScript rounds it.
    Rounded,
    /// A negative `s8` as the Kaitai JavaScript runtime misreads it.
    S8RuntimeDefect,
}

/// Compares our value of a leaf `width` bytes wide with Kaitai's (`num`: the bits of its
/// JavaScript number, when it is one).
fn compare_value(
    width: u64,
    ours: &TraceValue,
    theirs: &Value,
    num: Option<u64>,
) -> Result<Match, String> {
    let int = |v: i128| -> Result<Match, String> {
        let Some(bits) = num else {
            return Err(format!("we read the integer {v}, Kaitai reports {theirs}"));
        };
        // JavaScript numbers are doubles: exact up to 2^53, rounded to nearest beyond.
        if bits == (v as f64).to_bits() {
            return Ok(if v.unsigned_abs() > 1 << 53 {
                Match::Rounded
            } else {
                Match::Exact
            });
        }
        if width == 8 && v < 0 && bits == kaitai_js_s8(v as i64).to_bits() {
            return Ok(Match::S8RuntimeDefect);
        }
        Err(format!(
            "we read {v}, Kaitai reads {}",
            f64::from_bits(bits)
        ))
    };
    match ours {
        TraceValue::Int(v) => int(*v),
        // Kaitai reads the stored code of an offset-binary field.
        TraceValue::Coded { code, .. } => int(i128::from(*code)),
        TraceValue::Enum { name, value } => {
            let m = int(*value)?;
            let theirs_name = theirs.get("enum").and_then(Value::as_str);
            // Kaitai's JavaScript enum constants are the schema names in upper case.
            if theirs_name != Some(name.to_uppercase().as_str()) {
                return Err(format!(
                    "we read {name} ({value}), Kaitai's enum name is {theirs_name:?}"
                ));
            }
            Ok(match m {
                Match::Exact => Match::EnumName,
                other => other,
            })
        }
        TraceValue::F32(f) => match num {
            Some(bits) if bits == widen_f32_bits(f.to_bits()) => Ok(Match::Exact),
            _ => Err(format!(
                "we read the f32 {f:?} ({:#010x}), Kaitai reports {theirs}",
                f.to_bits()
            )),
        },
        TraceValue::F64(f) => {
            let ok = match num {
                Some(bits) if f.is_nan() => {
                    // Same sign and payload; the quiet bit may differ (see widen_f32_bits).
                    let quiet = 1u64 << 51;
                    f64::from_bits(bits).is_nan() && (bits | quiet) == (f.to_bits() | quiet)
                }
                Some(bits) => bits == f.to_bits(),
                None => false,
            };
            if ok {
                Ok(Match::Exact)
            } else {
                Err(format!("we read the f64 {f:?}, Kaitai reports {theirs}"))
            }
        }
        TraceValue::Bool(b) => match theirs.get("bool").and_then(Value::as_bool) {
            Some(t) if t == *b => Ok(Match::Exact),
            _ => Err(format!("we read the bit {b}, Kaitai reports {theirs}")),
        },
        TraceValue::Str(s) => match theirs.get("str").and_then(Value::as_str) {
            Some(t) if t == s => Ok(Match::Exact),
            _ => Err(format!("we read {s:?}, Kaitai reports {theirs}")),
        },
        TraceValue::Bytes(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            match theirs.get("bytes").and_then(Value::as_str) {
                Some(t) if t == hex => Ok(Match::Exact),
                _ => Err(format!("we read bytes {hex}, Kaitai reports {theirs}")),
            }
        }
    }
}

struct Cmp<'a> {
    counts: Counts,
    problems: Vec<String>,
    file: &'a str,
}

impl Cmp<'_> {
    fn problem(&mut self, path: &str, what: String) {
        if self.problems.len() < 20 {
            self.problems.push(format!("{}: {path}: {what}", self.file));
        } else if self.problems.len() == 20 {
            self.problems
                .push(format!("{}: ... more disagreements not shown", self.file));
        }
    }

    /// Compares a leaf's value; `width` is its size in bytes.
    fn value(&mut self, path: &str, width: u64, ours: &TraceValue, theirs: Option<&Value>) {
        let Some(theirs) = theirs else {
            return self.problem(path, format!("we read {ours}, Kaitai reports no value"));
        };
        let num = theirs
            .get("num")
            .and_then(Value::as_str)
            .and_then(|h| u64::from_str_radix(h, 16).ok());
        match compare_value(width, ours, theirs, num) {
            Ok(m) => {
                self.counts.values += 1;
                match m {
                    Match::Exact => {}
                    Match::EnumName => self.counts.enum_names += 1,
                    Match::Rounded => self.counts.rounded += 1,
                    Match::S8RuntimeDefect => self.counts.s8_runtime_defect += 1,
                }
            }
            Err(e) => self.problem(path, e),
        }
    }

    fn node(&mut self, path: &str, ours: &TraceNode, theirs: &Value) {
        let start = theirs.get("start").and_then(Value::as_u64);
        let end = theirs.get("end").and_then(Value::as_u64);
        if start != Some(ours.start) || end != Some(ours.end) {
            self.problem(
                path,
                format!(
                    "we read bytes {}..{}, Kaitai reads {}..{}",
                    ours.start,
                    ours.end,
                    start.map_or("?".into(), |v| v.to_string()),
                    end.map_or("?".into(), |v| v.to_string())
                ),
            );
        } else {
            self.counts.nodes += 1;
        }
        match (&ours.typed, theirs.get("value")) {
            (Some(v), t) => self.value(path, ours.end - ours.start, v, t),
            (None, Some(t)) => {
                self.problem(path, format!("Kaitai reads the value {t}, we read none"))
            }
            (None, None) => {}
        }
        let empty = Vec::new();
        let theirs_children = theirs
            .get("children")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        let name_of = |v: &Value| {
            v.get("name")
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_owned()
        };
        // Kaitai's tree lists `seq` fields in reading order and positional instances in the
        // order they were first read (after the `seq`, see `oracle/kaitai_trace.js`), while
        // ours reads an instance just before the first field that uses it: a child is
        // matched by name, and fields of the same kind keep their order.
        let mut used = vec![false; theirs_children.len()];
        for ours_child in ours.children.iter() {
            let child_path = if ours_child.name.starts_with('[') {
                format!("{path}{}", ours_child.name)
            } else if path.is_empty() {
                ours_child.name.clone()
            } else {
                format!("{path}.{}", ours_child.name)
            };
            let want = if ours_child.name.starts_with('[') {
                ours_child.name.clone()
            } else {
                kaitai_name(&ours_child.name)
            };
            let found = theirs_children
                .iter()
                .enumerate()
                .position(|(j, t)| !used[j] && name_of(t) == want);
            match found {
                Some(j) => {
                    used[j] = true;
                    self.node(&child_path, ours_child, &theirs_children[j]);
                }
                None => return self.problem(&child_path, "Kaitai has no such field here".into()),
            }
        }
        let extra: Vec<String> = theirs_children
            .iter()
            .zip(&used)
            .filter(|(_, u)| !**u)
            .map(|(t, _)| name_of(t))
            .collect();
        if !extra.is_empty() {
            self.problem(path, format!("Kaitai reads more: {}", extra.join(", ")));
        }
    }
}

/// Compares our traced decode of `bytes` with Kaitai's tree: the counts, or the disagreements.
fn compare(file: &str, ours: &TraceNode, theirs: &Value) -> Result<Counts, Vec<String>> {
    let mut c = Cmp {
        counts: Counts::default(),
        problems: Vec::new(),
        file,
    };
    c.node("", ours, theirs);
    if c.problems.is_empty() {
        Ok(c.counts)
    } else {
        Err(c.problems)
    }
}

// ---------------------------------------------------------------------------------------
// Corpus

/// A small seeded generator (xorshift64*), so the corpus is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Seeded mutations of the format's samples (one to four bytes replaced) that its raw
/// decoder still accepts: valid files with values no writer chose.
fn mutants(
    seed_name: &str,
    decodes: impl Fn(&[u8]) -> bool,
    samples: &[(String, Vec<u8>)],
) -> Vec<(String, Vec<u8>)> {
    let mut rng = Rng(0x5eed_0f0a_c1e5 ^ fnv1a(seed_name.as_bytes()));
    let mut out = Vec::new();
    // Small samples only, when there are some: a mutant of a large file adds little but time.
    let small: Vec<&(String, Vec<u8>)> = samples
        .iter()
        .filter(|(_, b)| !b.is_empty() && b.len() <= 16 * 1024)
        .collect();
    let candidates = if small.is_empty() {
        samples.iter().filter(|(_, b)| !b.is_empty()).collect()
    } else {
        small
    };
    if candidates.is_empty() {
        return out;
    }
    for attempt in 0..MUTANTS_PER_FORMAT * 40 {
        if out.len() == MUTANTS_PER_FORMAT {
            break;
        }
        let (name, bytes) = candidates[attempt % candidates.len()];
        let mut b = bytes.clone();
        let flips = 1 + rng.below(4);
        for _ in 0..flips {
            let at = rng.below(b.len());
            b[at] = rng.next() as u8;
        }
        if b != *bytes && decodes(&b) {
            out.push((format!("{name}~mutant{}", out.len()), b));
        }
    }
    out
}

fn corpus(f: &FormatSpec) -> Vec<(String, Vec<u8>)> {
    let mut files = (f.samples)();
    let extra: Vec<_> = EXTRAS
        .iter()
        .filter(|(name, _)| *name == f.name)
        .flat_map(|(_, make)| make())
        .collect();
    let m = mutants(f.name, |b| (f.decode_raw)(b).is_ok(), &files);
    files.extend(extra);
    files.extend(m);
    files
}

/// RPLY: the CMU walk as a crowd (4 walkers x 300 ticks, keyframes every 100, with their
/// rig snapshots), the same with zero thresholds and every tick a keyframe (every transform a
/// full XFORM), and raw files with special floats in every f32/f64 field the op stream has.
fn rply_extras() -> Vec<(String, Vec<u8>)> {
    use statepack::sim::rply_crowd::{record_crowd, CrowdOptions};
    use statepack_codecs::rply_xform::Thresholds;
    let mut out = Vec::new();
    if let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") {
        let clip = statepack_codecs::motion::load_motion_file(&path).expect("read the walk");
        let mut opts = CrowdOptions {
            characters: 4,
            ticks: 300,
            keyframe_every: 100,
            ..CrowdOptions::default()
        };
        let c = record_crowd(&clip, &opts).expect("record the crowd");
        out.push(("cmu-131-01-walk-4x300".to_owned(), c.bytes));
        opts.keyframe_every = 1;
        opts.thresholds = Thresholds {
            pos_threshold_studs: 0.0,
            rot_threshold_rad: 0.0,
        };
        opts.ticks = 60;
        let c = record_crowd(&clip, &opts).expect("record the crowd");
        out.push(("cmu-131-01-walk-4x60-all-full".to_owned(), c.bytes));
    }
    // Special floats: XFORM positions, PROP numbers and vectors, the header's start time.
    let specials = [
        0x8000_0000u32,
        0x0000_0001,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_1234,
        0x7f80_0001,
    ];
    let mut ops = vec![1u8, 1, 0, 1, 0, 0, 0];
    for w in specials.windows(3) {
        ops.extend_from_slice(&[3, 1, 0, 1]);
        for &bits in w {
            ops.extend_from_slice(&bits.to_le_bytes());
        }
        ops.extend_from_slice(&[4, 1, 0, 1, 0, 1]);
        ops.extend_from_slice(&(u64::from(w[0]) << 32 | 0x7ff0_0000_0000_0001).to_le_bytes());
        ops.extend_from_slice(&[4, 1, 0, 1, 0, 4]);
        for &bits in w {
            ops.extend_from_slice(&bits.to_le_bytes());
        }
    }
    let mut b = b"RPLY".to_vec();
    b.extend_from_slice(&[3, 15, 0, 0, 0, 0]);
    b.extend_from_slice(&f64::NAN.to_le_bytes());
    b.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
    b.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    b.extend_from_slice(&[1, 0, b'x']);
    b.extend_from_slice(&ops);
    out.push(("special-floats".to_owned(), b));
    out
}

/// CBTK: a crowd of three characters from the CMU walk (5 bones, 150 frames, windows of 50),
/// and the small sample with two blocks of unknown header fields (header size 224).
fn cbtrack_extras() -> Vec<(String, Vec<u8>)> {
    use statepack::formats::cbtrack;
    let mut out = Vec::new();
    if let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") {
        let text = std::fs::read_to_string(&path).expect("read the BVH fixture");
        let mut clip = statepack_codecs::motion::bvh::parse_bvh(&text).expect("parse the BVH");
        clip.frames.truncate(150);
        let sk = statepack_codecs::motion::Skeleton::new(clip.skeleton.bones()[..5].to_vec())
            .expect("a prefix");
        let frames = clip.frames.iter().map(|r| r[..5].to_vec()).collect();
        let clip = statepack_codecs::motion::Clip::new("walk", sk, clip.frame_time_s, frames)
            .expect("a cut");
        let mut spec = statepack::sim::cbtrack_match::MatchSpec::crowd(clip, 3, 150);
        spec.window_length = 50;
        let mut cur = std::io::Cursor::new(Vec::new());
        spec.write(&mut cur, |_, _| {}).expect("write the crowd");
        out.push(("cmu-131-01-walk-crowd".to_owned(), cur.into_inner()));
    }
    let small = statepack::sim::cbtrack_match::small_sample_file();
    out.push((
        "small-header-224".to_owned(),
        cbtrack::with_header_extra(&small, 2, 0x5a).expect("a longer header"),
    ));
    out
}

/// SNAP: the CMU walk imported by the writers (first 240 frames, every joint), a file of
/// special floats (zeros, subnormal, infinities, NaNs), and random valid raw files (proptest strategies, fixed seed) with any float bit pattern, any frame
/// kind in any order, and names of any Unicode text.
/// Real motion compressed into statepack clips: the Fox's Walk (glTF, 1 unit = 1 cm) at
/// 7.23 mm, the first 120 frames of the CMU walk at 1 mm on joints and at 0.2 mm on a 3 cm
/// shell (plain and delta-coded values both appear).
fn anim_clip_extras() -> Vec<(String, Vec<u8>)> {
    use statepack::formats::anim_clip::compress;
    use statepack_codecs::anim::Metric;
    let mut out = Vec::new();
    if let Some(p) = statepack_fixtures::fixture_for_test("motion/fox.glb") {
        let bytes = std::fs::read(&p).expect("read the fox");
        let opts = statepack_codecs::motion::gltf::GltfOptions {
            animation: Some("Walk".into()),
            metres_per_unit: 0.01,
            fps: None,
        };
        let clip =
            statepack_codecs::motion::gltf::parse_gltf(&bytes, None, &opts).expect("fox walk");
        let c = compress(
            &clip,
            Metric {
                tolerance_m: 0.00723,
                shell_m: 0.0,
            },
            None,
        )
        .expect("compress");
        out.push(("fox-walk-7mm".to_owned(), c.bytes));
    }
    if let Some(p) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") {
        let mut clip = statepack_codecs::motion::load_motion_file(&p).expect("read the walk");
        clip.frames.truncate(120);
        for (name, m) in [
            (
                "cmu-walk-120-frames-1mm",
                Metric {
                    tolerance_m: 0.001,
                    shell_m: 0.0,
                },
            ),
            (
                "cmu-walk-120-frames-shell",
                Metric {
                    tolerance_m: 0.0002,
                    shell_m: 0.03,
                },
            ),
        ] {
            out.push((
                name.to_owned(),
                compress(&clip, m, None).expect("compress").bytes,
            ));
        }
    }
    out
}

/// The study's clips as the study's rows 4 and 6 write them (float32 linear keys and
/// quantised cubic keys at 1 mm), and the jump raw.
fn study_tracks_extras() -> Vec<(String, Vec<u8>)> {
    use statepack::formats::study_tracks::{encode_plan, encode_raw};
    use statepack_codecs::keyframe::{plan, PlanOptions};
    let mut out = Vec::new();
    for name in ["walk", "jump", "mocap"] {
        let Some(path) = statepack_fixtures::fixture_for_test(&format!("study/study-{name}.json"))
        else {
            continue;
        };
        let clip = statepack_codecs::motion::load_motion_file(&path).expect("read a study clip");
        for (label, cubic, quant) in [("linear", false, false), ("quantized-cubic", true, true)] {
            let bytes = encode_plan(&plan(&clip, PlanOptions::at_mm(1.0, cubic, quant)))
                .expect("encode a study clip");
            out.push((format!("study-{name}-{label}"), bytes));
        }
        if name == "jump" {
            out.push(("study-jump-raw".to_owned(), encode_raw(&clip).expect("raw")));
        }
    }
    out
}

fn snap_extras() -> Vec<(String, Vec<u8>)> {
    use statepack::formats::snap;
    let mut out = Vec::new();
    if let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") {
        let text = std::fs::read_to_string(&path).expect("read the BVH fixture");
        let mut clip = statepack_codecs::motion::bvh::parse_bvh(&text).expect("parse the BVH");
        clip.frames.truncate(240);
        let bytes = snap::import_clip(&clip, snap::DEFAULT_STUDS_PER_METRE)
            .and_then(|r| r.finish())
            .expect("import the walk");
        out.push(("cmu-131-01-walk-240-frames".to_owned(), bytes));
    }

    // Every kind of f32 in the position fields: zeros of both signs, the smallest subnormal,
    // infinities, a quiet and a signalling NaN with payloads, a negative NaN.
    let specials = [
        0.0f32.to_bits(),
        0x8000_0000,
        0x0000_0001,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_1234,
        0x7f80_0001,
        0xffc0_0000,
    ];
    let frames: Vec<snap::Frame> = specials
        .iter()
        .zip(specials.iter().rev())
        .map(|(&x, &y)| snap::Frame {
            kind: snap::FrameKind::Absolute,
            dt_ms: 1,
            cframe: Some(snap::Cframe {
                x: f32::from_bits(x),
                y: f32::from_bits(y),
                z_bits: x ^ y,
                q: [i16::MIN, 0, i16::MAX],
            }),
            pos_delta: None,
            rot_delta: None,
        })
        .collect();
    let special = snap::SnapV13 {
        recordings: vec![snap::Recording {
            map_name: "ünïcødé ✓".to_owned(),
            frames,
        }],
    };
    out.push((
        "special-floats".to_owned(),
        special.encode().expect("the special-floats file encodes"),
    ));

    let cframe = (any::<u32>(), any::<u32>(), any::<u32>(), any::<[i16; 3]>()).prop_map(
        |(x, y, z_bits, q)| snap::Cframe {
            x: f32::from_bits(x),
            y: f32::from_bits(y),
            z_bits,
            q,
        },
    );
    let frame = (
        0u8..5,
        any::<u16>(),
        cframe,
        any::<[i16; 3]>(),
        any::<[i16; 3]>(),
    )
        .prop_map(|(k, dt_ms, cframe, p, r)| {
            let kind = snap::FrameKind::from_i(i128::from(k)).expect("0..5 are frame kinds");
            let delta = k != 4;
            snap::Frame {
                kind,
                dt_ms,
                cframe: (!delta).then_some(cframe),
                pos_delta: (delta && k & 1 != 0).then_some(p),
                rot_delta: (delta && k & 2 != 0).then_some(r),
            }
        });
    let recording = ("\\PC{0,12}", prop::collection::vec(frame, 0..40))
        .prop_map(|(map_name, frames)| snap::Recording { map_name, frames });
    let file =
        prop::collection::vec(recording, 0..5).prop_map(|recordings| snap::SnapV13 { recordings });

    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    for i in 0..16 {
        let value = file
            .new_tree(&mut runner)
            .expect("generate a SNAP file")
            .current();
        let bytes = value.encode().expect("random SNAP files encode");
        out.push((format!("random-{i}"), bytes));
    }
    out
}

/// World snapshot: what one client of the bot swarm receives over its first ticks (full
/// records, own entity, deltas; raw bodies, since Kaitai reads a zstd body as bytes), and
/// random valid raw snapshots: random codes in every field at every width, every record kind,
/// varints of every length, despawn lists and unknown TLVs.
fn wsnap_extras() -> Vec<(String, Vec<u8>)> {
    use statepack::formats::world_snapshot as ws;
    use statepack::generated::world_snapshot as g;
    use statepack::sim::wsnap_swarm as sim;
    let mut out = Vec::new();
    let cfg_states: Vec<_> = (0..12).map(|i| sim::bot_state(i, 1.5, true, 1)).collect();
    let enc: Vec<_> = cfg_states.iter().map(ws::EncodedEntity::new).collect();
    let pos: Vec<_> = cfg_states.iter().map(|s| s.position_m).collect();
    let mut peer = ws::assembler::Peer::new(ws::assembler::PeerView {
        own_entity: Some(3),
        position_m: pos[3],
        interest_radius_m: 1.0e6,
        budget_bytes: usize::MAX,
    });
    let mut w = ws::SnapshotWriter::new();
    for tick in 0..2 {
        let (b, _) = peer
            .assemble(tick, &enc, &pos, &mut w, false)
            .expect("assemble");
        out.push((format!("swarm-client-3-tick-{tick}"), b));
    }
    let mut seed = 0x5eed_0004_u64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for f in 0..8 {
        let origins: Vec<glam::DVec3> = (0..1 + next(4))
            .map(|i| glam::DVec3::new(i as f64 * 65_536.0, -(next(1 << 40) as f64), 6.4e6))
            .collect();
        let mut records = Vec::new();
        for _ in 0..next(30) {
            let full = next(2) == 1;
            let gen_present = full || next(2) == 1;
            let own = next(3) == 0;
            let big = |bits: u32, n: &mut dyn FnMut(u64) -> u64| {
                let w = n(u64::from(bits)).max(1);
                n(1 << w)
            };
            let s22 = |n: &mut dyn FnMut(u64) -> u64| n(1 << 22) as i32 - (1 << 21);
            let s18 = |n: &mut dyn FnMut(u64) -> u64| n(1 << 18) as i32 - (1 << 17);
            let s12 = |n: &mut dyn FnMut(u64) -> u64| n(1 << 12) as i16 - (1 << 11);
            records.push(g::EntityRecord {
                origin_index: next(origins.len() as u64),
                blob: g::EntityBlob {
                    entity_index: big(32, &mut next),
                    full,
                    gen_present,
                    omega_present: own,
                    generation: gen_present.then(|| next(1 << 16) as u16),
                    type_index: full.then(|| big(32, &mut next)),
                    faction_index: full.then(|| next(1 << 16) as u16),
                    pos_x: s22(&mut next),
                    pos_y: s22(&mut next),
                    pos_z: s22(&mut next),
                    rot_dropped: next(4) as u8,
                    rot_a: next(1024) as u16,
                    rot_b: next(1024) as u16,
                    rot_c: next(1024) as u16,
                    vel_x: s18(&mut next),
                    vel_y: s18(&mut next),
                    vel_z: s18(&mut next),
                    omega_x: own.then(|| s12(&mut next)),
                    omega_y: own.then(|| s12(&mut next)),
                    omega_z: own.then(|| s12(&mut next)),
                    selected_station: own.then(|| next(256) as u8),
                    station_rounds: own.then(|| next(1 << 16) as u16),
                    weapon_flags: own.then(|| next(256) as u8),
                    payload_mass_kg: own.then(|| next(1 << 16) as u16),
                    payload_cd0: own.then(|| next(1 << 16) as u16),
                    damage_level: next(8) as u8,
                    engine_fail_flags: next(32) as u8,
                    throttle_pct: next(101) as u8,
                    fuel_pct: next(101) as u8,
                    ab_engaged: next(2) == 1,
                    player_owned: next(2) == 1,
                    align: vec![],
                },
            });
        }
        let despawns: Vec<u32> = (0..next(5)).map(|_| next(1 << 32) as u32).collect();
        let mut raw = ws::raw_snapshot(f, &origins, records, &despawns).expect("raw snapshot");
        if f % 3 == 0 {
            let tlvs = raw.tlvs.as_mut().expect("tlvs");
            tlvs.entries.push(g::Tlv {
                tlv_type: 9,
                len: 3,
                despawn: None,
                value: Some(vec![1, 2, 3]),
            });
            raw.tlv_bytes += 6;
            raw.uncompressed_bytes += 6;
        }
        out.push((
            format!("random-{f}"),
            raw.encode().expect("random snapshot encodes"),
        ));
    }
    out
}

/// Bit fields at every phase, offset binary, conditional bits, both varint forms.
fn bits_files() -> Vec<(String, Vec<u8>)> {
    use features::bits::{Bits, Item};
    let mut out = Vec::new();
    for (i, (bv, yv)) in [
        (0u64, 0u64),
        (127, 128),
        (300, 16_384),
        (u32::MAX as u64, 1 << 40),
    ]
    .into_iter()
    .enumerate()
    {
        let n = i as u8;
        let v = Bits {
            flags: n % 8,
            has_extra: i % 2 == 0,
            small: [-2048i16, 2047, -1, 0][i],
            count: n * 3,
            codes: (0..n * 3).map(|k| k * 7 % 32).collect(),
            extra: (i % 2 == 0).then_some([0u32, (1 << 20) - 1, 5, 6][i]),
            tail_byte: 0xa5 ^ n,
            lead: n % 8,
            bit_varint: bv,
            byte_varint: yv,
            items: vec![
                Item {
                    sign: true,
                    mag: 1023 - u16::from(n),
                    align: vec![],
                },
                Item {
                    sign: false,
                    mag: u16::from(n),
                    align: vec![],
                },
            ],
            wide: [0u32, u32::MAX, 0x8000_0001, 12345][i],
        };
        out.push((format!("bits-{i}"), v.encode().expect("encode")));
    }
    out
}

/// The test-only schemas of `tests/schemas/`, which use every feature the generator has,
/// generated by `build.rs`.
#[allow(dead_code, clippy::all)]
mod features {
    include!(concat!(env!("OUT_DIR"), "/test_schemas/mod.rs"));
}

fn traced<T>((r, t): (Result<T, statepack_runtime::io::DecodeError>, TraceNode)) -> TracedDecode {
    (r.map(|_| ()), t)
}

/// A feature schema (`tests/schemas/<stem>.ksy`), its traced decode and files made here.
type FeatureSchema = (&'static str, fn(&[u8]) -> TracedDecode, MakeFiles);

/// The feature schemas the oracle reads files of (seeded mutants are added to each).
const FEATURE_SCHEMAS: &[FeatureSchema] = &[
    (
        "numbers_le",
        |b| traced(features::numbers_le::NumbersLe::decode_traced(b)),
        numbers_le_files,
    ),
    (
        "numbers_be",
        |b| traced(features::numbers_be::NumbersBe::decode_traced(b)),
        numbers_be_files,
    ),
    (
        "lists",
        |b| traced(features::lists::Lists::decode_traced(b)),
        lists_files,
    ),
    (
        "text",
        |b| traced(features::text::Text::decode_traced(b)),
        text_files,
    ),
    (
        "records",
        |b| traced(features::records::Records::decode_traced(b)),
        records_files,
    ),
    (
        "bits",
        |b| traced(features::bits::Bits::decode_traced(b)),
        bits_files,
    ),
];

/// Extreme and ordinary values of every number type (the extremes include 64-bit values
/// beyond 2^53 and negative `s8` values that Kaitai's JavaScript runtime misreads).
macro_rules! numbers_files {
    ($name:ident, $ty:path) => {
        fn $name() -> Vec<(String, Vec<u8>)> {
            use $ty as N;
            let extremes = N {
                a_u1: u8::MAX,
                a_s1: i8::MIN,
                a_u2: u16::MAX,
                a_s2: i16::MIN,
                a_u4: u32::MAX,
                a_s4: i32::MIN,
                a_u8: u64::MAX,
                a_s8: i64::MIN,
                a_f4: f32::MAX,
                a_f8: f64::MIN_POSITIVE,
                b_u2: 0x8001,
                b_s2: i16::MAX,
                b_u4: 0x8000_0001,
                b_s4: -1,
                b_u8: (1 << 53) + 1,
                b_s8: -(1 << 32),
                b_f4: f32::from_bits(0xff80_0001),
                b_f8: f64::NEG_INFINITY,
            };
            let ordinary = N {
                a_u1: 1,
                a_s1: -2,
                a_u2: 300,
                a_s2: -300,
                a_u4: 70_000,
                a_s4: -70_000,
                a_u8: 1 << 40,
                a_s8: -(1 << 40) - 1,
                a_f4: -0.1,
                a_f8: std::f64::consts::PI,
                b_u2: 2,
                b_s2: -3,
                b_u4: 4,
                b_s4: -5,
                b_u8: 6,
                b_s8: -7,
                b_f4: 0.5,
                b_f8: -0.0,
            };
            vec![
                ("extremes".into(), extremes.encode().expect("encode")),
                ("ordinary".into(), ordinary.encode().expect("encode")),
            ]
        }
    };
}
numbers_files!(numbers_le_files, features::numbers_le::NumbersLe);
numbers_files!(numbers_be_files, features::numbers_be::NumbersBe);

fn lists_files() -> Vec<(String, Vec<u8>)> {
    use features::lists::{Chunked, Lists, Op};
    let full = Lists {
        items: vec![1, 0xffff, 7],
        vec3: [1.0, -0.0, f32::from_bits(0x7fc0_0001)],
        num_pairs: 2,
        pairs: vec![-128, 127, 0, -1],
        mirror: vec![9, 8, 7],
        until_zero: vec![0x1234, 0xff00, 0],
        ops: vec![Op::Push, Op::Pop, Op::Push, Op::Stop],
        names: vec!["a".into(), "bc".into(), String::new()],
        chunked: Chunked {
            chunk_len: 2,
            chunks: vec![vec![1, 2], vec![3, 4], vec![0, 0]],
        },
        tail: vec![0xbeef, 1],
    };
    let empty = Lists {
        items: Vec::new(),
        vec3: [0.0; 3],
        num_pairs: 0,
        pairs: Vec::new(),
        mirror: Vec::new(),
        until_zero: vec![0],
        ops: vec![Op::Stop],
        names: vec![String::new()],
        chunked: Chunked {
            chunk_len: 0,
            chunks: Vec::new(),
        },
        tail: Vec::new(),
    };
    vec![
        ("full".into(), full.encode().expect("encode")),
        ("empty".into(), empty.encode().expect("encode")),
    ]
}

fn text_files() -> Vec<(String, Vec<u8>)> {
    use features::text::{Note, Rest, Text};
    let a = Text {
        title: "Grüße ✓".into(),
        code: "xyz".into(),
        label: "λ label".into(),
        ascii_label: "plain".into(),
        blob: vec![0, 1, 0xfe, 0xff],
        pad: vec![0xaa, 0xbb],
        note: Note {
            lang: "en".into(),
            body: "a note".into(),
        },
        rest: Rest {
            check: 0x0102,
            data: vec![5, 6, 7],
        },
    };
    let b = Text {
        title: String::new(),
        code: "abc".into(),
        label: String::new(),
        ascii_label: String::new(),
        blob: Vec::new(),
        pad: vec![0, 0],
        note: Note {
            lang: "en".into(),
            body: String::new(),
        },
        rest: Rest {
            check: 0,
            data: Vec::new(),
        },
    };
    vec![
        ("text".into(), a.encode().expect("encode")),
        ("empty-text".into(), b.encode().expect("encode")),
    ]
}

fn records_files() -> Vec<(String, Vec<u8>)> {
    use features::records::{
        Blob, Circle, Entry, EntryBody, Header, Kind, Label, Mode, Point, Records, RecordsShape,
        Rect,
    };
    let entries = vec![
        Entry {
            dt_ms: 10,
            kind: Kind::Point,
            body: EntryBody::Point(Point { x: -1, y: 2 }),
            weight: None,
        },
        Entry {
            dt_ms: 20,
            kind: Kind::Label,
            body: EntryBody::Label(Label { text: "lbl".into() }),
            weight: None,
        },
        Entry {
            dt_ms: 30,
            kind: Kind::Blob,
            body: EntryBody::Blob(Blob {
                data: vec![1, 2, 3],
            }),
            weight: Some(4),
        },
        Entry {
            dt_ms: 40,
            kind: Kind::HeavyBlob,
            body: EntryBody::Blob(Blob { data: Vec::new() }),
            weight: Some(5),
        },
    ];
    let with_extra = Records {
        version: 2,
        revision: 0x0102,
        flags: 1,
        level: -100,
        mode: Mode::Safe,
        scale: 2.5,
        extra_ms: Some(77),
        entries,
        header: Header {
            id: 7,
            count: 0x0102,
        },
        shape_tag: 2,
        shape: RecordsShape::Rect(Rect { w: 3, h: 4 }),
        // (2 << 1) + 1 - 4 / 4 = 4 bytes of data.
        packed: 0x2c,
        data: vec![9, 8, 7, 6],
    };
    let plain = Records {
        version: 2,
        revision: 0x0102,
        flags: 0x0e,
        level: 100,
        mode: Mode::Fast,
        scale: 0.0,
        extra_ms: None,
        entries: Vec::new(),
        header: Header { id: 0, count: 0 },
        shape_tag: 3,
        shape: RecordsShape::Circle(Circle { radius: 0xffff }),
        packed: 0,
        data: Vec::new(),
    };
    vec![
        ("with-extra".into(), with_extra.encode().expect("encode")),
        ("plain".into(), plain.encode().expect("encode")),
    ]
}

// ---------------------------------------------------------------------------------------
// Tests

/// One schema and the files to compare on it.
struct Suite {
    /// Shown in messages (`SNAP v1.3`, `tests/schemas/lists.ksy`).
    title: String,
    /// Prefix of each file's label (`snap`, `lists`).
    short: String,
    schema: PathBuf,
    files: Vec<(String, Vec<u8>)>,
    decode_traced: fn(&[u8]) -> TracedDecode,
}

/// Runs Kaitai on every suite's files and compares each with our traced decode. Prints the
/// figures per file and per suite; fails on any disagreement and when nothing was compared.
fn check_suites(suites: &[Suite]) {
    let t0 = Instant::now();
    let request = json!({
        "schemas": suites.iter().map(|s| json!({
            "path": s.schema,
            "files": s.files.iter().map(|(name, b)| json!({"name": name, "base64": base64(b)})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>()
    });
    let answer = kaitai(&request);
    let answers = answer["schemas"].as_array().expect("schemas");
    assert_eq!(answers.len(), suites.len());

    let mut problems = Vec::new();
    let (mut files_total, mut totals) = (0usize, Counts::default());
    for (suite, s) in suites.iter().zip(answers) {
        if let Some(e) = s.get("compile_error") {
            problems.push(format!(
                "{}: kaitai-struct-compiler refuses it:\n{e}",
                suite.schema.display()
            ));
            continue;
        }
        let theirs = s["files"].as_array().expect("files");
        assert_eq!(theirs.len(), suite.files.len());
        let mut sum = Counts::default();
        for ((name, bytes), t) in suite.files.iter().zip(theirs) {
            let label = format!("{}/{name}", suite.short);
            let (res, ours) = (suite.decode_traced)(bytes);
            if let Err(e) = res {
                panic!("{label}: the corpus file does not decode: {e}");
            }
            if let Some(e) = t.get("error") {
                problems.push(format!("{label}: Kaitai's parser fails: {e}"));
                continue;
            }
            match compare(&label, &ours, &t["tree"]) {
                Ok(c) => {
                    eprintln!("{label}: {} bytes, {c}", bytes.len());
                    if c.nodes == 0 || c.values == 0 {
                        problems.push(format!("{label}: nothing was compared"));
                    }
                    sum.add(c);
                }
                Err(p) => problems.extend(p),
            }
        }
        eprintln!("{}: {} files: {sum}", suite.title, suite.files.len());
        files_total += suite.files.len();
        totals.add(sum);
    }
    eprintln!(
        "oracle: {files_total} files: {totals}; {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    assert!(
        problems.is_empty(),
        "Kaitai disagrees:\n{}",
        problems.join("\n")
    );
    assert!(
        files_total > 0 && totals.values > 0,
        "the oracle compared nothing"
    );
}

#[test]
fn every_schema_compiles_with_kaitai() {
    if !oracle_ready() {
        return;
    }
    let schemas = schema_files("schema");
    assert!(!schemas.is_empty(), "no schema/*.ksy found");
    let features = schema_files("tests/schemas");
    let request = json!({
        "schemas": schemas.iter().chain(&features).map(|p| json!({"path": p, "files": []})).collect::<Vec<_>>()
    });
    let answer = kaitai(&request);
    eprintln!("oracle: {}", answer["versions"]);
    assert_eq!(
        answer["versions"]["compiler"], "0.11.0",
        "the pinned compiler"
    );
    assert_eq!(
        answer["versions"]["runtime"], "0.11.0",
        "the pinned runtime"
    );
    let mut failures = Vec::new();
    for s in answer["schemas"].as_array().expect("schemas") {
        let path = s["path"].as_str().unwrap_or("?");
        match s.get("compile_error") {
            Some(e) => failures.push(format!(
                "{path}: kaitai-struct-compiler refuses it:\n{}",
                e.as_str().unwrap_or_default()
            )),
            None => eprintln!("compiled {path} -> {}", s["generated"]),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for f in FORMATS {
        assert!(
            schemas.contains(&schema_path(f)),
            "format {} has no schema/{}.ksy",
            f.name,
            f.schema
        );
    }
}

#[test]
fn kaitai_reads_every_format_file_as_we_do() {
    if !oracle_ready() {
        return;
    }
    let suites: Vec<Suite> = FORMATS
        .iter()
        .map(|f| Suite {
            title: f.title.to_owned(),
            short: f.name.to_owned(),
            schema: schema_path(f),
            files: corpus(f),
            decode_traced: f.decode_traced,
        })
        .collect();
    check_suites(&suites);
}

#[test]
fn kaitai_reads_the_feature_schemas_as_we_do() {
    if !oracle_ready() {
        return;
    }
    let suites: Vec<Suite> = FEATURE_SCHEMAS
        .iter()
        .map(|(stem, decode_traced, make)| {
            let decode = *decode_traced;
            let mut files = make();
            let m = mutants(stem, |b| decode(b).0.is_ok(), &files);
            files.extend(m);
            Suite {
                title: format!("tests/schemas/{stem}.ksy"),
                short: (*stem).to_owned(),
                schema: root().join("tests/schemas").join(format!("{stem}.ksy")),
                files,
                decode_traced: decode,
            }
        })
        .collect();
    check_suites(&suites);
}

/// The comparison itself finds disagreements: a changed value, a shifted offset, a missing
/// field and a renamed one are each reported.
#[test]
fn the_comparison_sees_disagreements() {
    if !oracle_ready() {
        return;
    }
    let f = &FORMATS[0];
    let (name, bytes) = (f.samples)().into_iter().next().expect("a sample");
    let answer = kaitai(
        &json!({"schemas": [{"path": schema_path(f), "files": [{"name": name, "base64": base64(&bytes)}]}]}),
    );
    let theirs = &answer["schemas"][0]["files"][0]["tree"];
    let (res, ours) = (f.decode_traced)(&bytes);
    res.expect("the sample decodes");
    compare("as is", &ours, theirs).expect("the sample agrees");

    // Find the first leaf and the first node with children, in our tree.
    fn first_leaf(n: &mut TraceNode) -> Option<&mut TraceNode> {
        if n.typed.is_some() {
            return Some(n);
        }
        n.children.iter_mut().find_map(first_leaf)
    }
    let mut changed = ours.clone();
    let leaf = first_leaf(&mut changed).expect("a leaf");
    leaf.typed = Some(match leaf.typed.take().expect("typed") {
        TraceValue::Int(v) => TraceValue::Int(v + 1),
        TraceValue::Bytes(mut b) => {
            b.push(0);
            TraceValue::Bytes(b)
        }
        other => TraceValue::Str(format!("{other}!")),
    });
    assert!(compare("value", &changed, theirs).is_err());

    let mut shifted = ours.clone();
    first_leaf(&mut shifted).expect("a leaf").end += 1;
    assert!(compare("offset", &shifted, theirs).is_err());

    let mut missing = ours.clone();
    missing.children.pop();
    assert!(compare("missing", &missing, theirs).is_err());

    let mut renamed = ours.clone();
    renamed.children[0].name.push('x');
    assert!(compare("renamed", &renamed, theirs).is_err());

    let mut float = TraceNode {
        name: "x".into(),
        start: 0,
        end: 4,
        start_bit: 0,
        end_bit: 32,
        value: None,
        typed: Some(TraceValue::F32(f32::from_bits(0x7f80_0001))),
        children: Vec::new(),
    };
    let quiet = json!({"name": "x", "start": 0, "end": 4, "value": {"num": "7ff8000020000000"}});
    compare("snan", &float, &quiet).expect("a signalling NaN arrives quiet");
    float.typed = Some(TraceValue::F32(f32::from_bits(0x7fc0_0002)));
    assert!(compare("other nan", &float, &quiet).is_err());
}

#[test]
fn kaitai_names_and_stamps() {
    assert_eq!(kaitai_name("len_map_name"), "lenMapName");
    assert_eq!(kaitai_name("z_bits"), "zBits");
    assert_eq!(kaitai_name("q"), "q");
    assert_eq!(kaitai_name("pos_1"), "pos1");
    assert_eq!(base64(b"Ma"), "TWE=");
    assert_eq!(base64(b"Man"), "TWFu");
    assert_eq!(base64(b"M"), "TQ==");
    assert_eq!(widen_f32_bits(1.5f32.to_bits()), 1.5f64.to_bits());
    assert_eq!(widen_f32_bits(0x8000_0000), (-0.0f64).to_bits());
    assert_ne!(fnv1a(b"a"), fnv1a(b"b"));
    // The JavaScript runtime's s8 formula: right for -1, wrong for -2^32 and i64::MIN.
    assert_eq!(kaitai_js_s8(-1), -1.0);
    assert_eq!(kaitai_js_s8(-(1 << 32)), 0.0);
    assert_ne!(kaitai_js_s8(i64::MIN), i64::MIN as f64);
}
