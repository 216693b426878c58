//! Running the suite: one kst, one `formats_err` schema, and the report over all of them.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use crate::compare::{assert_schema, check, eval_const, eval_over};
use crate::errs::{self, Header};
use crate::known::KnownFailures;
use crate::kst::{self, Expectation};
use crate::{kinds, Outcome, SchemaEntry};

/// How long one kst (decode, asserts, round trip), or generating one `formats_err` schema,
/// may take before it counts as hung.
pub const KST_TIMEOUT: Duration = Duration::from_secs(20);

/// The result of one test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Everything held.
    Pass,
    /// The generator refused the schema (its first diagnostic line).
    Refused(String),
    /// Something did not hold, with what.
    Fail(String),
}

impl Status {
    /// The reason, for a test that did not pass.
    pub fn reason(&self) -> Option<String> {
        match self {
            Status::Pass => None,
            Status::Refused(r) => Some(format!("{}{r}", crate::known::REFUSED_PREFIX)),
            Status::Fail(r) => Some(r.clone()),
        }
    }
}

/// One kst: decode its input with the generated reader, check every assert (or the
/// exception), then round-trip the input. Runs on its own thread so that a panic or a hang in
/// generated code fails this kst only ([`KST_TIMEOUT`]).
pub fn run_kst(suite: &Path, table: &'static [SchemaEntry], kst_file: &Path) -> Status {
    let (suite, kst_file) = (suite.to_owned(), kst_file.to_owned());
    guarded(KST_TIMEOUT, move || run_kst_here(&suite, table, &kst_file))
        .unwrap_or_else(Status::Fail)
}

/// Runs `f` on its own thread. Errors: "panicked: <message>" when it panics, "did not finish
/// within N s" when it takes longer than `timeout` (the thread is left behind; it ends with
/// the process).
pub fn guarded<T: Send + 'static>(
    timeout: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(timeout) {
        Ok(v) => {
            let _ = handle.join();
            Ok(v)
        }
        Err(mpsc::RecvTimeoutError::Timeout) => Err(format!("did not finish within {timeout:?}")),
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            let msg = match handle.join() {
                Err(payload) => payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_else(|| "a non-text panic".to_owned()),
                Ok(()) => "the thread ended without a result".to_owned(),
            };
            Err(format!("panicked: {msg}"))
        }
    }
}

fn run_kst_here(suite: &Path, table: &[SchemaEntry], kst_file: &Path) -> Status {
    let name = kst_file.display().to_string();
    let text = match std::fs::read_to_string(kst_file) {
        Ok(t) => t,
        Err(e) => return Status::Fail(format!("cannot read {name}: {e}")),
    };
    let kst = match kst::parse(&text, &name) {
        Ok(k) => k,
        Err(e) => return Status::Fail(format!("kst does not parse: {e}")),
    };
    let Some(entry) = table.iter().find(|e| e.id == kst.id) else {
        return Status::Fail(format!("no schema formats/{}.ksy in the suite", kst.id));
    };
    let (decode, roundtrip) = match entry.outcome {
        Outcome::Compiled { decode, roundtrip } => (decode, roundtrip),
        Outcome::Refused(why) => return Status::Refused(why.to_owned()),
        Outcome::Dropped(why) => return Status::Fail(why.to_owned()),
        Outcome::CompiledWithoutReflect => {
            return Status::Fail(
                "generated module has no reflect_decode/reflect_roundtrip".to_owned(),
            )
        }
    };
    let data_path = suite.join("src").join(&kst.data);
    let bytes = match std::fs::read(&data_path) {
        Ok(b) => b,
        Err(e) => return Status::Fail(format!("cannot read {}: {e}", data_path.display())),
    };
    let decoded = decode(&bytes);
    if let Some(exc) = &kst.exception {
        return match decoded {
            Err(e) => match kinds::matches(exc, &e.kind) {
                Ok(()) => Status::Pass,
                Err(m) => Status::Fail(format!("{m} at {} (byte offset {})", e.path, e.offset)),
            },
            Ok(_) => Status::Fail(format!("expected {exc}, but the input decoded")),
        };
    }
    let root = match decoded {
        Ok(r) => r,
        Err(e) => return Status::Fail(format!("decode failed: {e}")),
    };
    if !kst.asserts.is_empty() {
        let schema = match assert_schema(suite, &kst.id) {
            Ok(s) => s,
            Err(m) => return Status::Fail(format!("the asserts' schema does not load: {m}")),
        };
        for a in &kst.asserts {
            let fail = |m: String| Status::Fail(format!("`{}`: {m}", a.actual.trim()));
            let actual = match eval_over(&schema, root.as_ref(), &a.actual) {
                Ok(v) => v,
                Err(m) => {
                    return match &a.expect {
                        Expectation::Exception(x) => fail(format!(
                        "expected {x}; evaluating through Reflect gave no error kind, only: {m}"
                    )),
                        Expectation::Value(_) => fail(m),
                    }
                }
            };
            match &a.expect {
                Expectation::Exception(x) => {
                    return fail(format!("expected {x}, got the value {actual}"))
                }
                Expectation::Value(want) => {
                    let expected = match eval_const(&schema, want)
                        .map_err(|e| format!("expected side: {e}"))
                    {
                        Ok(v) => v,
                        Err(m) => return fail(m),
                    };
                    if let Err(m) = check(&actual, &expected) {
                        return fail(m);
                    }
                }
            }
        }
    }
    drop(root);
    match roundtrip(&bytes) {
        Err(e) => Status::Fail(format!("round trip: {e}")),
        Ok(out) => match first_difference(&out, &bytes) {
            None => Status::Pass,
            Some(at) => Status::Fail(format!(
                "round trip: wrote {} byte(s), which differ from the input at byte {at}",
                out.len()
            )),
        },
    }
}

/// Where `written` stops being a prefix of `input` (`None` when it is one).
fn first_difference(written: &[u8], input: &[u8]) -> Option<usize> {
    let common = written
        .iter()
        .zip(input)
        .take_while(|(a, b)| a == b)
        .count();
    if common == written.len() {
        None
    } else {
        Some(common)
    }
}

/// The result of one `formats_err` schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrResult {
    /// `formats_err/<file>`.
    pub name: String,
    /// `Some(true)` when the header names an error, `Some(false)` for a valid schema,
    /// `None` when the header names neither.
    pub erroneous: Option<bool>,
    /// Pass: refused when erroneous, accepted when valid.
    pub status: Status,
    /// For a refusal whose messages are not about Kaitai's problem: what was looked for
    /// (reported, not failed).
    pub note: Option<String>,
}

/// One `formats_err` schema: refused when its header names an error (and for a reason about
/// that error), accepted otherwise.
pub fn run_err_schema(path: &Path) -> ErrResult {
    let name = format!(
        "formats_err/{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("?")
    );
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return ErrResult {
                name,
                erroneous: None,
                status: Status::Fail(format!("cannot read: {e}")),
                note: None,
            }
        }
    };
    let header = errs::header(&text);
    let erroneous = match &header {
        Header::Error(_) => Some(true),
        Header::Warning(_) | Header::None => Some(false),
        Header::Unclear(_) => None,
    };
    // Imports are found as the build and the CLI find them: next to the schema's own file.
    let generated = {
        let (text, name, path) = (text.clone(), name.clone(), path.to_owned());
        guarded(KST_TIMEOUT, move || {
            statepack_codegen::generate_at(&text, &name, &path)
        })
    };
    let result = match generated {
        Ok(r) => r,
        Err(why) => {
            let status = Status::Fail(format!("the generator {why}"));
            return ErrResult {
                name,
                erroneous,
                status,
                note: None,
            };
        }
    };
    let (status, note) = match (header, result) {
        (Header::Error(msg), Ok(_)) => (
            Status::Fail(format!("accepted; Kaitai refuses it: {msg}")),
            None,
        ),
        (Header::Error(msg), Err(diags)) => {
            let ours: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
            (Status::Pass, errs::about_the_problem(&msg, &ours).err())
        }
        (Header::Warning(_) | Header::None, Ok(_)) => (Status::Pass, None),
        (Header::Warning(_) | Header::None, Err(diags)) => {
            let first = diags.first().map(|d| d.to_string()).unwrap_or_default();
            let line = first.lines().next().unwrap_or("");
            let line = line.strip_prefix(&format!("{name}:")).unwrap_or(line);
            (
                Status::Fail(format!("valid for Kaitai, refused: {line}")),
                None,
            )
        }
        (Header::Unclear(h), _) => (
            Status::Pass,
            Some(format!("header names no error (`# {h}`): not checked")),
        ),
    };
    ErrResult {
        name,
        erroneous,
        status,
        note,
    }
}

/// Every result of a suite run, in file-name order.
#[derive(Debug, Default)]
pub struct Report {
    /// `(kst id, status)`.
    pub kst: Vec<(String, Status)>,
    /// Every `formats_err` schema.
    pub errs: Vec<ErrResult>,
}

/// The comparison of a report with the known-failures list.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Tests that failed and are not listed: `(name, reason)`.
    pub new_failures: Vec<(String, String)>,
    /// Tests that are listed but passed.
    pub now_passing: Vec<String>,
    /// Listed names that name no test of this suite.
    pub unknown_names: Vec<String>,
    /// The report text: one line per test, then the summary line.
    pub text: String,
    /// The summary line.
    pub summary: String,
}

impl Report {
    /// Runs every `spec/ks/*.kst` and every `formats_err/*.ksy` of `suite`.
    pub fn run(suite: &Path, table: &'static [SchemaEntry]) -> Report {
        let mut report = Report::default();
        for path in sorted_files(&suite.join("spec").join("ks"), "kst") {
            let id = stem(&path);
            report.kst.push((id, run_kst(suite, table, &path)));
        }
        for path in sorted_files(&suite.join("formats_err"), "ksy") {
            report.errs.push(run_err_schema(&path));
        }
        report
    }

    /// Every test that did not pass, with its reason (the content of a fresh
    /// `failing_tests.txt`).
    pub fn failures(&self) -> Vec<(String, String)> {
        let kst = self
            .kst
            .iter()
            .filter_map(|(n, s)| s.reason().map(|r| (n.clone(), r)));
        let errs = self
            .errs
            .iter()
            .filter_map(|e| e.status.reason().map(|r| (e.name.clone(), r)));
        kst.chain(errs).collect()
    }

    /// Compares with the known-failures list and writes the report text.
    pub fn verdict(&self, known: &KnownFailures) -> Verdict {
        let mut v = Verdict::default();
        let mut text = String::new();
        let (mut passed, mut failed, mut refused, mut known_n) = (0, 0, 0, 0);
        let mut line = |name: &str, status: &Status, note: Option<&String>, v: &mut Verdict| {
            let listed = known.contains(name);
            match status {
                Status::Pass => {
                    if listed {
                        v.now_passing.push(name.to_owned());
                        text.push_str(&format!(
                            "pass  {name}  (listed as failing: remove it from failing_tests.txt)\n"
                        ));
                    } else {
                        text.push_str(&format!("pass  {name}\n"));
                    }
                }
                s => {
                    let reason = s.reason().unwrap_or_default();
                    let tag = if listed { "known" } else { "NEW" };
                    text.push_str(&format!("FAIL  {name}  [{tag}] {reason}\n"));
                    if !listed {
                        v.new_failures.push((name.to_owned(), reason));
                    }
                }
            }
            if let Some(n) = note {
                text.push_str(&format!("      note: {n}\n"));
            }
        };
        for (name, status) in &self.kst {
            line(name, status, None, &mut v);
            match status {
                Status::Pass => passed += 1,
                Status::Refused(_) => refused += 1,
                Status::Fail(_) => failed += 1,
            }
            if status != &Status::Pass && known.contains(name) {
                known_n += 1;
            }
        }
        let (mut err_total, mut err_refused, mut err_about, mut valid_total, mut valid_ok) =
            (0, 0, 0, 0, 0);
        for e in &self.errs {
            line(&e.name, &e.status, e.note.as_ref(), &mut v);
            let pass = e.status == Status::Pass;
            match e.erroneous {
                Some(true) => {
                    err_total += 1;
                    err_refused += pass as usize;
                    err_about += (pass && e.note.is_none()) as usize;
                }
                Some(false) => {
                    valid_total += 1;
                    valid_ok += pass as usize;
                }
                None => {}
            }
        }
        let names: std::collections::BTreeSet<&str> = self
            .kst
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(self.errs.iter().map(|e| e.name.as_str()))
            .collect();
        v.unknown_names = known
            .entries
            .keys()
            .filter(|k| !names.contains(k.as_str()))
            .cloned()
            .collect();
        let total = self.kst.len();
        v.summary = format!(
            "conformance: {passed} passed, {} failed ({refused} refused by the generator, {failed} failed after generating; {known_n} known), of {total} kst; formats_err: {err_refused} of {err_total} erroneous schemas refused ({err_about} for the right reason), {valid_ok} of {valid_total} valid ones accepted",
            refused + failed
        );
        text.push_str(&v.summary);
        text.push('\n');
        v.text = text;
        v
    }
}

fn sorted_files(dir: &Path, ext: &str) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p: &std::path::PathBuf| p.extension().and_then(|x| x.to_str()) == Some(ext));
    v.sort();
    v
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("?")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guarded_reports_panics_and_hangs() {
        assert_eq!(guarded(Duration::from_secs(5), || 7), Ok(7));
        let e = guarded(Duration::from_secs(5), || -> u8 { panic!("boom") }).unwrap_err();
        assert_eq!(e, "panicked: boom");
        let e = guarded(Duration::from_millis(50), || {
            std::thread::sleep(Duration::from_secs(2))
        })
        .unwrap_err();
        assert_eq!(e, "did not finish within 50ms");
    }

    #[test]
    fn round_trip_output_must_be_a_prefix_of_the_input() {
        assert_eq!(first_difference(b"abc", b"abcd"), None);
        assert_eq!(first_difference(b"abc", b"abc"), None);
        assert_eq!(first_difference(b"abx", b"abc"), Some(2));
        assert_eq!(first_difference(b"abcde", b"abc"), Some(3));
    }
}
