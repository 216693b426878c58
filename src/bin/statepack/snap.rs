//! The CLI's SNAP v1.3 commands: `import --format snap`, `verify --against` and `sample --at`
//! for snapshot recordings (one recording per joint, positions in studs, times in ms).

use anyhow::{bail, Context, Result};
use statepack::codecs::motion::Clip;
use statepack::formats::snap;
use std::io::Write;
use std::path::Path;

/// `import --format snap`: the clip as one recording per joint. The file is read back and
/// checked against the clip before it is written, so a studs-per-metre that pushes positions
/// past float32 precision writes nothing.
///
/// Errors: the recorder's errors, and a bound error (nothing written) when any frame is
/// outside the documented position or rotation bound.
pub fn import(clip: &Clip, output: &Path, studs_per_metre: f64) -> Result<()> {
    let rec = snap::import_clip(clip, studs_per_metre)?;
    let bytes = rec.finish()?;
    let errs = snap::verify_against_clip(&snap::read(&bytes)?, clip, studs_per_metre)?;
    check_bounds(&errs).with_context(|| {
        format!(
            "no file written: at {studs_per_metre} studs per metre the positions do not fit the format's float32 studs within its bounds"
        )
    })?;
    std::fs::write(output, &bytes).with_context(|| format!("cannot write {}", output.display()))?;
    let s = rec.stats();
    println!(
        "wrote {} ({} bytes): {} recordings, {} frames ({} absolute, {} delta)",
        output.display(),
        bytes.len(),
        rec.raw().recordings.len(),
        s.frames,
        s.absolute,
        s.delta
    );
    Ok(())
}

/// `verify FILE --against MOTION`: the worst position error (studs) and rotation error
/// (degrees) of each recording against the clip, one table row per recording.
///
/// Errors: a decode error of `bytes`, or a bound error (the command exits non-zero) when any
/// frame is outside its bound.
pub fn verify(bytes: &[u8], file: &Path, clip: &Clip, studs_per_metre: f64) -> Result<()> {
    let decoded = snap::read(bytes).with_context(|| format!("cannot decode {}", file.display()))?;
    let errs = snap::verify_against_clip(&decoded, clip, studs_per_metre)?;
    println!(
        "{:<24} {:>16} {:>16} {:>14}",
        "recording", "max pos (studs)", "max rot (deg)", "pos bound"
    );
    for e in &errs {
        let mark = if e.frames_over_bound > 0 {
            format!("  {} frame(s) over the bound", e.frames_over_bound)
        } else {
            String::new()
        };
        println!(
            "{:<24} {:>16.3e} {:>16.3e} {:>14.3e}{mark}",
            e.name, e.max_pos_error_studs, e.max_rot_error_deg, e.pos_bound_studs
        );
    }
    let worst_p = errs
        .iter()
        .map(|e| e.max_pos_error_studs)
        .fold(0.0, f64::max);
    let worst_r = errs.iter().map(|e| e.max_rot_error_deg).fold(0.0, f64::max);
    println!("worst: {worst_p:.3e} studs, {worst_r:.3e} degrees");
    check_bounds(&errs).with_context(|| {
        format!(
            "{} against the motion at {studs_per_metre} studs per metre (verify needs the --studs-per-metre and --unit-m that import was given)",
            file.display()
        )
    })
}

/// `sample FILE --at MS`: each recording's position (studs) and rotation (quaternion x, y, z,
/// w) at `at_ms`, as a JSON array.
///
/// Errors: a decode error, or `--at` outside 0 ..= the last frame's time.
pub fn sample(bytes: &[u8], file: &Path, at_ms: f64) -> Result<()> {
    let decoded = snap::read(bytes).with_context(|| format!("cannot decode {}", file.display()))?;
    let end_ms = snap::last_frame_ms(&decoded);
    if !(0.0..=end_ms).contains(&at_ms) {
        bail!("--at {at_ms} ms is outside the recordings, which run from 0 to {end_ms} ms");
    }
    let states: Vec<serde_json::Value> = decoded
        .iter()
        .map(|r| {
            let s = r.sample_at(at_ms);
            serde_json::json!({
                "recording": r.map_name,
                "at_ms": at_ms,
                "pos_studs": s.map(|(p, _)| [p.x, p.y, p.z]),
                "rot_xyzw": s.map(|(_, q)| [q.x, q.y, q.z, q.w]),
            })
        })
        .collect();
    let text = serde_json::to_string_pretty(&states)?;
    crate::emit_stdout(|out| writeln!(out, "{text}"))
}

/// Refuses when any recording has frames outside the documented bounds.
pub fn check_bounds(errs: &[snap::RecordingError]) -> Result<()> {
    if let Some(e) = errs.iter().find(|e| e.frames_over_bound > 0) {
        bail!(
            "recording `{}` has {} frame(s) outside the documented bounds (worst {:.3e} studs, {:.3e} deg)",
            e.name,
            e.frames_over_bound,
            e.max_pos_error_studs,
            e.max_rot_error_deg
        );
    }
    Ok(())
}
