//! Kaitai Struct's conformance suite against the generated Rust: every `spec/ks/*.kst` and
//! every `formats_err/*.ksy`, compared with `conformance/failing_tests.txt`.
//!
//! Prints one line per test and a summary line (`cargo test -p statepack-conformance --test
//! kaitai_suite -- --nocapture`), and writes the same report to
//! `<target>/tmp/conformance-report.txt`. Fails when a test that is not on the list fails,
//! or when a listed test passes. `STATEPACK_UPDATE_FAILING=1` rewrites the list from this
//! run first (see [`KnownFailures::updated`] for which reasons it keeps; review the diff).
//! See docs/conformance.md.

use statepack_conformance::known::KnownFailures;
use statepack_conformance::run::Report;
use statepack_conformance::{Outcome, SchemaEntry};

include!(concat!(env!("OUT_DIR"), "/suite.rs"));

/// The interpreter against the generated modules (`tests/oracle/mod.rs`).
mod oracle;

/// The interpreter reads every compiled suite input as the generated code does.
#[test]
fn interpreter_agrees_with_generated_code() {
    let Some(dir) = SUITE_DIR else {
        assert!(
            !under_ci(),
            "Kaitai Struct's test suite not found at {SUITE_LOOKED_AT}"
        );
        eprintln!("skipped: Kaitai Struct's test suite not found at {SUITE_LOOKED_AT}");
        return;
    };
    oracle::run(dir, SCHEMAS);
}

/// The suite's schemas with custom processors or opaque types, read and written back by the
/// interpreter with them registered, give the bytes read.
#[test]
fn interpreter_writes_through_processors_and_opaque_types() {
    let Some(dir) = SUITE_DIR else {
        assert!(
            !under_ci(),
            "Kaitai Struct's test suite not found at {SUITE_LOOKED_AT}"
        );
        return;
    };
    oracle::round_trip_extensions(dir);
}

/// The suite's opaque types (`ks-opaque-types` schemas) are the suite's own generated
/// modules of the same name (`suite_options` in build.rs maps the names to them).
macro_rules! opaque_from_generated {
    ($($t:path),*) => {$(
        impl statepack_runtime::process::OpaqueType for $t {
            const MIN_LEN: usize = <$t>::MIN_LEN;
            fn read_from<T: statepack_runtime::io::Tracer>(
                r: &mut statepack_runtime::io::ByteReader<'_, T>,
            ) -> Result<Self, statepack_runtime::io::DecodeError> {
                <$t>::read_from(r)
            }
            fn write_to(
                &self,
                w: &mut statepack_runtime::io::ByteWriter,
            ) -> Result<(), statepack_runtime::io::EncodeError> {
                <$t>::write_to(self, w)
            }
            fn encoded_len(&self) -> usize {
                <$t>::encoded_len(self)
            }
        }
    )*};
}
opaque_from_generated!(
    suite_modules::m_hello_world::HelloWorld,
    suite_modules::m_opaque_external_type_02_child::OpaqueExternalType02Child
);

/// `params_def` as the opaque type of `opaque_with_param` (`type: params_def(5, true)`):
/// the suite's generated module, read with the two arguments the schema gives.
impl statepack_runtime::process::OpaqueType for suite_modules::m_params_def::ParamsDef {
    const MIN_LEN: usize = Self::MIN_LEN;
    fn read_from<T: statepack_runtime::io::Tracer>(
        r: &mut statepack_runtime::io::ByteReader<'_, T>,
    ) -> Result<Self, statepack_runtime::io::DecodeError> {
        Self::read_with_args(r, &[])
    }
    fn read_with_args<T: statepack_runtime::io::Tracer>(
        r: &mut statepack_runtime::io::ByteReader<'_, T>,
        args: &[statepack_runtime::process::OpaqueArg<'_>],
    ) -> Result<Self, statepack_runtime::io::DecodeError> {
        use statepack_runtime::process::OpaqueArg;
        match args {
            [OpaqueArg::Int(len), OpaqueArg::Bool(has_trailer)] => {
                Self::read_from(r, *len, *has_trailer)
            }
            _ => Err(statepack_runtime::io::DecodeError::new(
                r.offset(),
                statepack_runtime::io::DecodeErrorKind::Semantic(format!(
                    "params_def takes (len, has_trailer), given {args:?}"
                )),
            )),
        }
    }
    fn write_to(
        &self,
        w: &mut statepack_runtime::io::ByteWriter,
    ) -> Result<(), statepack_runtime::io::EncodeError> {
        Self::write_to(self, w)
    }
    fn encoded_len(&self) -> usize {
        Self::encoded_len(self)
    }
}

const LIST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/failing_tests.txt");
const LIST_HEADER: &str = "\
# Kaitai Struct conformance tests that do not pass, one `name: reason` a line (kst id, or
# formats_err/<file>). The conformance test fails when a test missing here fails, and when
# a test listed here passes. Regenerate with STATEPACK_UPDATE_FAILING=1 (docs/conformance.md).
";

fn under_ci() -> bool {
    std::env::var("CI")
        .map(|v| v.trim() == "1" || v.trim().eq_ignore_ascii_case("true"))
        .unwrap_or(false)
}

#[test]
fn kaitai_conformance_suite() {
    let Some(dir) = SUITE_DIR else {
        let msg = format!(
            "skipped: Kaitai Struct's test suite not found at {SUITE_LOOKED_AT} (set STATEPACK_KAITAI_TESTS and rebuild)"
        );
        assert!(!under_ci(), "{msg}; under CI the suite must be present");
        eprintln!("{msg}");
        return;
    };
    // Every compiled module is reached through the table, so none is dead code.
    let compiled = SCHEMAS
        .iter()
        .filter(|e| matches!(e.outcome, Outcome::Compiled { .. }))
        .count();
    eprintln!(
        "suite: {dir}; {} schemas, {compiled} compiled with reflection",
        SCHEMAS.len()
    );
    let report = Report::run(std::path::Path::new(dir), SCHEMAS);
    let text = std::fs::read_to_string(LIST).unwrap_or_default();
    let mut known = KnownFailures::parse(&text).unwrap_or_else(|e| panic!("{LIST}: {e}"));
    if std::env::var("STATEPACK_UPDATE_FAILING").is_ok_and(|v| v == "1") {
        let fresh = known.updated(&report.failures());
        std::fs::write(LIST, KnownFailures::render(LIST_HEADER, &fresh))
            .expect("write failing_tests.txt");
        eprintln!("rewrote {LIST}");
        known = KnownFailures::parse(&std::fs::read_to_string(LIST).unwrap_or_default())
            .expect("just written");
    }
    let verdict = report.verdict(&known);
    print!("{}", verdict.text);
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-report.txt");
    let _ = std::fs::write(&out, &verdict.text);
    eprintln!("{}\n(report: {})", verdict.summary, out.display());
    let mut problems = String::new();
    for (name, reason) in &verdict.new_failures {
        problems.push_str(&format!(
            "  fails, not in failing_tests.txt: {name}: {reason}\n"
        ));
    }
    for name in &verdict.now_passing {
        problems.push_str(&format!(
            "  passes, remove from failing_tests.txt: {name}\n"
        ));
    }
    for name in &verdict.unknown_names {
        problems.push_str(&format!(
            "  failing_tests.txt names no test of the suite: {name}\n"
        ));
    }
    assert!(
        problems.is_empty(),
        "conformance differs from failing_tests.txt:\n{problems}{}",
        verdict.summary
    );
}

/// The dispatch table has one row per suite schema, each naming its file.
#[test]
fn table_covers_the_suite_formats() {
    let Some(dir) = SUITE_DIR else { return };
    let on_disk = std::fs::read_dir(std::path::Path::new(dir).join("formats"))
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "ksy"))
                .count()
        })
        .unwrap_or(0);
    assert_eq!(SCHEMAS.len(), on_disk);
    let entry: &SchemaEntry = &SCHEMAS[0];
    assert_eq!(entry.file, format!("formats/{}.ksy", entry.id));
}

/// The runner fails a kst whose expectation is wrong, and says why: a wrong value, a wrong
/// exception, an exception where the input decodes, an unknown member, a refused schema.
/// Runs on a scratch suite holding one real input and hand-written kst files.
#[test]
fn runner_reports_wrong_expectations() {
    use statepack_conformance::run::{run_kst, Status};
    let Some(dir) = SUITE_DIR else { return };
    let (Some(hello), Some(eof)) = (
        SCHEMAS.iter().find(|e| e.id == "hello_world"),
        SCHEMAS.iter().find(|e| e.id == "eof_exception_u4"),
    ) else {
        return;
    };
    if !matches!(
        (hello.outcome, eof.outcome),
        (Outcome::Compiled { .. }, Outcome::Compiled { .. })
    ) {
        eprintln!("skipped: hello_world or eof_exception_u4 is not generated with reflection");
        return;
    }
    let scratch = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("conformance-scratch");
    std::fs::create_dir_all(scratch.join("src")).unwrap();
    std::fs::create_dir_all(scratch.join("formats")).unwrap();
    for f in [
        "src/fixed_struct.bin",
        "src/term_strz.bin",
        "formats/hello_world.ksy",
        "formats/eof_exception_u4.ksy",
    ] {
        std::fs::copy(std::path::Path::new(dir).join(f), scratch.join(f)).unwrap();
    }
    let run = |name: &str, kst: &str| {
        let path = scratch.join(format!("{name}.kst"));
        std::fs::write(&path, kst).unwrap();
        run_kst(&scratch, SCHEMAS, &path)
    };
    let ok = run(
        "ok",
        "id: hello_world\ndata: fixed_struct.bin\nasserts:\n  - actual: one\n    expected: 0x50\n",
    );
    assert_eq!(ok, Status::Pass);
    let fail = |s: Status| match s {
        Status::Fail(r) => r,
        other => panic!("expected a failure, got {other:?}"),
    };
    let r = fail(run(
        "value",
        "id: hello_world\ndata: fixed_struct.bin\nasserts:\n  - actual: one\n    expected: 0x51\n",
    ));
    assert_eq!(r, "`one`: got 80, expected 81");
    let r = fail(run(
        "member",
        "id: hello_world\ndata: fixed_struct.bin\nasserts:\n  - actual: two\n    expected: 1\n",
    ));
    assert!(r.contains("has no field or instance `two`"), "{r}");
    let r = fail(run(
        "exc",
        "id: hello_world\ndata: fixed_struct.bin\nexception: EndOfStreamError\n",
    ));
    assert!(
        r.contains("expected EndOfStreamError, but the input decoded"),
        "{r}"
    );
    let r = fail(run(
        "kind",
        "id: eof_exception_u4\ndata: term_strz.bin\nexception: ValidationNotEqualError<u4>\n",
    ));
    assert!(
        r.contains("expected ValidationNotEqualError<u4>") && r.contains("got UnexpectedEof"),
        "{r}"
    );
    if let Some(refused) = SCHEMAS
        .iter()
        .find(|e| matches!(e.outcome, Outcome::Refused(_)))
    {
        let s = run(
            "refused",
            &format!("id: {}\ndata: fixed_struct.bin\n", refused.id),
        );
        assert!(matches!(s, Status::Refused(_)), "{s:?}");
    }
}
