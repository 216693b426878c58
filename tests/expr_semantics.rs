//! One semantics for the expression language: every operator, method and cast of
//! `tests/schemas/expr_ops.ksy` runs on edge values through the Rust generated from the
//! schema (compiled) and through the generator's evaluator (`statepack_codegen::sem`, by way
//! of the interpreter), and both must give the same value or the same error.
//!
//! Edge values: integers 0, ±1, ±7, 63, 64 and the smallest and largest 64-bit integers
//! (and the largest `u8`), floats ±0, ±7.5, 2, NaN, ±inf, the largest and the smallest
//! positive normal `f64`, strings empty, short, non-ASCII, numeric, hexadecimal and 200
//! characters long, byte arrays empty, one `0xff`, not UTF-8, and 200 bytes long.

use statepack_codegen::expr::Expr;
use statepack_codegen::interp;
use std::collections::BTreeSet;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/test_schemas/mod.rs"));

const INTS: [i64; 10] = [0, -1, 1, 2, 7, -7, 63, 64, i64::MIN, i64::MAX];
const UINTS: [u64; 4] = [0, 1, u64::MAX, 1 << 63];
const FLOATS: [f64; 11] = [
    0.0,
    -0.0,
    1.5,
    -7.5,
    2.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MAX,
    f64::MIN_POSITIVE,
    7.5,
];

fn strings() -> Vec<String> {
    vec![
        String::new(),
        "abc".into(),
        "abd".into(),
        "äöü".into(),
        "-12".into(),
        "ff".into(),
        "x".repeat(200),
    ]
}

fn byte_arrays() -> Vec<Vec<u8>> {
    vec![
        Vec::new(),
        vec![0xff],
        vec![0, 1, 2],
        b"abc".to_vec(),
        vec![0xc3],
        (0..200u8).collect(),
    ]
}

/// The operands of one input.
#[derive(Clone)]
struct Input {
    a: i64,
    b: i64,
    u: u64,
    x: f64,
    y: f64,
    s: String,
    t: String,
    p: Vec<u8>,
    q: Vec<u8>,
}

impl Input {
    fn bytes(&self, op: u8) -> Vec<u8> {
        let mut out = vec![op];
        out.extend(self.a.to_le_bytes());
        out.extend(self.b.to_le_bytes());
        out.extend(self.u.to_le_bytes());
        out.extend(self.x.to_le_bytes());
        out.extend(self.y.to_le_bytes());
        for text in [self.s.as_bytes(), self.t.as_bytes(), &self.p, &self.q] {
            out.push(u8::try_from(text.len()).expect("short operands"));
            out.extend_from_slice(text);
        }
        out
    }
}

fn names_in(e: &Expr, out: &mut BTreeSet<String>) {
    match e {
        Expr::Name(n) => {
            out.insert(n.clone());
        }
        Expr::Unary(_, x) | Expr::Attr(x, _) | Expr::Cast(x, _) => names_in(x, out),
        Expr::Binary(_, l, r) | Expr::Index(l, r) => {
            names_in(l, out);
            names_in(r, out);
        }
        Expr::Ternary(c, a, b) => {
            names_in(c, out);
            names_in(a, out);
            names_in(b, out);
        }
        Expr::Call(x, _, args) => {
            names_in(x, out);
            for a in args {
                names_in(a, out);
            }
        }
        Expr::List(items) => items.iter().for_each(|x| names_in(x, out)),
        _ => {}
    }
}

/// Every input for an operation over `names`: the edge values of each operand it uses,
/// in every combination, the others at a plain value.
fn inputs_for(names: &BTreeSet<String>) -> Vec<Input> {
    let mut all = vec![Input {
        a: 3,
        b: 2,
        u: 5,
        x: 1.25,
        y: 0.5,
        s: "abc".into(),
        t: "abd".into(),
        p: vec![1, 2],
        q: vec![1, 3],
    }];
    for n in names {
        let mut next = Vec::new();
        for base in &all {
            match n.as_str() {
                "a" | "b" => {
                    for v in INTS {
                        let mut i = base.clone();
                        if n == "a" {
                            i.a = v
                        } else {
                            i.b = v
                        }
                        next.push(i);
                    }
                }
                "u" => {
                    for v in UINTS {
                        next.push(Input {
                            u: v,
                            ..base.clone()
                        });
                    }
                }
                "x" | "y" => {
                    for v in FLOATS {
                        let mut i = base.clone();
                        if n == "x" {
                            i.x = v
                        } else {
                            i.y = v
                        }
                        next.push(i);
                    }
                }
                "s" | "t" => {
                    for v in strings() {
                        let mut i = base.clone();
                        if n == "s" {
                            i.s = v
                        } else {
                            i.t = v
                        }
                        next.push(i);
                    }
                }
                "p" | "q" => {
                    for v in byte_arrays() {
                        let mut i = base.clone();
                        if n == "p" {
                            i.p = v
                        } else {
                            i.q = v
                        }
                        next.push(i);
                    }
                }
                other => panic!("operand `{other}` has no edge values here"),
            }
        }
        all = next;
    }
    all
}

#[test]
fn compiled_rust_and_the_evaluator_agree_on_every_operator() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/expr_ops.ksy");
    let text = std::fs::read_to_string(&path).expect("read the schema");
    let schema = statepack_codegen::load_checked(&text, "tests/schemas/expr_ops.ksy", &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let root = &schema.types[0];
    let mut runs = 0;
    let mut errors = 0;
    let mut problems = Vec::new();
    for (k, inst) in root.instances.iter().enumerate() {
        let mut names = BTreeSet::new();
        names_in(&inst.value.expr, &mut names);
        let op = u8::try_from(k).expect("fewer than 256 operations");
        for input in inputs_for(&names) {
            let bytes = input.bytes(op);
            runs += 1;
            let compiled = expr_ops::reflect_decode(&bytes);
            let evaluated = interp::decode(&schema, &bytes);
            let verdict = match (&compiled, &evaluated) {
                (Ok(g), Ok(i)) => interp::compare(g.as_ref(), i),
                (Err(g), Err(i)) => {
                    errors += 1;
                    // The interpreter names the expression first (`in \`a / b\`: ...`).
                    let ik = i.kind.to_string();
                    let ik = ik
                        .strip_prefix("in `")
                        .and_then(|r| r.split_once("`: "))
                        .map_or(ik.as_str(), |(_, m)| m);
                    if (g.path.to_string(), g.offset, g.kind.to_string())
                        == (i.path.to_string(), i.offset, ik.to_owned())
                    {
                        Ok(())
                    } else {
                        Err(format!("errors differ: {g} vs {i}"))
                    }
                }
                (g, i) => Err(format!(
                    "compiled {:?}, evaluated {:?}",
                    g.as_ref().map(|_| "a value").map_err(|e| e.to_string()),
                    i.as_ref().map(|_| "a value").map_err(|e| e.to_string())
                )),
            };
            if let Err(m) = verdict {
                problems.push(format!(
                    "{} `{}` on {:02x?}: {m}",
                    inst.id,
                    inst.value.src,
                    &bytes[..41.min(bytes.len())]
                ));
            }
        }
    }
    eprintln!(
        "expression semantics: {} operations, {runs} inputs ({errors} errors on both sides), {} disagree",
        root.instances.len(),
        problems.len()
    );
    assert!(runs > 2000, "the sweep ran {runs} inputs");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
