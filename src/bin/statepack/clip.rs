//! `statepack clip …`: keyframe compression of animation clips with the study's pipeline
//! (`docs/formats/study_tracks.md`).

use anyhow::{bail, Context, Result};
use clap::Subcommand;
use statepack::formats::{study_report, study_tracks};
use statepack::runtime::keyframe::{fk_error, gzip_len, plan, PlanOptions};
use statepack::runtime::motion::{self, Clip};
use std::path::{Path, PathBuf};

/// The `clip` subcommands.
#[derive(Subcommand)]
pub enum ClipCmd {
    /// Compress a motion file into a study track file and verify it by decoding.
    Compress {
        /// Motion file (.bvh or study .json).
        motion: PathBuf,
        /// Keyframe tolerance, millimetres (rotations get the angle through a 0.35 m lever).
        #[arg(long, default_value_t = 1.0)]
        tolerance_mm: f64,
        /// Linear keys instead of cubic Hermite.
        #[arg(long)]
        linear: bool,
        /// float32 keys instead of 16-bit scalars and smallest-three rotations.
        #[arg(long)]
        float: bool,
        /// Output file.
        #[arg(short, long)]
        out: PathBuf,
    },
    /// Size against error over a range of tolerances, for linear and cubic keys.
    Sweep {
        /// Motion file (.bvh or study .json).
        motion: PathBuf,
        /// Quantise (16-bit scalars, smallest-three rotations).
        #[arg(long)]
        quantize: bool,
    },
    /// Print the study's tables, computed from the study's clips in the fixtures.
    Study,
}

/// Runs a `clip` subcommand.
pub fn run(cmd: ClipCmd) -> Result<()> {
    match cmd {
        ClipCmd::Study => {
            let clips = study_report::load_study_clips().map_err(anyhow::Error::msg)?;
            let report = study_report::study_report(&clips)?;
            print!("{}", report.render());
            Ok(())
        }
        ClipCmd::Compress {
            motion,
            tolerance_mm,
            linear,
            float,
            out,
        } => compress(&motion, tolerance_mm, !linear, !float, &out),
        ClipCmd::Sweep { motion, quantize } => sweep(&motion, quantize),
    }
}

fn load(path: &Path) -> Result<Clip> {
    motion::load_motion_file(path).with_context(|| format!("cannot load {}", path.display()))
}

fn compress(path: &Path, mm: f64, cubic: bool, quantize: bool, out: &Path) -> Result<()> {
    if !(mm.is_finite() && mm > 0.0) {
        bail!("--tolerance-mm must be a positive number, got {mm}");
    }
    let clip = load(path)?;
    let raw = study_tracks::encode_raw(&clip)?;
    let p = plan(&clip, PlanOptions::at_mm(mm, cubic, quantize));
    let bytes = study_tracks::encode_plan(&p)?;
    std::fs::write(out, &bytes).with_context(|| format!("cannot write {}", out.display()))?;
    let planned = fk_error(&clip, &p.decoded);
    let decoded = study_tracks::read(&bytes)?;
    let file_clip = Clip {
        frames: decoded.to_frames(),
        ..clip.clone()
    };
    let from_file = fk_error(&clip, &file_clip);
    let secs = clip.duration_s();
    println!(
        "{}: {} bones, {} frames, {:.3} s",
        path.display(),
        clip.skeleton.len(),
        clip.frame_count(),
        secs
    );
    println!(
        "wrote {}: {} bytes ({} gzipped), {:.1} B/s, ratio {:.2}x against {} raw float32 bytes",
        out.display(),
        bytes.len(),
        gzip_len(&bytes),
        bytes.len() as f64 / secs,
        raw.len() as f64 / bytes.len() as f64,
        raw.len()
    );
    println!(
        "worst joint error {:.3} mm, worst rotation error {:.3} deg (decoded from the file: {:.3} mm, {:.3} deg)",
        planned.max_m * 1000.0,
        planned.max_deg,
        from_file.max_m * 1000.0,
        from_file.max_deg
    );
    Ok(())
}

fn sweep(path: &Path, quantize: bool) -> Result<()> {
    let clip = load(path)?;
    let secs = clip.duration_s();
    println!("interp  tol_mm    bytes      B/s  maxErr_mm  maxDeg");
    for cubic in [false, true] {
        for mm in study_report::SWEEP_MM {
            let p = plan(&clip, PlanOptions::at_mm(mm, cubic, quantize));
            let b = study_tracks::encode_plan(&p)?;
            let e = fk_error(&clip, &p.decoded);
            println!(
                "{} {:>7} {:>8} {:>8.0} {:>10.2} {:>7.3}",
                if cubic { "cubic" } else { "lin  " },
                mm,
                b.len(),
                b.len() as f64 / secs,
                e.max_m * 1000.0,
                e.max_deg
            );
        }
    }
    Ok(())
}

/// The demo's animation-clip table: the clip through the study's pipeline (quantised cubic
/// keys at 1 mm) into the study's track container, decoded back from the bytes.
pub fn demo_rows(clip: &Clip) -> Result<()> {
    let raw = study_tracks::encode_raw(clip)?;
    let secs = clip.duration_s();
    println!();
    println!("| format | bytes | B/s | vs raw float32 | gzip | worst joint (mm, from the file) | worst rot (deg) |");
    println!("|---|---|---|---|---|---|---|");
    for (label, cubic, quant) in [
        ("study tracks, linear float32 keys, 1 mm", false, false),
        ("study tracks, cubic quantised keys, 1 mm", true, true),
    ] {
        let p = plan(clip, PlanOptions::at_mm(1.0, cubic, quant));
        let bytes = study_tracks::encode_plan(&p)?;
        let decoded = study_tracks::read(&bytes)?;
        let from_file = Clip {
            frames: decoded.to_frames(),
            ..clip.clone()
        };
        let e = fk_error(clip, &from_file);
        println!(
            "| {label} | {} | {:.0} | {:.1}x ({} B) | {} | {:.2} | {:.3} |",
            bytes.len(),
            bytes.len() as f64 / secs,
            raw.len() as f64 / bytes.len() as f64,
            raw.len(),
            gzip_len(&bytes),
            e.max_m * 1000.0,
            e.max_deg
        );
    }
    Ok(())
}
