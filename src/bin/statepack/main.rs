//! `statepack`: the command-line tool. Run `statepack --help` for the commands.

mod clip;
mod plot;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use statepack::formats::{self, snap, FormatSpec};
use statepack::runtime::io::TraceNode;
use statepack::runtime::motion::{self, Clip};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "statepack",
    version,
    about = "Compact binary formats for game state, written once as schemas"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Formats the CLI can write.
#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// SNAP v1.3 snapshot recordings (schema/snap_v1_3.ksy).
    Snap,
    /// The keyframe-compression study's track container (schema/study_tracks.ksy).
    StudyTracks,
    /// statepack animation clips (schema/anim_clip.ksy).
    AnimClip,
}

impl Format {
    fn spec(self) -> &'static FormatSpec {
        match self {
            Format::Snap => &snap::FORMAT,
            Format::StudyTracks => &formats::study_tracks::FORMAT,
            Format::AnimClip => &formats::anim_clip::FORMAT,
        }
    }
}

#[derive(Subcommand)]
enum Cmd {
    /// Animation clips: keyframe compression with the study's pipeline, and the study's tables.
    Clip {
        #[command(subcommand)]
        cmd: clip::ClipCmd,
    },
    /// Encode a motion clip, decode it, verify it and print a table of size, error and speed.
    Demo {
        /// Motion file (.bvh or study .json); default: the study's walk, generated in code.
        #[arg(long)]
        input: Option<PathBuf>,
        /// Studs per metre of motion input.
        #[arg(long, default_value_t = snap::DEFAULT_STUDS_PER_METRE)]
        studs_per_metre: f64,
        /// Also write the encoded SNAP file here.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Turn a motion file into a recording file (one recording per joint).
    Import {
        /// Output format.
        #[arg(long, value_enum)]
        format: Format,
        /// Motion file (.bvh or study .json).
        motion: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// Studs per metre (default: 1 stud = 0.28 m).
        #[arg(long, default_value_t = snap::DEFAULT_STUDS_PER_METRE)]
        studs_per_metre: f64,
    },
    /// Print a file's structure as a tree with byte offsets and sizes (format from its header).
    Inspect {
        /// The file.
        file: PathBuf,
        /// Elements shown per list (the rest are counted).
        #[arg(long, default_value_t = 4)]
        max_items: usize,
    },
    /// Print a file's raw layer as JSON (exactly what is stored; counts and lengths are implied).
    Decode {
        /// The file.
        file: PathBuf,
        /// Print the structure instead: every field with its start and end byte offset and
        /// its value (leaves), counts and lengths included.
        #[arg(long)]
        offsets: bool,
    },
    /// Write a file from the JSON that `decode` prints (byte-identical to the decoded file).
    Encode {
        /// Format of the JSON.
        #[arg(long, value_enum)]
        format: Format,
        /// The JSON file.
        input: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Compare a recording file with the motion it was made from: worst errors per recording.
    Verify {
        /// The recording file.
        file: PathBuf,
        /// The motion file it was imported from.
        #[arg(long)]
        against: PathBuf,
        /// Studs per metre used at import (must be the same value).
        #[arg(long, default_value_t = snap::DEFAULT_STUDS_PER_METRE)]
        studs_per_metre: f64,
    },
    /// Print the decoded state at a time as JSON (SNAP: milliseconds from the start).
    Sample {
        /// The file.
        file: PathBuf,
        /// The time, in the format's unit (SNAP: ms).
        #[arg(long)]
        at: f64,
    },
}

/// The format a file's first bytes say it is. Errors: no known header.
fn detect(bytes: &[u8], path: &Path) -> Result<&'static FormatSpec> {
    formats::detect(bytes).ok_or_else(|| {
        let known: Vec<&str> = formats::FORMATS.iter().map(|f| f.schema).collect();
        anyhow::anyhow!(
            "{}: unknown format (first bytes {}); known formats: {}",
            path.display(),
            statepack::runtime::io::show_bytes(&bytes[..bytes.len().min(8)]),
            known.join(", ")
        )
    })
}

/// `verify` and `sample` know SNAP's timeline; other formats add theirs here.
fn require_snap(fmt: &FormatSpec) -> Result<()> {
    if fmt.name != snap::FORMAT.name {
        bail!("this command does not support {} files yet", fmt.title);
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn load_motion(path: &Path) -> Result<Clip> {
    motion::load_motion_file(path).with_context(|| format!("cannot load motion {}", path.display()))
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Clip { cmd } => clip::run(cmd),
        Cmd::Demo {
            input,
            studs_per_metre,
            out,
        } => demo(input.as_deref(), studs_per_metre, out.as_deref()),
        Cmd::Import {
            format,
            motion,
            output,
            studs_per_metre,
        } => {
            if !matches!(format, Format::Snap) {
                bail!("import writes SNAP; for animation clips use `statepack clip compress` or `statepack clip study-compress`");
            }
            let clip = load_motion(&motion)?;
            let rec = snap::import_clip(&clip, studs_per_metre)?;
            let bytes = rec.finish()?;
            std::fs::write(&output, &bytes)
                .with_context(|| format!("cannot write {}", output.display()))?;
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
        Cmd::Inspect { file, max_items } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            let (res, tree) = (fmt.decode_traced)(&bytes);
            emit_stdout(|out| {
                writeln!(
                    out,
                    "{} ({} bytes, {})",
                    file.display(),
                    bytes.len(),
                    fmt.title
                )?;
                print_tree(out, &tree, 0, max_items)
            })?;
            res.and_then(|()| (fmt.decode_full)(&bytes))
                .with_context(|| format!("{} is not a valid {} file", file.display(), fmt.title))
        }
        Cmd::Decode { file, offsets } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            let value = if offsets {
                let (res, tree) = (fmt.decode_traced)(&bytes);
                res.and_then(|()| (fmt.decode_full)(&bytes))
                    .with_context(|| {
                        format!("{} is not a valid {} file", file.display(), fmt.title)
                    })?;
                serde_json::to_value(&tree)?
            } else {
                // Only valid files are printed, so whatever `decode` prints, `encode` writes back.
                (fmt.to_json)(&bytes).map_err(|e| {
                    anyhow::anyhow!("{} is not a valid {} file: {e}", file.display(), fmt.title)
                })?
            };
            let text = serde_json::to_string_pretty(&value)?;
            emit_stdout(|out| writeln!(out, "{text}"))
        }
        Cmd::Encode {
            format,
            input,
            output,
        } => {
            let fmt = format.spec();
            let text = std::fs::read_to_string(&input)
                .with_context(|| format!("cannot read {}", input.display()))?;
            let value: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", input.display()))?;
            // `from_json` also checks the rules the layout cannot state (for SNAP: first frame
            // absolute, finite keyframes), so no invalid file is written.
            let bytes = (fmt.from_json)(&value).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not valid {} raw JSON: {e}",
                    input.display(),
                    fmt.title
                )
            })?;
            std::fs::write(&output, &bytes)
                .with_context(|| format!("cannot write {}", output.display()))?;
            println!("wrote {} ({} bytes)", output.display(), bytes.len());
            Ok(())
        }
        Cmd::Verify {
            file,
            against,
            studs_per_metre,
        } => {
            let bytes = read_file(&file)?;
            require_snap(detect(&bytes, &file)?)?;
            let decoded =
                snap::read(&bytes).with_context(|| format!("cannot decode {}", file.display()))?;
            let clip = load_motion(&against)?;
            let errs = snap::verify_against_clip(&decoded, &clip, studs_per_metre)?;
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
            check_bounds(&errs)
        }
        Cmd::Sample { file, at } => {
            let bytes = read_file(&file)?;
            require_snap(detect(&bytes, &file)?)?;
            let decoded =
                snap::read(&bytes).with_context(|| format!("cannot decode {}", file.display()))?;
            let states: Vec<serde_json::Value> = decoded
                .iter()
                .map(|r| {
                    let s = r.sample_at(at);
                    serde_json::json!({
                        "recording": r.map_name,
                        "at_ms": at,
                        "pos_studs": s.map(|(p, _)| [p.x, p.y, p.z]),
                        "rot_xyzw": s.map(|(_, q)| [q.x, q.y, q.z, q.w]),
                    })
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&states)?);
            Ok(())
        }
    }
}

fn check_bounds(errs: &[snap::RecordingError]) -> Result<()> {
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

fn print_tree(
    out: &mut impl Write,
    n: &TraceNode,
    depth: usize,
    max_items: usize,
) -> io::Result<()> {
    let indent = "  ".repeat(depth);
    let value = n
        .value
        .as_deref()
        .map(|v| format!(" = {v}"))
        .unwrap_or_default();
    writeln!(
        out,
        "{:>8}..{:<8} {:>6} B  {indent}{}{value}",
        n.start,
        n.end,
        n.end - n.start,
        n.name
    )?;
    let list = n.children.first().is_some_and(|c| c.name.starts_with('['));
    let shown = if list { max_items } else { usize::MAX };
    for c in n.children.iter().take(shown) {
        print_tree(out, c, depth + 1, max_items)?;
    }
    if n.children.len() > shown {
        writeln!(
            out,
            "{:>26}  {indent}  ... {} more",
            "",
            n.children.len() - shown
        )?;
    }
    Ok(())
}

/// Writes long output to stdout; a reader that goes away early (`| head`) is not an error.
fn emit_stdout(
    f: impl FnOnce(&mut io::BufWriter<io::StdoutLock<'_>>) -> io::Result<()>,
) -> Result<()> {
    let mut out = io::BufWriter::new(io::stdout().lock());
    match f(&mut out).and_then(|_| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Median of `runs` timings of `f`, in seconds.
fn time_median<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        let t0 = Instant::now();
        let v = f();
        times.push(t0.elapsed().as_secs_f64());
        last = Some(v);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    (times[runs / 2], last.expect("runs > 0"))
}

fn demo(input: Option<&Path>, studs_per_metre: f64, out: Option<&Path>) -> Result<()> {
    let (clip, source) = match input {
        Some(p) => (load_motion(p)?, p.display().to_string()),
        None => (
            motion::walk::study_walk_clip(),
            "study walk (generated in code: 30 joints, 180 frames at 60 fps)".to_string(),
        ),
    };
    println!("input: {source}");
    println!(
        "       {} joints, {} frames, {:.3} s, {:.4} studs per metre",
        clip.skeleton.bones().len(),
        clip.frame_count(),
        clip.duration_s(),
        studs_per_metre
    );
    const RUNS: usize = 9;
    let (enc_s, rec) = time_median(RUNS, || snap::import_clip(&clip, studs_per_metre));
    let rec = rec?;
    let bytes = rec.finish()?;
    let (dec_s, decoded) = time_median(RUNS, || snap::read(&bytes));
    let decoded = decoded?;
    if let Some(o) = out {
        std::fs::write(o, &bytes).with_context(|| format!("cannot write {}", o.display()))?;
        println!("wrote {}", o.display());
    }
    let errs = snap::verify_against_clip(&decoded, &clip, studs_per_metre)?;
    let stats = rec.stats();
    let all_abs = snap::all_absolute_size(rec.raw());
    let worst_p = errs
        .iter()
        .map(|e| e.max_pos_error_studs)
        .fold(0.0, f64::max);
    let worst_r = errs.iter().map(|e| e.max_rot_error_deg).fold(0.0, f64::max);
    let bound_p = errs.iter().map(|e| e.pos_bound_studs).fold(0.0, f64::max);
    let frames = stats.frames.max(1) as f64;
    println!();
    println!(
        "| format | bytes | bytes/frame | vs all-absolute | delta frames | worst pos (studs) | worst rot (deg) | encode | decode |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    println!(
        "| SNAP v1.3 | {} | {:.2} | {:.3} ({} B) | {:.1}% | {:.2e} | {:.2e} | {:.2} ms | {:.2} ms |",
        bytes.len(),
        bytes.len() as f64 / frames,
        bytes.len() as f64 / all_abs as f64,
        all_abs,
        100.0 * stats.delta as f64 / frames,
        worst_p,
        worst_r,
        enc_s * 1e3,
        dec_s * 1e3
    );
    println!();
    println!(
        "frames: {} ({} absolute, of which {} forced by large motion; {} delta)",
        stats.frames, stats.absolute, stats.forced_absolute, stats.delta
    );
    println!(
        "bounds: position {:.2e} studs, rotation {:.2e} deg (docs/formats/snap.md); encode/decode: median of {RUNS} runs, including forward kinematics on encode",
        bound_p,
        statepack::runtime::delta::CHAIN_ROT_ERROR_BOUND_RAD.to_degrees()
    );
    check_bounds(&errs)?;
    println!("verified: every frame of every recording is within the documented bounds");
    clip::demo_rows(&clip)?;
    Ok(())
}
