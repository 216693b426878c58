//! `statepack`: the command-line tool. Run `statepack --help` for the commands.

mod args;
mod clip;
mod json_words;
#[cfg(feature = "plot")]
mod plot;
mod progress;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use statepack::codecs::motion::{self, Clip};
use statepack::formats::{self, FormatSpec};
#[cfg(test)]
use statepack::runtime::io::TraceNode;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

mod cbtrack;
mod rply;
#[cfg(feature = "schema")]
mod schema_cmd;
mod snap;
mod tree;
#[cfg(feature = "view")]
mod view;
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

/// The formats `import` writes from motion.
#[derive(Clone, Copy, ValueEnum)]
enum ImportFormat {
    /// SNAP v1.3 snapshot recordings: one recording per joint.
    Snap,
    /// RPLY v3 op-stream replays: one walker playing the clip at 15 Hz.
    Rply,
    /// CBTK v1 columnar replay tracks: a crowd match (--crowd, --frames).
    Cbtrack,
}

/// Formats the CLI can write from their raw JSON.
#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// SNAP v1.3 snapshot recordings (schema/snap_v1_3.ksy).
    Snap,
    /// RPLY v3 op-stream replays (schema/rply_v3.ksy).
    Rply,
    /// CBTK v1 columnar replay tracks (schema/cbtrack_v1.ksy).
    Cbtrack,
    /// MsgWorldSnapshot (schema/world_snapshot.ksy).
    Wsnap,
    /// The keyframe-compression study's track container (schema/study_tracks.ksy).
    StudyTracks,
    /// statepack animation clips (schema/anim_clip.ksy).
    AnimClip,
}

impl Format {
    fn spec(self) -> &'static FormatSpec {
        match self {
            Format::Snap => &formats::snap::FORMAT,
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
    ///
    /// Exits non-zero when a statepack format's result is outside its bound. `--study` adds a
    /// separate table of the keyframe-compression study's pipeline on the same clip, for
    /// comparison: that pipeline's 1 mm is a per-track keyframe tolerance, not a bound on the
    /// joints, so each row says whether the joints met it, and those rows never change the
    /// exit code.
    Demo {
        /// Motion file (.bvh, study .json, ACL .sjson, glTF .gltf/.glb); default: the study's
        /// walk, generated in code.
        #[arg(long)]
        input: Option<PathBuf>,
        #[command(flatten)]
        unit: args::UnitArg,
        /// Studs per metre of motion input (a stud is Roblox's length unit).
        #[arg(long, default_value_t = formats::snap::DEFAULT_STUDS_PER_METRE, value_parser = args::positive, allow_negative_numbers = true)]
        studs_per_metre: f64,
        /// Also write the encoded SNAP file here.
        #[arg(short, long = "output", alias = "out")]
        output: Option<PathBuf>,
        /// Also print the keyframe-compression study's pipeline on the clip, in a table of
        /// its own (a comparison, not a statepack format: it does not change the exit code).
        #[arg(long)]
        study: bool,
    },
    /// Turn a motion file into a recording file (SNAP: one recording per joint; RPLY: one
    /// walker; CBTK: a crowd match). World snapshots come from `wsnap write`, animation clips
    /// from `clip compress` and `clip study-compress`.
    Import {
        /// Output format.
        #[arg(long, value_enum)]
        format: ImportFormat,
        /// Motion file (.bvh, study .json, ACL .sjson, glTF .gltf/.glb).
        motion: PathBuf,
        #[command(flatten)]
        unit: args::UnitArg,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
        /// SNAP, RPLY: studs per metre (a stud is Roblox's length unit; default: 1 stud =
        /// 0.28 m). A file whose positions this scale pushes past float32 precision is refused.
        #[arg(long, default_value_t = formats::snap::DEFAULT_STUDS_PER_METRE, value_parser = args::positive, allow_negative_numbers = true)]
        studs_per_metre: f64,
        /// CBTK: characters in the crowd, each a unit driven by the motion.
        #[arg(long, default_value_t = 24, value_parser = clap::value_parser!(u32).range(1..))]
        crowd: u32,
        /// CBTK: frames of the match (30 per second).
        #[arg(long, default_value_t = 9000, value_parser = clap::value_parser!(u32).range(1..))]
        frames: u32,
        /// CBTK: elmos per metre of motion input (an elmo is the Recoil engine's length unit,
        /// 1/8 of a map square; 16 per metre by default).
        #[arg(long, default_value_t = 16.0, value_parser = args::positive, allow_negative_numbers = true)]
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
    /// Open a local web viewer of a file: its fields beside its bytes, the motion it holds on
    /// a timeline in 3D, and where its bytes go (docs/viewer.md). Serves on 127.0.0.1 only,
    /// at an address with a random token; prints the address.
    #[cfg(feature = "view")]
    View(view::ViewArgs),
    /// Print a file's structure as a tree with byte offsets and sizes (format from its header).
    Inspect {
        /// The file.
        file: PathBuf,
        /// Elements shown per list and bytes shown per byte run (the rest are counted); 0
        /// shows everything. The same with --schema.
        #[arg(long, default_value_t = 4)]
        max_items: usize,
        /// Read the file with this schema (any .ksy the generator accepts) instead of a
        /// built-in format.
        #[arg(long)]
        schema: Option<PathBuf>,
        /// With --schema: an instance that fails to read fails the command (by default it
        /// shows its error in place and the rest of the file is shown).
        #[arg(long, requires = "schema")]
        strict: bool,
        /// With --schema: opaque type NAME (a type a `ks-opaque-types: true` schema uses
        /// without defining it) is the root type of schema FILE.ksy, read by the same
        /// interpreter; repeat for each. A schema using a custom processor (`process:
        /// my_fx(..)`, Rust code) is refused naming it.
        #[arg(long, value_name = "NAME=FILE.ksy", requires = "schema")]
        opaque: Vec<String>,
    },
    /// Print a file's raw layer as JSON (exactly what is stored; counts and lengths are implied).
    Decode {
        /// The file.
        file: PathBuf,
        /// Print the structure instead: every field with its start and end byte offset and
        /// its value (leaves), counts and lengths included.
        #[arg(long)]
        offsets: bool,
        /// Read the file with this schema (any .ksy the generator accepts) instead of a
        /// built-in format: JSON of every `seq` field and instance, byte arrays as hex
        /// strings.
        #[arg(long, conflicts_with = "offsets")]
        schema: Option<PathBuf>,
        /// With --schema: an instance that fails to read fails the command (by default it
        /// is shown as `{"__error": "message"}` and the rest of the file is shown).
        #[arg(long, requires = "schema")]
        strict: bool,
        /// With --schema: opaque type NAME (a type a `ks-opaque-types: true` schema uses
        /// without defining it) is the root type of schema FILE.ksy, read by the same
        /// interpreter; repeat for each. A schema using a custom processor (`process:
        /// my_fx(..)`, Rust code) is refused naming it.
        #[arg(long, value_name = "NAME=FILE.ksy", requires = "schema")]
        opaque: Vec<String>,
    },
    /// Write a file from the JSON that `decode` prints (byte-identical to the decoded file).
    Encode {
        /// Format of the JSON.
        #[arg(
            long,
            value_enum,
            required_unless_present = "schema",
            conflicts_with = "schema"
        )]
        format: Option<Format>,
        /// Write with this schema (any .ksy the generator accepts) instead of a built-in
        /// format, from JSON as `decode --schema` prints it (what is derived and what must be
        /// given: docs/schema-language.md, "Any schema without Rust").
        #[arg(long)]
        schema: Option<PathBuf>,
        /// With --schema: opaque type NAME (a type a `ks-opaque-types: true` schema uses
        /// without defining it) is the root type of schema FILE.ksy, read by the same
        /// interpreter; repeat for each. A schema using a custom processor (`process:
        /// my_fx(..)`, Rust code) is refused naming it.
        #[arg(long, value_name = "NAME=FILE.ksy", requires = "schema")]
        opaque: Vec<String>,
        /// The JSON file.
        input: PathBuf,
        /// Output file.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Check a file: first that it is valid (the same check as `inspect`, `decode` and
    /// `sample`: every byte, chunk and rule of the format), then, with --against, its content
    /// against the motion it was made from. SNAP: worst errors per recording. RPLY: every rule
    /// of the player, raw round trip, seeks equal to playing; with --against, every tick of
    /// every walker against the motion it was recorded from. CBTK: every recorded sample of
    /// the match rebuilt from the motion (crowd size and frames as the file's header says)
    /// against the track, to 8 digits. Other formats: validity only.
    Verify {
        /// The file.
        file: PathBuf,
        /// The motion file it was imported from (SNAP and CBTK; optional for RPLY).
        #[arg(long)]
        against: Option<PathBuf>,
        #[command(flatten)]
        unit: args::UnitArg,
        /// SNAP: studs per metre used at import (must be the same value).
        #[arg(long, default_value_t = formats::snap::DEFAULT_STUDS_PER_METRE, value_parser = args::positive, allow_negative_numbers = true)]
        studs_per_metre: f64,
        /// CBTK: crowd size used at import (default: the units in the file's header; a
        /// different value is refused).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        crowd: Option<u32>,
        /// CBTK: frames used at import (default: the frames in the file's header; a different
        /// value is refused).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        frames: Option<u32>,
        /// CBTK: elmos per metre used at import (an elmo is the Recoil engine's length unit).
        #[arg(long, default_value_t = 16.0, value_parser = args::positive, allow_negative_numbers = true)]
        elmos_per_metre: f64,
    },
    /// Print the decoded state at a time as JSON (SNAP: milliseconds from the start; RPLY:
    /// a tick, the player's state there; CBTK: a simulation frame, fractions allowed, with
    /// every unit, projectile, team number, feature and terrain point).
    ///
    /// The same rule for every format: a time before the file's first or after its last
    /// sample is an error that names the file's range (SNAP: 0 to the longest recording's
    /// last frame; a shorter recording holds its last frame).
    Sample {
        /// The file.
        file: PathBuf,
        /// The time, in the format's unit (SNAP: ms; RPLY: tick; CBTK: frame).
        #[arg(long, allow_negative_numbers = true, value_parser = args::finite)]
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
        /// Motion file (.bvh, study .json, ACL .sjson, glTF .gltf/.glb); default: the CMU walk
        /// fixture.
        #[arg(long)]
        motion: Option<PathBuf>,
        #[command(flatten)]
        unit: args::UnitArg,
        /// Characters.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
        characters: u64,
        /// Seconds recorded (at least one tick).
        #[arg(long, default_value_t = 600.0, value_parser = args::positive, allow_negative_numbers = true)]
        seconds: f64,
        /// Ticks per second (1 to 255).
        #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u8).range(1..))]
        tick_rate: u8,
        /// Keyframe interval in ticks.
        #[arg(long, default_value_t = formats::rply::DEFAULT_KEYFRAME_EVERY, value_parser = clap::value_parser!(u32).range(1..))]
        keyframe_every: u32,
        /// Position threshold in studs.
        #[arg(long, default_value_t = 0.05, value_parser = args::non_negative, allow_negative_numbers = true)]
        pos_threshold: f64,
        /// Rotation threshold in degrees.
        #[arg(long, default_value_t = 0.5, value_parser = args::non_negative, allow_negative_numbers = true)]
        rot_threshold_deg: f64,
        /// Random seeks timed.
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u64).range(1..))]
        seeks: u64,
        /// Record an upright root (HumanoidRootPart-like: heading only) instead of the
        /// clip root's full rotation.
        #[arg(long)]
        upright_root: bool,
        /// Also write the replay here.
        #[arg(short, long = "output", alias = "out")]
        output: Option<PathBuf>,
    },
}

/// The format a file's first bytes say it is. Errors: an empty file, no known header.
fn detect(bytes: &[u8], path: &Path) -> Result<&'static FormatSpec> {
    if bytes.is_empty() {
        anyhow::bail!(
            "{}: the file is empty; every known format starts with a header",
            path.display()
        );
    }
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

fn read_file(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The one notion of a valid file that `inspect`, `decode`, `encode`, `verify` and `sample`
/// share: the format's full decode (raw layer, every chunk and record, the format's own
/// rules). Errors: the first problem, with its field path and byte offset.
fn check_valid(fmt: &FormatSpec, bytes: &[u8], path: &Path) -> Result<()> {
    (fmt.decode_full)(bytes)
        .with_context(|| format!("{} is not a valid {} file", path.display(), fmt.title))
}

/// Reads a motion file with the command's length unit (see [`args::UnitArg`]) and the glTF
/// sampling rate `fps` (`None`: the animation's own), warning on stderr when the figure's
/// height suggests a wrong unit.
pub fn load_motion_with(
    path: &Path,
    unit: &args::UnitArg,
    animation: Option<String>,
    fps: Option<f64>,
) -> Result<Clip> {
    let metres_per_unit = unit.get()?;
    let opts = motion::LoadOptions {
        metres_per_unit,
        animation,
        fps,
    };
    // The loader's errors name the file and, inside it, the line or path.
    let clip = motion::load_motion_file_with(path, &opts).map_err(anyhow::Error::new)?;
    let used = metres_per_unit.unwrap_or_else(|| motion::default_metres_per_unit(path));
    if let Some(w) = motion::height_warning(&clip, used, args::UnitArg::OPTION) {
        eprintln!("warning: {}: {w}", path.display());
    }
    Ok(clip)
}

fn load_motion(path: &Path, unit: &args::UnitArg) -> Result<Clip> {
    load_motion_with(path, unit, None, None)
}

fn main() -> std::process::ExitCode {
    args::quiet_broken_pipe();
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
            unit,
            studs_per_metre,
            output,
            study,
        } => demo(
            input.as_deref(),
            &unit,
            studs_per_metre,
            output.as_deref(),
            study,
        ),
        Cmd::Import {
            format,
            motion,
            unit,
            output,
            studs_per_metre,
            crowd,
            frames,
            elmos_per_metre,
        } => match format {
            ImportFormat::Cbtrack => cbtrack::import(
                cbtrack::load_any(&motion, &unit)?,
                &output,
                crowd,
                frames,
                elmos_per_metre,
            ),
            ImportFormat::Snap => {
                snap::import(&load_motion(&motion, &unit)?, &output, studs_per_metre)
            }
            ImportFormat::Rply => {
                rply::import(&load_motion(&motion, &unit)?, &output, studs_per_metre)
            }
        },
        Cmd::CbtrackScale { output, quiet } => cbtrack::scale(&output, quiet),
        #[cfg(feature = "view")]
        Cmd::View(a) => view::run(a),
        #[cfg(not(feature = "schema"))]
        Cmd::Inspect {
            schema: Some(schema),
            ..
        }
        | Cmd::Decode {
            schema: Some(schema),
            ..
        }
        | Cmd::Encode {
            schema: Some(schema),
            ..
        } => bail!(
            "--schema {}: this build leaves out the cargo feature `schema`",
            schema.display()
        ),
        #[cfg(feature = "schema")]
        Cmd::Inspect {
            file,
            max_items,
            schema: Some(schema),
            strict,
            opaque,
        } => {
            let ext = schema_cmd::opaque_types(&opaque)?;
            let sch = schema_cmd::load_with(&schema, &ext)?;
            let bytes = read_file(&file)?;
            let header = format!(
                "{} ({} bytes, schema {}: {})",
                file.display(),
                bytes.len(),
                schema.display(),
                sch.id
            );
            let errors = schema_cmd::instance_errors(strict);
            schema_cmd::inspect(&sch, &bytes, &file, &header, (max_items, errors), &ext)
        }
        Cmd::Inspect {
            file, max_items, ..
        } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            let mut res = Ok(());
            emit_stdout(|out| {
                writeln!(
                    out,
                    "{} ({} bytes, {})",
                    file.display(),
                    bytes.len(),
                    fmt.title
                )?;
                res = tree::print(out, fmt, &bytes, max_items)?;
                if fmt.name == cbtrack::FORMAT_NAME {
                    cbtrack::inspect_content(out, &bytes, max_items)?;
                }
                if fmt.name == clip::FORMAT_NAME {
                    clip::inspect_content(out, &bytes, max_items)?;
                }
                Ok(())
            })?;
            // Printed as it is read, like the file's own tree: no tree is held in memory.
            match wsnap::decompressed_message(&bytes) {
                Ok(Some(whole)) => emit_stdout(|out| {
                    writeln!(out, "decompressed body, as the raw message it stands for:")?;
                    tree::print(out, fmt, &whole, max_items).map(|_| ())
                })?,
                Ok(None) => {}
                Err(e) => eprintln!("cannot show the decompressed body: {e:#}"),
            }
            res.with_context(|| format!("{} is not a valid {} file", file.display(), fmt.title))?;
            check_valid(fmt, &bytes, &file)
        }
        #[cfg(feature = "schema")]
        Cmd::Decode {
            file,
            schema: Some(schema),
            strict,
            opaque,
            ..
        } => {
            let ext = schema_cmd::opaque_types(&opaque)?;
            let sch = schema_cmd::load_with(&schema, &ext)?;
            let bytes = read_file(&file)?;
            // Checked, then written as it is read (arrays of numbers 16 to a line, as the
            // built-in formats' JSON): no tree of the file is held.
            let errors = schema_cmd::instance_errors(strict);
            schema_cmd::decode_json(&sch, &bytes, &file, errors, &ext)
        }
        Cmd::Decode { file, offsets, .. } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            // Only valid files are printed, so whatever `decode` prints, `encode` writes back.
            check_valid(fmt, &bytes, &file)?;
            if offsets {
                // Written while the file is read: memory is the decode's, not a node per field.
                let mut res = Ok(());
                emit_stdout(|out| {
                    res = tree::print_json(out, fmt, &bytes)?;
                    Ok(())
                })?;
                return res.with_context(|| {
                    format!("{} is not a valid {} file", file.display(), fmt.title)
                });
            }
            // Streamed: the JSON is written as it is serialized, never held whole.
            emit_stdout(|out| (fmt.write_json)(&bytes, out))
                .with_context(|| format!("cannot print {} as JSON", file.display()))
        }
        #[cfg(feature = "schema")]
        Cmd::Encode {
            schema: Some(schema),
            input,
            output,
            opaque,
            ..
        } => {
            let ext = schema_cmd::opaque_types(&opaque)?;
            let sch = schema_cmd::load_with(&schema, &ext)?;
            let text = std::fs::read_to_string(&input)
                .with_context(|| format!("cannot read {}", input.display()))?;
            let value = schema_cmd::parse_given(&text)
                .with_context(|| format!("{} is not JSON", input.display()))?;
            drop(text);
            let bytes = schema_cmd::encode(&sch, &value, &ext).with_context(|| {
                format!(
                    "{} cannot be written with {}",
                    input.display(),
                    schema.display()
                )
            })?;
            std::fs::write(&output, &bytes)
                .with_context(|| format!("cannot write {}", output.display()))?;
            println!("wrote {} ({} bytes)", output.display(), bytes.len());
            Ok(())
        }
        Cmd::Encode {
            format,
            input,
            output,
            ..
        } => {
            let Some(format) = format else {
                args::argument_error("give --format or --schema");
            };
            let fmt = format.spec();
            let text = std::fs::read_to_string(&input)
                .with_context(|| format!("cannot read {}", input.display()))?;
            let shape = formats::key_shape(&text)
                .with_context(|| format!("{} is not JSON", input.display()))?;
            // `from_json_text_strict` refuses keys the layout does not have and checks the
            // written bytes with the same full decode as `inspect`, so no invalid file is
            // written; it reads the text straight into the raw layer (no `Value` of it).
            let bytes = formats::from_json_text_strict(fmt, &text, &shape).map_err(|e| {
                anyhow::anyhow!(
                    "{} is not valid {} raw JSON: {}",
                    input.display(),
                    fmt.title,
                    json_words::in_json_words(&e)
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
            unit,
            studs_per_metre,
            crowd,
            frames,
            elmos_per_metre,
        } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            check_valid(fmt, &bytes, &file)?;
            if fmt.name == formats::rply::FORMAT.name {
                let name = file.display().to_string();
                return match against {
                    Some(a) => rply::verify_against(
                        &bytes,
                        &name,
                        &load_motion(&a, &unit)?,
                        studs_per_metre,
                    ),
                    None => rply::verify(&bytes, &name),
                };
            }
            if fmt.name == formats::cbtrack::FORMAT.name {
                let Some(against) = against else {
                    bail!("CBTK verify needs --against <motion file>");
                };
                return cbtrack::verify(
                    &bytes,
                    cbtrack::load_any(&against, &unit)?,
                    crowd,
                    frames,
                    elmos_per_metre,
                );
            }
            if fmt.name != formats::snap::FORMAT.name {
                if against.is_some() {
                    bail!(
                        "--against applies to SNAP, RPLY and CBTK files, not {}",
                        fmt.title
                    );
                }
                println!(
                    "{}: valid {} file ({} bytes)",
                    file.display(),
                    fmt.title,
                    bytes.len()
                );
                return Ok(());
            }
            let Some(against) = against else {
                bail!("SNAP verify needs --against <motion file>");
            };
            snap::verify(
                &bytes,
                &file,
                &load_motion(&against, &unit)?,
                studs_per_metre,
            )
        }
        Cmd::Wsnap { cmd } => wsnap::run(cmd),
        Cmd::Sample { file, at } => {
            let bytes = read_file(&file)?;
            let fmt = detect(&bytes, &file)?;
            check_valid(fmt, &bytes, &file)?;
            if fmt.name == formats::rply::FORMAT.name {
                return rply::sample(&bytes, at);
            }
            if fmt.name == formats::cbtrack::FORMAT.name {
                return cbtrack::sample(&bytes, at);
            }
            if fmt.name != formats::snap::FORMAT.name {
                bail!("{} files have no timeline to sample", fmt.title);
            }
            snap::sample(&bytes, &file, at)
        }
        Cmd::RplyCrowd {
            motion,
            unit,
            characters,
            seconds,
            tick_rate,
            keyframe_every,
            pos_threshold,
            rot_threshold_deg,
            seeks,
            upright_root,
            output,
        } => {
            let ticks = seconds * f64::from(tick_rate);
            if !(ticks.round() >= 1.0 && ticks.round() <= f64::from(u32::MAX)) {
                args::argument_error(format!(
                    "--seconds {seconds} at --tick-rate {tick_rate} is {ticks} ticks; give at least one tick and at most {}",
                    u32::MAX
                ));
            }
            let path = match motion {
                Some(p) => p,
                None => statepack_fixtures::fixture_path("motion/cmu-131-01-walk.bvh")
                    .map_err(|e| anyhow::anyhow!("{e}"))?,
            };
            let clip = load_motion(&path, &unit)?;
            let opts = statepack::sim::rply_crowd::CrowdOptions {
                characters: usize::try_from(characters).context("--characters is too large")?,
                ticks: ticks.round() as u32,
                tick_rate,
                keyframe_every,
                thresholds: statepack::codecs::rply_xform::Thresholds {
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
                usize::try_from(seeks).context("--seeks is too large")?,
                output.as_deref(),
            )
        }
    }
}

/// An in-memory tree printed line for line as `inspect` prints the streamed one: the
/// reference the streamed printer is tested against.
#[cfg(test)]
fn print_tree(
    out: &mut impl Write,
    n: &TraceNode,
    depth: usize,
    max_items: usize,
) -> io::Result<()> {
    tree::line(
        out,
        (n.start, n.end),
        (n.start_bit, n.end_bit),
        depth,
        &n.name,
        n.typed.as_ref(),
        max_items,
    )?;
    let list = n.children.first().is_some_and(|c| c.name.starts_with('['));
    let shown = if list && max_items != 0 {
        max_items
    } else {
        usize::MAX
    };
    for c in n.children.iter().take(shown) {
        print_tree(out, c, depth + 1, max_items)?;
    }
    if n.children.len() > shown {
        tree::more(out, depth, n.children.len() - shown)?;
    }
    Ok(())
}

/// Writes long output to stdout; a reader that goes away early (`| head`) is not an error.
pub(crate) fn emit_stdout(
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

fn demo(
    input: Option<&Path>,
    unit: &args::UnitArg,
    studs_per_metre: f64,
    out: Option<&Path>,
    study: bool,
) -> Result<()> {
    let (clip, source) = match input {
        Some(p) => (load_motion(p, unit)?, p.display().to_string()),
        None => {
            if unit.unit_m.is_some() {
                bail!("--unit-m applies to --input; the generated walk is in metres");
            }
            (
                motion::walk::study_walk_clip(),
                "study walk (generated in code: 30 joints, 180 frames at 60 fps)".to_string(),
            )
        }
    };
    println!("input: {source}");
    println!(
        "       {} joints, {} frames, {:.3} s, figure {:.2} m tall, {:.4} studs per metre",
        clip.skeleton.bones().len(),
        clip.frame_count(),
        clip.duration_s(),
        motion::figure_height_m(&clip),
        studs_per_metre
    );
    const RUNS: usize = 9;
    // Stages on stderr when it is a terminal; the table goes through it to stdout.
    let p = progress::Progress::spinner("demo: SNAP v1.3, encode and decode 9 times");
    let (enc_s, rec) = time_median(RUNS, || formats::snap::import_clip(&clip, studs_per_metre));
    let rec = rec?;
    let bytes = rec.finish()?;
    let (dec_s, decoded) = time_median(RUNS, || formats::snap::read(&bytes));
    let decoded = decoded?;
    if let Some(o) = out {
        std::fs::write(o, &bytes).with_context(|| format!("cannot write {}", o.display()))?;
        p.println(&format!("wrote {}", o.display()));
    }
    let errs = formats::snap::verify_against_clip(&decoded, &clip, studs_per_metre)?;
    let stats = rec.stats();
    let all_abs = formats::snap::all_absolute_size(rec.raw());
    let worst_p = errs
        .iter()
        .map(|e| e.max_pos_error_studs)
        .fold(0.0, f64::max);
    let worst_r = errs.iter().map(|e| e.max_rot_error_deg).fold(0.0, f64::max);
    let bound_p = errs.iter().map(|e| e.pos_bound_studs).fold(0.0, f64::max);
    let frames = stats.frames.max(1) as f64;
    p.println("");
    p.println("| format | bytes | bytes/frame | vs all-absolute | delta frames | worst pos (studs) | worst rot (deg) | encode | decode |");
    p.println("|---|---|---|---|---|---|---|---|---|");
    p.println(&format!(
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
    ));
    p.stage("demo: RPLY v3, 20 walkers for 60 s");
    p.println(&rply::demo_row(&clip, studs_per_metre)?);
    p.stage("demo: CBTK v1, a crowd of 4 for 600 frames");
    p.println(&cbtrack::demo_row(&clip)?);
    p.stage("demo: MsgWorldSnapshot, the bot swarm");
    let mut row = Vec::new();
    let wsnap_note = wsnap::demo_row(&mut row)?;
    p.println(String::from_utf8_lossy(&row).trim_end());
    p.println("");
    p.println(&format!(
        "SNAP row: a frame is one joint at one motion frame; {} frames ({} absolute, of which {} forced by large motion; {} delta); bounds: position {:.2e} studs, rotation {:.2e} deg (docs/formats/snap.md); encode/decode: median of {RUNS} runs, including forward kinematics on encode",
        stats.frames,
        stats.absolute,
        stats.forced_absolute,
        stats.delta,
        bound_p,
        statepack::codecs::snap_delta::CHAIN_ROT_ERROR_BOUND_RAD.to_degrees()
    ));
    snap::check_bounds(&errs)?;
    p.println("SNAP verified: every frame of every recording is within the documented bounds");
    p.println("RPLY row: the same clip as 20 walkers for 60 s at 15 Hz; a frame is one entity-tick, all-absolute is every transform a full XFORM, delta frames are XFORM_D ops among the transforms given, encode is recording and decode is playing every tick (docs/formats/rply.md)");
    p.println("CBTK row: the clip as a crowd of 4 units for 600 frames, thinned to 0.5 elmo (an elmo is the Recoil engine's length unit, 1/8 of a map square; 16 elmos per metre here) (docs/formats/cbtrack.md)");
    p.println(&wsnap_note);
    clip::demo_rows(&clip, &p)?;
    if study {
        clip::demo_study_rows(&clip, &p)?;
    } else {
        p.println("");
        p.println("(`--study` adds the keyframe-compression study's pipeline on the same clip, for comparison: docs/formats/study_tracks.md)");
    }
    Ok(())
}
