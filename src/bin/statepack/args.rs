//! What every command shares in reading its arguments: number parsers that refuse NaN,
//! infinities and out-of-range values as argument errors (clap exits with status 2 and names
//! the option), the motion length unit, and the quiet end on a closed pipe.

use anyhow::Result;
use clap::Args;
use statepack::codecs::motion;

/// A finite number (NaN and infinities refused).
pub fn finite(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!("`{s}` is not a finite number"))
    }
}

/// A finite number greater than zero.
pub fn positive(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} is not greater than zero"))
    }
}

/// A finite number that is zero or more.
pub fn non_negative(s: &str) -> Result<f64, String> {
    let v = finite(s)?;
    if v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{v} is negative"))
    }
}

/// Ends the process the way the argument parser ends it for a bad value: `error: MSG` and the
/// usage hint on stderr, exit status 2. For checks clap cannot make on one option alone (a
/// value that must be below another option's, a product of two options).
pub fn argument_error(msg: impl std::fmt::Display) -> ! {
    use clap::CommandFactory;
    crate::Cli::command()
        .error(clap::error::ErrorKind::ValueValidation, msg)
        .exit()
}

/// The length unit of a motion file, shared by every command that reads motion.
#[derive(Args, Clone, Debug, Default)]
pub struct UnitArg {
    /// Metres per distance unit of the motion file. Default per format: BVH 1 (metres), study
    /// JSON 1 (metres), ACL .sjson 0.01 (centimetres), glTF 1 (metres, glTF's own unit). A
    /// figure whose height comes out outside 0.3-3 m gets a warning with the value to use
    /// (a BVH in centimetres: --unit-m 0.01).
    #[arg(long, value_parser = positive, allow_negative_numbers = true)]
    pub unit_m: Option<f64>,
}

impl UnitArg {
    /// The option's spelling, for messages.
    pub const OPTION: &'static str = "--unit-m";

    /// The unit given, checked again (a struct built in code skips clap's parser).
    ///
    /// Errors: zero, negative, NaN or infinite.
    pub fn get(&self) -> Result<Option<f64>> {
        match self.unit_m {
            Some(v) => Ok(Some(motion::check_metres_per_unit(Self::OPTION, v)?)),
            None => Ok(None),
        }
    }
}

/// Lets a closed pipe (`statepack decode f | head`) end the process quietly, as it ends other
/// Unix tools: the default action of `SIGPIPE` (terminate, no message) is restored, which the
/// Rust runtime replaces by "ignore" (turning the next write into a panic with a backtrace).
pub fn quiet_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called once at the start of `main`, before any other thread exists; setting a
    // signal's disposition to its default has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
