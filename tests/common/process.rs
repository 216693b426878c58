//! Runs `statepack` as a process and measures it: the one runner of the tests that bound a
//! command's memory (`tests/cli_memory.rs`, `cli_memory_cbtrack.rs`, `cli_memory_inspect.rs`,
//! `cli_memory_schema.rs`, `cli_encode_memory.rs`). A test includes it with
//! `#[path = "common/process.rs"] mod process;`.
//!
//! A command's peak is its own largest resident set: the child is reaped with `wait4`, which
//! gives that child's resource usage alone (`getrusage(RUSAGE_CHILDREN)` would give the
//! largest of every child waited for so far, and `Child::wait` gives none). Linux reports
//! `ru_maxrss` in KiB; [`Ran::peak`] is in bytes.
//!
//! A child carries over at least the resident set of the process that starts it, so a test
//! that builds large inputs makes them in another process ([`rerun_self`]) before it runs
//! the commands it measures.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one command did.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Its standard error, as text.
    pub stderr: String,
    /// Its largest resident set, in bytes.
    pub peak: u64,
}

impl Ran {
    /// The exit code, or -1 when a signal ended the command.
    pub fn exit(&self) -> i32 {
        self.code.unwrap_or(-1)
    }
}

/// Runs `statepack args` from the current folder, standard output discarded.
pub fn statepack<S: AsRef<OsStr>>(args: &[S]) -> Ran {
    statepack_in(None, args, None)
}

/// Runs `statepack args` in `dir` (or the current folder), standard output to the file
/// `stdout` (or discarded), standard error kept, and measures it alone.
// The child is reaped by `wait4`, which gives its own resource usage; `Child::wait` would not.
#[allow(clippy::zombie_processes)]
pub fn statepack_in<S: AsRef<OsStr>>(dir: Option<&Path>, args: &[S], stdout: Option<&Path>) -> Ran {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let err_path = std::env::temp_dir().join(format!(
        "statepack-run-{}-{}.stderr",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    let err = std::fs::File::create(&err_path).expect("create the stderr file");
    let out = match stdout {
        Some(p) => Stdio::from(std::fs::File::create(p).expect("create the stdout file")),
        None => Stdio::null(),
    };
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_statepack"));
    cmd.args(args).stdin(Stdio::null()).stdout(out).stderr(err);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let child = cmd.spawn().expect("start statepack");
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not waited for yet (the `Child` is never waited on);
    // `status` and `u` are valid and writable.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut u) };
    assert_eq!(rc, pid, "wait4 failed");
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&err_path);
    Ran {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        stderr,
        peak: u.ru_maxrss as u64 * 1024,
    }
}

/// Runs the test `test` of this test binary again, alone, with the environment variable
/// `var` set to `dir`, and gives what it printed on standard output: how a test has its
/// inputs written by another process (module docs). Panics if that run fails.
pub fn rerun_self(test: &str, var: &str, dir: &Path) -> String {
    let out = Command::new(std::env::current_exe().expect("this test's path"))
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(var, dir)
        .output()
        .expect("run this test again");
    assert!(
        out.status.success(),
        "{test} with {var} set failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
