//! Finds the real input files that tests, benchmarks and the demo read in place.
//!
//! Real motion and the study's clips belong to other public projects, so the workspace never
//! holds a copy: they live in a shared folder next to it, `<workspace root>/../shared/fixtures`
//! (for this checkout, `../shared/fixtures` relative to the workspace's `Cargo.toml`). The
//! environment variable [`FIXTURES_ENV`] (`STATEPACK_FIXTURES`) points somewhere else when set.
//!
//! Everything that wants a fixture goes through this module:
//!
//! - [`fixtures_dir`] says where the folder is,
//! - [`fixture_path`] resolves one file and reports a [`FixtureMissing`] error when it is absent,
//! - [`fixture_for_test`] is the test form: under CI (`CI=true` or `CI=1`) a missing fixture
//!   fails the test; elsewhere the test prints why it skipped and returns early.
//!
//! ```no_run
//! use statepack_runtime::fixtures::fixture_for_test;
//!
//! let Some(path) = fixture_for_test("motion/cmu-131-01-walk.bvh") else {
//!     return; // skipped (message already printed)
//! };
//! let text = std::fs::read_to_string(path).unwrap();
//! assert!(text.starts_with("HIERARCHY"));
//! ```

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Name of the environment variable that overrides the fixtures folder: `STATEPACK_FIXTURES`.
///
/// When set to a non-empty value it is used as the fixtures folder as is (absolute, or relative
/// to the current directory of the process). An empty value counts as unset.
pub const FIXTURES_ENV: &str = "STATEPACK_FIXTURES";

/// Name of the environment variable that marks a continuous-integration run: `CI`.
///
/// [`fixture_for_test`] treats `true` (any ASCII case) and `1` as "running under CI".
pub const CI_ENV: &str = "CI";

/// A fixture file that is not where it was looked for.
///
/// Displays as `fixture <rel> not found at <path> (set STATEPACK_FIXTURES to the fixtures
/// folder)`, so the message alone tells a reader what to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "fixture {rel} not found at {} (set {FIXTURES_ENV} to the fixtures folder)",
    path.display()
)]
pub struct FixtureMissing {
    /// The path that was asked for, relative to the fixtures folder (`motion/fox.glb`).
    pub rel: String,
    /// The full path that was checked.
    pub path: PathBuf,
}

/// The fixtures folder.
///
/// Returns the value of [`FIXTURES_ENV`] when it is set and non-empty; otherwise
/// `<workspace root>/../shared/fixtures`, where the workspace root is the folder above this
/// crate's manifest (compiled in, so it points into the source checkout that was built). The
/// default is canonicalised when it exists, so messages show a clean absolute path; otherwise it
/// is returned unnormalised. The folder is not required to exist.
pub fn fixtures_dir() -> PathBuf {
    dir_from_env(std::env::var_os(FIXTURES_ENV))
}

/// The full path of fixture `rel` (a path relative to the fixtures folder, `/`-separated, such
/// as `study/study-walk.json`), checked to exist.
///
/// # Errors
///
/// [`FixtureMissing`] when nothing exists at `fixtures_dir().join(rel)`; the error holds that
/// path. (An absolute `rel` replaces the folder, as [`Path::join`] does.)
pub fn fixture_path(rel: &str) -> Result<PathBuf, FixtureMissing> {
    locate(&fixtures_dir(), rel)
}

/// Resolves fixture `rel` for a test: `Some(path)` when the file exists.
///
/// When it is missing: under CI (environment [`CI_ENV`] is `true` or `1`) this panics, so a
/// missing fixture fails the run; otherwise it prints
/// `skipped: fixture <rel> not found at <path> (set STATEPACK_FIXTURES)` to standard error and
/// returns `None`, and the caller returns early.
///
/// # Panics
///
/// Only under CI, and only when the fixture is missing; that is its purpose.
pub fn fixture_for_test(rel: &str) -> Option<PathBuf> {
    match fixture_path(rel) {
        Ok(path) => Some(path),
        Err(missing) => {
            let under_ci = is_ci(std::env::var_os(CI_ENV).as_deref().and_then(|v| v.to_str()));
            if under_ci {
                panic!("{missing}; under CI every fixture must be present");
            }
            eprintln!("{}", skip_message(&missing));
            None
        }
    }
}

/// The default folder: `<workspace root>/../shared/fixtures`.
fn default_dir() -> PathBuf {
    let workspace_root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let dir = workspace_root.join("..").join("shared").join("fixtures");
    dir.canonicalize().unwrap_or(dir)
}

/// The fixtures folder for a given value of [`FIXTURES_ENV`].
fn dir_from_env(value: Option<OsString>) -> PathBuf {
    match value {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => default_dir(),
    }
}

/// Whether a value of [`CI_ENV`] means "running under CI".
fn is_ci(value: Option<&str>) -> bool {
    match value {
        Some(v) => {
            let v = v.trim();
            v == "1" || v.eq_ignore_ascii_case("true")
        }
        None => false,
    }
}

fn locate(dir: &Path, rel: &str) -> Result<PathBuf, FixtureMissing> {
    let path = dir.join(rel);
    if path.exists() {
        Ok(path)
    } else {
        Err(FixtureMissing {
            rel: rel.to_owned(),
            path,
        })
    }
}

fn skip_message(missing: &FixtureMissing) -> String {
    format!(
        "skipped: fixture {} not found at {} (set {FIXTURES_ENV})",
        missing.rel,
        missing.path.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_value_overrides_the_default() {
        assert_eq!(
            dir_from_env(Some(OsString::from("/somewhere/else"))),
            PathBuf::from("/somewhere/else")
        );
    }

    #[test]
    fn empty_or_unset_env_uses_the_folder_next_to_the_workspace() {
        let expected = default_dir();
        assert_eq!(dir_from_env(None), expected);
        assert_eq!(dir_from_env(Some(OsString::new())), expected);
        let shown = expected.to_string_lossy().replace('\\', "/");
        assert!(shown.ends_with("shared/fixtures"), "{shown}");
    }

    #[test]
    fn ci_values() {
        assert!(is_ci(Some("true")));
        assert!(is_ci(Some("TRUE")));
        assert!(is_ci(Some("1")));
        assert!(!is_ci(Some("0")));
        assert!(!is_ci(Some("false")));
        assert!(!is_ci(Some("")));
        assert!(!is_ci(None));
    }

    #[test]
    fn missing_fixture_names_path_and_variable() {
        let err = locate(Path::new("/no/such/dir"), "motion/x.bvh").unwrap_err();
        assert_eq!(err.path, Path::new("/no/such/dir").join("motion/x.bvh"));
        let text = err.to_string();
        assert!(text.contains("motion/x.bvh"), "{text}");
        assert!(text.contains(FIXTURES_ENV), "{text}");
        let skip = skip_message(&err);
        assert!(
            skip.starts_with("skipped: fixture motion/x.bvh not found at "),
            "{skip}"
        );
        assert!(skip.ends_with("(set STATEPACK_FIXTURES)"), "{skip}");
    }

    #[test]
    fn present_fixture_is_found() {
        // The fixtures README is always shipped with the folder.
        if let Some(path) = fixture_for_test("README.md") {
            assert!(path.is_file());
        }
    }
}
