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

mod cbtrack;
mod rply;
mod wsnap;

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
    /// RPLY v3 op-stream replays (schema/rply_v3.ksy).
    Rply,
    /// CBTK v1 columnar replay tracks (schema/cbtrack_v1.ksy).
    Cbtrack,
    /// MsgWorldSnapshot (schema/world_snapshot.ksy); `encode` only.
    Wsnap,
    /// The keyframe-compression study's track container (schema/study_tracks.ksy).
    StudyTracks,
    /// statepack animation clips (schema/anim_clip.ksy).
    AnimClip,
}

impl Format {
    fn spec(self) -> &'static FormatSpec {
        match self {
            Format::Snap => &snap::FORMAT,
            Format::Rply => &formats::rply::FORMAT,
            Format::Cbtrack => &formats::cbtrack::FORMAT,
            Format::Wsnap => &formats::world_snapshot::FORMAT,
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
        /// Motion file (.bvh, study .json, ACL .sjson, glTF .gltf/.glb); default: the study's
        /// walk, generated in code.
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
        /// Motion file (.bvh, study .json, ACL .sjson, glTF .gltf/.glb).
        motion: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// Studs per metre (default: 1 stud = 0.28 m).
        #[arg(long, default_value_t = snap::DEFAULT_STUDS_PER_METRE)]
        studs_per_metre: f64,
        /// CBTK: characters in the crowd, each a unit driven by the motion.
        #[arg(long, default_value_t = 24)]
        crowd: u32,
        /// CBTK: frames of the match (30 per second).
        #[arg(long, default_value_t = 9000)]
        frames: u32,
        /// CBTK: elmos per metre of motion input.
        #[arg(long, default_value_t = 16.0)]
        elmos_per_metre: f64,
    },
    /// CBTK: write the synthetic match of the spec's larger benchmark size (82,496 frames) and
    /// print the time, peak memory, keys and bytes. Run it in release.
    CbtrackScale {
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// No progress bar.
        #[arg(long)]
        quiet: bool,
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
    /// Check a file. SNAP: compare with the motion it was made from (worst errors per
    /// recording). RPLY: every rule of the player, raw round trip, seeks equal to playing;
    /// with --against, every tick of every walker against the motion it was recorded from.
    /// CBTK: every recorded sample of the match rebuilt from the motion (same --crowd and
    /// --frames as at import) against the track, to 8 digits.
    Verify {
        /// The recording file.
        file: PathBuf,
        /// The motion file it was imported from (SNAP and CBTK; RPLY optional).
        #[arg(long)]
        against: Option<PathBuf>,
        /// Studs per metre used at import (must be the same value).
        #[arg(long, default_value_t = snap::DEFAULT_STUDS_PER_METRE)]
        studs_per_metre: f64,
        /// CBTK: crowd size used at import.
        #[arg(long, default_value_t = 24)]
        crowd: u32,
        /// CBTK: frames used at import.
        #[arg(long, default_value_t = 9000)]
        frames: u32,
        /// CBTK: elmos per metre used at import.
        #[arg(long, default_value_t = 16.0)]
        elmos_per_metre: f64,
    },
    /// Print the decoded state at a time as JSON (SNAP: milliseconds from the start; RPLY:
    /// a tick, the player's state there; CBTK: a simulation frame, fractions allowed, with
    /// every unit, projectile, team number, feature and terrain point).
    Sample {
        /// The file.
        file: PathBuf,
        /// The time, in the format's unit (SNAP: ms; RPLY: tick; CBTK: frame).
        #[arg(long)]
        at: f64,
    },
    /// World snapshot (MsgWorldSnapshot) commands: the bot swarm simulation, sample files.
    Wsnap {
        #[command(subcommand)]
        cmd: wsnap::WsnapCmd,
    },
    /// Record a crowd of walkers as an RPLY v3 replay and report size, error, playback and
    /// seek figures (docs/formats/rply.md).
    RplyCrowd {
        /// Motion file (.bvh or study .json); default: the CMU walk fixture.
        #[arg(long)]
        motion: Option<PathBuf>,
        /// Characters.
        #[arg(long, default_value_t = 20)]
        characters: usize,
        /// Seconds recorded.
        #[arg(long, default_value_t = 600.0)]
        seconds: f64,
        /// Ticks per second.
        #[arg(long, default_value_t = 15)]
        tick_rate: u8,
        /// Keyframe interval in ticks.
        #[arg(long, default_value_t = formats::rply::DEFAULT_KEYFRAME_EVERY)]
        keyframe_every: u32,
        /// Position threshold in studs.
        #[arg(long, default_value_t = 0.05)]
        pos_threshold: f64,
        /// Rotation threshold in degrees.
        #[arg(long, default_value_t = 0.5)]
        rot_threshold_deg: f64,
        /// Random seeks timed.
        #[arg(long, default_value_t = 200)]
        seeks: usize,
        /// Record an upright root (HumanoidRootPart-like: heading only) instead of the
        /// clip root's full rotation.
        #[arg(long)]
        upright_root: bool,
        /// Also write the replay here.
        #[arg(long)]
        out: Option<PathBuf>,
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

/// `verify` and `sample` know SNAP's and RPLY's timelines; other formats add theirs here.
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
            format: Format::Cbtrack,
            motion,
            output,
            crowd,
            frames,
            elmos_per_metre,
            ..
        } => cbtrack::import(
            cbtrack::load_any(&motion)?,
            &output,
            crowd,
            frames,
            elmos_per_metre,
        ),
        Cmd::CbtrackScale { output, quiet } => cbtrack::scale(&output, quiet),
        Cmd::Import {
            format: Format::Wsnap,
            ..
        } => bail!(
            "import makes SNAP, RPLY and CBTK files; world snapshots come from `statepack wsnap write`"
        ),
        Cmd::Import {
            format: Format::StudyTracks | Format::AnimClip,
            ..
        } => bail!(
            "import writes SNAP, RPLY and CBTK; for animation clips use `statepack clip compress` or `statepack clip study-compress`"
        ),
        Cmd::Import {
            format: Format::Snap,
            motion,
            output,
            studs_per_metre,
            ..
        } => {
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
        Cmd::Import {
            format: Format::Rply,
            motion,
            output,
            studs_per_metre,
            ..
        } => rply::import(&load_motion(&motion)?, &output, studs_per_metre),
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
            if let Err(e) = wsnap::inspect_decompressed(&bytes, &mut |t| {
                emit_stdout(|out| {
                    writeln!(out, "decompressed body, as the raw message it stands for:")?;
                    print_tree(out, t, 0, max_items)
                })
                .map_err(io::Error::other)
            }) {
                eprintln!("cannot show the decompressed body: {e:#}");
            }
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
            crowd,
            frames,
            elmos_per_metre,
        } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            if fmt.name == formats::rply::FORMAT.name {
                let name = file.display().to_string();
                return match against {
                    Some(a) => rply::verify_against(&bytes, &name, &load_motion(&a)?, studs_per_metre),
                    None => rply::verify(&bytes, &name),
                };
            }
            if fmt.name == formats::cbtrack::FORMAT.name {
                let Some(against) = against else {
                    bail!("CBTK verify needs --against <motion file>");
                };
                return cbtrack::verify(
                    &bytes,
                    cbtrack::load_any(&against)?,
                    crowd,
                    frames,
                    elmos_per_metre,
                );
            }
            require_snap(fmt)?;
            let Some(against) = against else {
                bail!("SNAP verify needs --against <motion file>");
            };
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
        Cmd::Wsnap { cmd } => wsnap::run(cmd),
        Cmd::Sample { file, at } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            if fmt.name == formats::rply::FORMAT.name {
                return rply::sample(&bytes, at);
            }
            if fmt.name == formats::cbtrack::FORMAT.name {
                return cbtrack::sample(&bytes, at);
            }
            require_snap(fmt)?;
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
        Cmd::RplyCrowd {
            motion,
            characters,
            seconds,
            tick_rate,
            keyframe_every,
            pos_threshold,
            rot_threshold_deg,
            seeks,
            upright_root,
            out,
        } => {
            let path = match motion {
                Some(p) => p,
                None => statepack::runtime::fixtures::fixture_path("motion/cmu-131-01-walk.bvh")
                    .map_err(|e| anyhow::anyhow!("{e}"))?,
            };
            let clip = load_motion(&path)?;
            let opts = formats::rply_crowd::CrowdOptions {
                characters,
                ticks: (seconds * f64::from(tick_rate)).round() as u32,
                tick_rate,
                keyframe_every,
                thresholds: statepack::runtime::replay_xform::Thresholds {
                    pos_threshold_studs: pos_threshold,
                    rot_threshold_rad: rot_threshold_deg.to_radians(),
                },
                upright_root,
                ..Default::default()
            };
            rply::crowd_report(
                &clip,
                &path.display().to_string(),
                opts,
                seeks.max(1),
                out.as_deref(),
            )
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
    // Inside a run of bit fields the exact bit range follows the byte range.
    let bits = if n.start_bit != n.start * 8 || n.end_bit != n.end * 8 {
        format!(
            "  (bits {}..{}, {} b)",
            n.start_bit,
            n.end_bit,
            n.end_bit - n.start_bit
        )
    } else {
        String::new()
    };
    writeln!(
        out,
        "{:>8}..{:<8} {:>6} B  {indent}{}{value}{bits}",
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
    rply::demo_row(&clip, studs_per_metre)?;
    println!("{}", cbtrack::demo_row(&clip)?);
    wsnap::demo_row(&mut io::stdout())?;
    println!();
    println!(
        "RPLY row: the same clip as 20 walkers for 60 s at 15 Hz; a frame is one entity-tick, all-absolute is every transform a full XFORM, delta frames are XFORM_D ops among the transforms given, encode is recording and decode is playing every tick (docs/formats/rply.md)"
    );
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
