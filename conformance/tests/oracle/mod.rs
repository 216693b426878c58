//! The interpreter against the generated code on Kaitai Struct's conformance suite: for every
//! kst whose schema the generator compiled, read the kst's input with the generated reader and
//! with `statepack_codegen::interp`, and require the same dynamic tree (every member, by
//! [`statepack_codegen::interp::compare`]) or both an error; where the kst's asserts pass on
//! the generated value they must pass on the interpreter's too, and where the generated reader
//! raises the kst's exception the interpreter must raise it as well.
//!
//! The interpreter is given the suite's custom processors and opaque types
//! (`statepack_conformance::kaitai_fx::suite_extensions`): in the comparison each opaque type
//! is the generated module's Rust type (`interp::RustOpaque`), in the count through the
//! interpreter alone it is the suite schema of that name (`interp::SchemaOpaque`, what
//! `statepack --opaque NAME=FILE.ksy` gives the CLI).
//!
//! Schemas whose outcome differs are listed in `conformance/interp_disagree.txt` (one
//! `id: reason` a line); the test fails when an unlisted kst disagrees or a listed one agrees.
//! `STATEPACK_UPDATE_INTERP=1` rewrites the list from the run. The report goes to stdout and to
//! `<target>/tmp/interp-oracle-report.txt`:
//! `cargo test -p statepack-conformance --test kaitai_suite interp -- --nocapture`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use statepack_codegen::interp::{Extensions, RustOpaque};
use statepack_conformance::compare::{assert_schema, check, eval_const, eval_over};
use statepack_conformance::kaitai_fx::suite_extensions;
use statepack_conformance::kst::{self, Expectation};
use statepack_conformance::run::guarded;
use statepack_conformance::{kinds, Outcome, SchemaEntry};
use statepack_runtime::reflect::Reflect;

const LIST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/interp_disagree.txt");

/// What happened to one kst.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The two readers agree (same tree, or both refused the input as the kst says).
    Agree,
    /// The interpreter refuses a construct of the schema.
    Unsupported(String),
    /// The two readers differ: how.
    Differ(String),
    /// The generator did not compile the schema (not compared).
    NotCompiled,
}

/// The registry the interpreter reads the suite with: `Rust` with the opaque types as the
/// generated modules' Rust types (to compare with the generated code), else as the suite's
/// schemas (what the CLI can be given). Panics when a suite schema of an opaque type does
/// not load (the suite is broken).
fn extensions(suite: &Path, rust: bool) -> &'static Extensions {
    static AS_RUST: OnceLock<Extensions> = OnceLock::new();
    static AS_SCHEMA: OnceLock<Extensions> = OnceLock::new();
    let schemas = || suite_extensions(&suite.join("formats")).expect("the suite's opaque types");
    if !rust {
        return AS_SCHEMA.get_or_init(schemas);
    }
    AS_RUST.get_or_init(|| {
        use super::suite_modules::{m_hello_world, m_opaque_external_type_02_child};
        schemas()
            .opaque(
                "hello_world",
                RustOpaque::<m_hello_world::HelloWorld>::new("hello_world"),
            )
            .opaque(
                "opaque_external_type_02_child",
                RustOpaque::<m_opaque_external_type_02_child::OpaqueExternalType02Child>::new(
                    "opaque_external_type_02_child",
                ),
            )
    })
}

/// Whether every assert of `k` holds on `root` (`Err` naming the first that does not), the
/// asserts typed over the kst's schema in the suite at `suite`.
fn asserts_hold(suite: &Path, k: &kst::Kst, root: &dyn Reflect) -> Result<(), String> {
    let schema = assert_schema(suite, &k.id)?;
    for a in &k.asserts {
        let Expectation::Value(want) = &a.expect else {
            continue;
        };
        let actual = eval_over(&schema, root, &a.actual)
            .map_err(|m| format!("`{}`: {m}", a.actual.trim()))?;
        let expected = eval_const(&schema, want).map_err(|m| format!("`{want}`: {m}"))?;
        check(&actual, &expected).map_err(|m| format!("`{}`: {m}", a.actual.trim()))?;
    }
    Ok(())
}

/// Compares the two readers on one kst.
pub fn compare_kst(suite: &Path, table: &[SchemaEntry], kst_file: &Path) -> Verdict {
    let text = match std::fs::read_to_string(kst_file) {
        Ok(t) => t,
        Err(e) => return Verdict::Differ(format!("cannot read the kst: {e}")),
    };
    let k = match kst::parse(&text, &kst_file.display().to_string()) {
        Ok(k) => k,
        Err(e) => return Verdict::Differ(format!("kst does not parse: {e}")),
    };
    let Some(entry) = table.iter().find(|e| e.id == k.id) else {
        return Verdict::NotCompiled;
    };
    let Outcome::Compiled { decode, .. } = entry.outcome else {
        return Verdict::NotCompiled;
    };
    let formats = suite.join("formats");
    let path = formats.join(format!("{}.ksy", k.id));
    let schema_text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => return Verdict::Differ(format!("cannot read the schema: {e}")),
    };
    let schema = match statepack_codegen::load_checked(
        &schema_text,
        entry.file,
        &path,
        &[formats.join("ks_path")],
    ) {
        Ok(s) => s,
        Err(d) => {
            return Verdict::Differ(format!(
                "the generator compiled it, the loader refused it: {}",
                d.first().map(|d| d.message.clone()).unwrap_or_default()
            ))
        }
    };
    let ext = extensions(suite, true);
    if let Some(why) = statepack_codegen::interp::unsupported_with(&schema, ext) {
        return Verdict::Unsupported(why);
    }
    let bytes = match std::fs::read(suite.join("src").join(&k.data)) {
        Ok(b) => b,
        Err(e) => return Verdict::Differ(format!("cannot read {}: {e}", k.data)),
    };
    let generated = decode(&bytes);
    let interpreted = statepack_codegen::interp::decode_with(&schema, &bytes, ext);
    match (generated, interpreted) {
        (Ok(g), Ok(i)) => {
            if let Err(d) = statepack_codegen::interp::compare(g.as_ref(), &i) {
                return Verdict::Differ(format!("trees differ at {d}"));
            }
            if asserts_hold(suite, &k, g.as_ref()).is_ok() {
                if let Err(m) = asserts_hold(suite, &k, &i) {
                    return Verdict::Differ(format!("asserts fail on the interpreter's tree: {m}"));
                }
            }
            Verdict::Agree
        }
        (Err(g), Err(i)) => {
            if let Some(exc) = &k.exception {
                if kinds::matches(exc, &g.kind).is_ok() {
                    if let Err(m) = kinds::matches(exc, &i.kind) {
                        return Verdict::Differ(format!("the interpreter's error: {m} ({i})"));
                    }
                }
            }
            Verdict::Agree
        }
        (Ok(_), Err(i)) => Verdict::Differ(format!("only the interpreter fails: {i}")),
        (Err(g), Ok(_)) => Verdict::Differ(format!("only the generated reader fails: {g}")),
    }
}

/// Whether the kst holds on the interpreter's reading alone (what `decode --schema`,
/// `inspect --schema` and `encode --schema` read): the expected error kind, or every assert
/// evaluated over the interpreter's tree. An assert that expects an error from evaluating
/// `actual` cannot hold on a tree (as through the generated code's dynamic view).
fn interp_passes(suite: &Path, kst_file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(kst_file) else {
        return false;
    };
    let Ok(k) = kst::parse(&text, &kst_file.display().to_string()) else {
        return false;
    };
    let formats = suite.join("formats");
    let path = formats.join(format!("{}.ksy", k.id));
    let Ok(schema_text) = std::fs::read_to_string(&path) else {
        return false;
    };
    let shown = format!("formats/{}.ksy", k.id);
    let Ok(schema) =
        statepack_codegen::load_checked(&schema_text, &shown, &path, &[formats.join("ks_path")])
    else {
        return false;
    };
    let ext = extensions(suite, false);
    if statepack_codegen::interp::unsupported_with(&schema, ext).is_some() {
        return false;
    }
    let Ok(bytes) = std::fs::read(suite.join("src").join(&k.data)) else {
        return false;
    };
    match (
        statepack_codegen::interp::decode_with(&schema, &bytes, ext),
        &k.exception,
    ) {
        (Err(e), Some(exc)) => kinds::matches(exc, &e.kind).is_ok(),
        (Ok(root), None) => {
            !k.asserts
                .iter()
                .any(|a| matches!(a.expect, Expectation::Exception(_)))
                && asserts_hold(suite, &k, &root).is_ok()
        }
        _ => false,
    }
}

fn sorted_ksts(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("spec").join("ks"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "kst"));
    v.sort();
    v
}

fn parse_list(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_once(':') {
            Some((id, why)) => (id.trim().to_owned(), why.trim().to_owned()),
            None => (l.to_owned(), String::new()),
        })
        .collect()
}

/// Runs the comparison over the whole suite and checks it against the list.
pub fn run(dir: &str, table: &'static [SchemaEntry]) {
    let suite = Path::new(dir).to_owned();
    let mut results: Vec<(String, Verdict)> = Vec::new();
    for kst_file in sorted_ksts(&suite) {
        let id = kst_file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_owned();
        let (s, f) = (suite.clone(), kst_file.clone());
        let v = guarded(Duration::from_secs(20), move || compare_kst(&s, table, &f))
            .unwrap_or_else(Verdict::Differ);
        results.push((id, v));
    }
    let mut text = String::new();
    let (mut agree, mut differ, mut unsupported, mut compared) = (0, 0, 0, 0);
    let mut now: BTreeMap<String, String> = BTreeMap::new();
    for (id, v) in &results {
        match v {
            Verdict::NotCompiled => continue,
            Verdict::Agree => {
                agree += 1;
                text.push_str(&format!("agree        {id}\n"));
            }
            Verdict::Unsupported(why) => {
                unsupported += 1;
                text.push_str(&format!("unsupported  {id}: {why}\n"));
                now.insert(id.clone(), format!("unsupported: {why}"));
            }
            Verdict::Differ(why) => {
                differ += 1;
                text.push_str(&format!("DIFFER       {id}: {why}\n"));
                now.insert(id.clone(), why.replace('\n', " "));
            }
        }
        compared += 1;
    }
    let all = sorted_ksts(&suite);
    let through_interp = all
        .iter()
        .filter(|f| {
            let (s, f) = (suite.clone(), (*f).clone());
            guarded(Duration::from_secs(20), move || interp_passes(&s, &f)).unwrap_or(false)
        })
        .count();
    let summary = format!(
        "interpreter vs generated code: {agree} of {compared} compiled kst agree, {differ} differ, {unsupported} refused by the interpreter\n\
         conformance through the interpreter (the reading of decode/inspect/encode --schema): {through_interp} of {} kst hold (round trip not checked)",
        all.len()
    );
    text.push_str(&summary);
    text.push('\n');
    print!("{text}");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("interp-oracle-report.txt");
    let _ = std::fs::write(&out, &text);
    eprintln!("{summary}\n(report: {})", out.display());
    if std::env::var("STATEPACK_UPDATE_INTERP").is_ok_and(|v| v == "1") {
        let mut body = String::from(
            "# Conformance kst on which the interpreter (statepack_codegen::interp) and the generated\n\
             # code disagree, or whose schema the interpreter refuses: `id: reason`. Checked by\n\
             # conformance/tests/oracle; regenerate with STATEPACK_UPDATE_INTERP=1 (docs/conformance.md).\n",
        );
        for (id, why) in &now {
            body.push_str(&format!("{id}: {why}\n"));
        }
        std::fs::write(LIST, body).expect("write interp_disagree.txt");
        eprintln!("rewrote {LIST}");
        return;
    }
    let listed = parse_list(&std::fs::read_to_string(LIST).unwrap_or_default());
    let mut problems = String::new();
    for (id, why) in &now {
        if !listed.contains_key(id) {
            problems.push_str(&format!(
                "  differs, not in interp_disagree.txt: {id}: {why}\n"
            ));
        }
    }
    for (id, v) in &results {
        if listed.contains_key(id) && *v == Verdict::Agree {
            problems.push_str(&format!(
                "  agrees, remove from interp_disagree.txt: {id}\n"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "interpreter oracle:\n{problems}{summary}"
    );
}

/// A value as `encode` takes it (what `decode --schema` prints, parsed): user types as
/// objects of their members, bytes as hex, enums by their integer.
fn given_of(v: &statepack_codegen::interp::DynValue) -> statepack_codegen::interp::Given {
    use statepack_codegen::interp::{DynValue, Given};
    match v {
        DynValue::Null | DynValue::Io { .. } => Given::Null,
        DynValue::Bool(b) => Given::Bool(*b),
        DynValue::Int(i) => Given::Int(*i),
        DynValue::Float(f) => Given::Float(*f),
        DynValue::Str(s) => Given::Str(s.clone()),
        DynValue::Bytes(b) => Given::Str(b.iter().map(|x| format!("{x:02x}")).collect()),
        DynValue::Enum(e) => Given::Int(e.value),
        DynValue::List(items) => Given::List(items.iter().map(given_of).collect()),
        DynValue::Struct(s) => Given::Map(
            s.members
                .iter()
                .map(|(k, v)| ((*k).to_owned(), given_of(v)))
                .collect(),
        ),
    }
}

/// The kst whose schemas write back through `encode` whatever processor they use, but with the
/// suite's processor: `process_repeat_usertype_dynarg_custom` (as its twin with `xor`,
/// `process_repeat_usertype_dynarg_xor`) has a processed user type of 5 bytes whose value
/// reads 4, the fifth read only by a positional instance of another type (`io:
/// _parent.blocks[0]._io`), which the writer does not write into that substream: `encode`
/// refuses it naming the field (`the processed value takes 4 byte(s) but the size is 5`).
const NOT_WRITTEN: &[&str] = &["process_repeat_usertype_dynarg_custom"];

/// The kst whose schemas use the suite's custom processors or opaque types: read with the
/// interpreter (the opaque types as schemas), written back with `encode_with` from the value
/// read, and required to give the bytes read, byte for byte (those of [`NOT_WRITTEN`]: the
/// writer's refusal, naming the field).
pub fn round_trip_extensions(dir: &str) {
    let suite = Path::new(dir);
    let ext = extensions(suite, false);
    let mut checked = 0;
    for kst_file in sorted_ksts(suite) {
        let Ok(text) = std::fs::read_to_string(&kst_file) else {
            continue;
        };
        let Ok(k) = kst::parse(&text, &kst_file.display().to_string()) else {
            continue;
        };
        let path = suite.join("formats").join(format!("{}.ksy", k.id));
        let Ok(schema_text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let shown = format!("formats/{}.ksy", k.id);
        let formats = suite.join("formats");
        let Ok(schema) = statepack_codegen::load_checked(
            &schema_text,
            &shown,
            &path,
            &[formats.join("ks_path")],
        ) else {
            continue;
        };
        // Only the schemas that need the registry.
        if statepack_codegen::interp::unsupported(&schema).is_none()
            || statepack_codegen::interp::unsupported_with(&schema, ext).is_some()
        {
            continue;
        }
        let bytes = std::fs::read(suite.join("src").join(&k.data)).expect("the kst's input");
        let root = statepack_codegen::interp::decode_with(&schema, &bytes, ext)
            .unwrap_or_else(|e| panic!("{}: {e}", k.id));
        let given = given_of(&statepack_codegen::interp::DynValue::Struct(
            std::sync::Arc::new(root.clone()),
        ));
        let res = statepack_codegen::interp::encode_with(&schema, &given, ext);
        if NOT_WRITTEN.contains(&k.id.as_str()) {
            let m = res.expect_err("refused by the writer");
            assert!(
                m.contains("the processed value takes 4 byte(s) but the size is 5"),
                "{m}"
            );
            checked += 1;
            continue;
        }
        let (written, _) = res.unwrap_or_else(|m| panic!("{}: {m}", k.id));
        let end = root.read_extent() as usize;
        assert_eq!(written, bytes[..end], "{}: written back differently", k.id);
        checked += 1;
    }
    eprintln!(
        "{checked} schemas with custom processors or opaque types checked: written back byte-identical, or ({}) refused as without them",
        NOT_WRITTEN.join(", ")
    );
    assert_eq!(
        checked, 6,
        "the suite's six schemas with processors or opaque types"
    );
}
