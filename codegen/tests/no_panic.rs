//! A bad schema never panics the generator: random mutations of the real SNAP schema (lines
//! dropped, duplicated, swapped or re-indented, bytes changed, values swapped for awkward
//! ones) are fed to `statepack_codegen::generate`, which must return code or diagnostics.
//! Diagnostics must also point inside the file and never be the generator's internal error.
//!
//! The run is deterministic; `STATEPACK_MUTATIONS=<n>` changes the number of cases and
//! `STATEPACK_MUTATION_SEED=<n>` the seed.

use std::panic::{catch_unwind, AssertUnwindSafe};

const SCHEMA: &str = include_str!("../../schema/snap_v1_3.ksy");

/// splitmix64: small, deterministic, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// Values that probe the edges of each stage: YAML structure, names, number types,
/// expressions and their types.
const VALUES: &[&str] = &[
    "u",
    "s",
    "f",
    "b",
    "u3",
    "s16",
    "f2",
    "u2be",
    "f8le",
    "b1",
    "b64",
    "é",
    "ébe",
    "ué",
    "str",
    "strz",
    "frame",
    "cframe",
    "recording",
    "snap_v1_3",
    "frame_kind",
    "self",
    "result",
    "t",
    "default",
    "_",
    "_root",
    "_io",
    "kind",
    "dt_ms",
    "num_frames",
    "frames.dt_ms",
    "frames",
    "frame_kind::absolute",
    "frame_kind::nope",
    "nope::absolute",
    "kind.to_i",
    "kind.length",
    "not kind",
    "kind ? 1 : 2",
    "1 / 0",
    "1 % num_frames",
    "1 << 64",
    "-1",
    "256",
    "0x",
    "0b2",
    "99999999999999999999999999999999999999999",
    "1e5",
    "0.5",
    "'x'",
    "\"x",
    "true",
    "yes",
    "on",
    "~",
    "[]",
    "{}",
    "[1, 2]",
    "{a: 1}",
    "*a",
    "&a x",
    "!!str x",
    "? x",
    "|",
    ">",
    "expr",
    "eos",
    "until",
    "le",
    "be",
    "UTF-8",
    "ASCII",
    "UTF-16",
    "SNAPV1.3",
    "[0x53, 300]",
    "-sp-sum-of",
    "frames.kind",
    "-sp-box",
];

/// Whole lines worth inserting somewhere.
const LINES: &[&str] = &[
    "    repeat: eos",
    "    repeat: until",
    "    repeat-until: _.dt_ms == 0",
    "    size-eos: true",
    "    size: 4",
    "    if: kind == frame_kind::absolute",
    "    valid: {min: 1, max: 0}",
    "    valid: {any-of: [frame_kind::absolute]}",
    "    valid: {expr: _ > 1}",
    "    contents: [1, 2]",
    "    enum: frame_kind",
    "    encoding: ASCII",
    "    -sp-sum-of: recordings.len_map_name",
    "    -sp-units: ms",
    "    -sp-box: true",
    "    -sp-other: 1",
    "    instances: {}",
    "    process: zlib",
    "    type: {switch-on: kind, cases: {0: frame, frame_kind::absolute: cframe, _: frame}}",
    "  - id: extra",
    "  - id: recordings",
    "  - id: kind",
    "  -",
    "---",
    "types:",
    "enums:",
    "  frame: {}",
    "    5: absolute",
    "    -1: minus",
    "    300: big",
];

fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    for _ in 0..1 + rng.below(4) {
        if lines.is_empty() {
            lines.push(String::new());
        }
        let i = rng.below(lines.len());
        match rng.below(9) {
            0 => {
                lines.remove(i);
            }
            1 => {
                let l = lines[i].clone();
                lines.insert(rng.below(lines.len() + 1), l);
            }
            2 => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
            3 => {
                // Re-indent by -2..=+2 spaces.
                let l = &lines[i];
                let indent = l.len() - l.trim_start_matches(' ').len();
                let new = (indent as isize + rng.below(5) as isize - 2).max(0) as usize;
                lines[i] = format!("{}{}", " ".repeat(new), l.trim_start_matches(' '));
            }
            4 | 5 => {
                // Replace the value after `: ` (or the whole line's content).
                let v = rng.pick(VALUES);
                lines[i] = match lines[i].split_once(": ") {
                    Some((k, _)) => format!("{k}: {v}"),
                    None => format!("{}{v}", lines[i]),
                };
            }
            6 => {
                let l = rng.pick(LINES).to_owned();
                lines.insert(i, l);
            }
            7 => {
                // Replace the key before `:`.
                let v = rng.pick(VALUES);
                if let Some((k, rest)) = lines[i].split_once(':') {
                    let indent = &k[..k.len() - k.trim_start_matches([' ', '-']).len()];
                    lines[i] = format!("{indent}{v}:{rest}");
                }
            }
            _ => {
                // Byte-level damage: change, delete or insert one character.
                let mut bytes = lines[i].clone().into_bytes();
                let at = rng.below(bytes.len() + 1);
                const CHARS: &[u8] = b":-[]{}\"'&*#?|> \t0_a";
                let c = CHARS[rng.below(CHARS.len())];
                match rng.below(3) {
                    0 if at < bytes.len() => bytes[at] = c,
                    1 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    _ => bytes.insert(at, c),
                }
                lines[i] = String::from_utf8_lossy(&bytes).into_owned();
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Runs the generator; returns a description of what went wrong, if anything did.
fn check(text: &str) -> Option<String> {
    let file = "schema/mutated.ksy";
    let result = catch_unwind(AssertUnwindSafe(|| statepack_codegen::generate(text, file)));
    let diags = match result {
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            return Some(format!("panicked: {msg}"));
        }
        Ok(Ok(_)) => return None,
        Ok(Err(d)) => d,
    };
    if diags.is_empty() {
        return Some("failed without a diagnostic".into());
    }
    let last_line = text.lines().count() + 1;
    for d in &diags {
        if d.message.contains("internal generator error") {
            return Some(format!("internal error instead of a diagnostic: {d}"));
        }
        if d.pos.line < 1 || d.pos.line > last_line || d.pos.col < 1 {
            return Some(format!("position outside the file: {d}"));
        }
        if d.message.is_empty() || d.hint.is_empty() || d.file != file {
            return Some(format!("incomplete diagnostic: {d:?}"));
        }
    }
    None
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn the_unmutated_schema_generates() {
    // The mutations start from a schema the generator accepts.
    assert_eq!(check(SCHEMA), None);
    assert!(statepack_codegen::generate(SCHEMA, "schema/snap_v1_3.ksy").is_ok());
}

#[test]
fn mutated_schemas_never_panic() {
    let cases = env_u64("STATEPACK_MUTATIONS", 3000);
    let seed = env_u64("STATEPACK_MUTATION_SEED", 0x5eed_05a9);
    let mut rng = Rng(seed);
    let mut refused = 0u64;
    for case in 0..cases {
        let text = mutate(SCHEMA, &mut rng);
        if let Some(problem) = check(&text) {
            panic!("case {case} (seed {seed}): {problem}\n--- schema ---\n{text}");
        }
        if statepack_codegen::load_schema(&text, "m.ksy").is_err() {
            refused += 1;
        }
    }
    // The mutations must actually produce bad schemas, or this test proves nothing.
    assert!(
        refused * 2 > cases,
        "only {refused} of {cases} mutations were refused"
    );
}

#[test]
fn pathological_inputs_are_refused_not_fatal() {
    let field = |expr: &str| {
        format!("meta:\n  id: p\nseq:\n  - id: a\n    type: u1\n  - id: b\n    size: '{expr}'\n")
    };
    let huge_float = format!("a + {}.0", "9".repeat(400));
    let inputs = [
        // Expressions deep enough to overflow a recursive parser or checker.
        field(&("-~".repeat(400) + "a")),
        field(&"not ".repeat(1000)),
        field(&("a".to_string() + &" + 1".repeat(500))),
        field(&("(".repeat(600) + "a" + &")".repeat(600))),
        field(&"a ? ".repeat(300)),
        field(&huge_float),
        field("a + 999999999999999999999999999999999999999999999"),
        // YAML nested far deeper than any schema.
        "[".repeat(100_000),
        "{a: ".repeat(50_000),
        (0..3000)
            .map(|i| format!("{}- x\n", " ".repeat(i)))
            .collect(),
        // Not text a schema could be.
        "\u{0}\u{1}\u{2}".to_string(),
        "\u{feff}meta:\n  id: Bom\n".to_string(),
        "meta:\n  id: p\nseq:\n  - id: a\n    type: u\u{0}1\n".to_string(),
        String::new(),
    ];
    for text in &inputs {
        let shown: String = text.chars().take(120).collect();
        match check(text) {
            None => {}
            Some(problem) => panic!("{problem}\n--- input (start) ---\n{shown}"),
        }
        assert!(
            statepack_codegen::generate(text, "p.ksy").is_err(),
            "accepted: {shown}"
        );
    }
}
