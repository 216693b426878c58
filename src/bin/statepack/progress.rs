//! Progress of the long commands on stderr (indicatif): a bar of steps (windows, ticks) or a
//! spinner naming the stage. Drawn only when stderr is a terminal; in a pipe or a file the
//! bars are hidden and print nothing, so the command's output and its stderr stay as they are.
//! What a command prints to stdout while a bar is shown goes through [`Progress::println`],
//! which lifts the bar for the line.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// True when progress is drawn: stderr is a terminal.
pub fn shown() -> bool {
    std::io::stderr().is_terminal()
}

/// A progress display; cleared when finished or dropped.
pub struct Progress(ProgressBar);

fn target() -> ProgressDrawTarget {
    if shown() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

impl Progress {
    /// A bar of `len` steps counted in `unit` (such as "windows"), with elapsed time and an
    /// estimate of the time left; `what` names the work. Nothing is drawn before the first
    /// [`Self::set`] (which gives the length when `len` is not known yet).
    pub fn bar(len: u64, what: &str, unit: &str) -> Self {
        let b = ProgressBar::with_draw_target(Some(len), target())
            .with_style(
                ProgressStyle::with_template(&format!(
                    "{{msg}} {{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {unit} ({{eta}} left)"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            )
            .with_message(what.to_owned());
        Self(b)
    }

    /// A spinner showing `what` and the elapsed time, ticking on its own.
    pub fn spinner(what: &str) -> Self {
        let b = ProgressBar::with_draw_target(None, target());
        b.set_style(
            ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        b.set_message(what.to_owned());
        b.enable_steady_tick(Duration::from_millis(120));
        Self(b)
    }

    /// Sets the position to `done` of `len` steps.
    pub fn set(&self, done: u64, len: u64) {
        self.0.set_length(len);
        self.0.set_position(done);
    }

    /// Renames the stage shown.
    pub fn stage(&self, what: &str) {
        self.0.set_message(what.to_owned());
    }

    /// Prints `line` to stdout with the bar lifted for it (printed in a pipe too).
    pub fn println(&self, line: &str) {
        self.0.suspend(|| println!("{line}"));
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
