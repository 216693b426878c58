//! The tables of the animation keyframe-compression study
//! (`specs/animation-keyframe-compression.txt`), computed by this implementation from the
//! study's clips: what `statepack clip study` prints and `tests/study_tables.rs` pins.
//!
//! Sizes come from the real writer ([`crate::formats::study_tracks`]), errors from the codecs'
//! pipeline ([`statepack_codecs::keyframe`]), gzip sizes from flate2 at level 6.

use std::fmt::Write as _;

use statepack_codecs::keyframe::{fk_error, gzip_len, mm_to_deg, plan, Plan, PlanOptions};
use statepack_codecs::motion::{Clip, MotionError};
use statepack_runtime::io::EncodeError;

use crate::formats::study_tracks::{encode_plan, encode_raw, record_bytes};

/// The tolerance of the study's per-clip tables, millimetres.
pub const TABLE_TOLERANCE_MM: f64 = 1.0;
/// The tolerances of the walk's sweep, millimetres.
pub const SWEEP_MM: [f64; 9] = [0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0];

/// One row of a clip's technique table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The study's row number, 1..=7.
    pub number: u8,
    /// What the row does.
    pub label: &'static str,
    /// Encoded bytes.
    pub bytes: usize,
    /// Bytes after gzip (level 6).
    pub gzip: usize,
    /// Worst joint displacement after forward kinematics, millimetres (`None` for row 1,
    /// which is not decoded).
    pub err_mm: Option<f64>,
    /// Worst world rotation error, degrees.
    pub err_deg: Option<f64>,
}

/// A clip's table: constant counts, the seven rows, keys kept per animated track.
#[derive(Debug, Clone, PartialEq)]
pub struct ClipTable {
    /// Clip name (`walk`, `jump`, `mocap`).
    pub name: String,
    /// Frame count.
    pub frames: usize,
    /// Frames per second.
    pub fps: f64,
    /// Constant scalar channels, of `6 × bones`.
    pub constant_scalars: usize,
    /// Scalar channel count.
    pub scalars: usize,
    /// Constant rotation tracks.
    pub constant_rotations: usize,
    /// Rotation track count.
    pub rotations: usize,
    /// Rows 1..=7.
    pub rows: Vec<Row>,
    /// Animated (non-constant) tracks.
    pub animated_tracks: usize,
    /// Keys kept per animated track per second, linear (row 4) and cubic (row 5).
    pub keys_per_track_s: (f64, f64),
}

impl ClipTable {
    /// Clip length in seconds as the study counts it, frames / fps (3.00 s for the walk's
    /// 180 frames at 60 fps), so that its B/s and keys per second match the study's; the
    /// CLI's own commands count from the first frame to the last
    /// (`statepack_codecs::motion::Clip::duration_s`, 2.983 s).
    pub fn seconds(&self) -> f64 {
        self.frames as f64 / self.fps
    }
}

/// One row of the walk's tolerance sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRow {
    /// Cubic Hermite (else linear).
    pub cubic: bool,
    /// Tolerance, millimetres.
    pub mm: f64,
    /// Keys stored (a constant channel counts one).
    pub keys: usize,
    /// Encoded bytes (float32 keys).
    pub bytes: usize,
    /// Bytes after gzip.
    pub gzip: usize,
    /// Worst joint displacement, millimetres.
    pub err_mm: f64,
    /// Worst world rotation error, degrees.
    pub err_deg: f64,
}

/// The gzip-by-record-type analysis (walk, cubic keys, 1 mm).
#[derive(Debug, Clone, PartialEq)]
pub struct GzipSplit {
    /// `float32 keys` or `quantised keys`.
    pub label: &'static str,
    /// Constant records: bytes and gzip bytes.
    pub constant: (usize, usize),
    /// Animated records: bytes and gzip bytes.
    pub animated: (usize, usize),
    /// Both concatenated (no header): bytes and gzip bytes.
    pub whole: (usize, usize),
}

/// Everything `statepack clip study` prints.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyReport {
    /// Walk, jump, mocap.
    pub clips: Vec<ClipTable>,
    /// The walk's sweep, linear then cubic.
    pub sweep: Vec<SweepRow>,
    /// The jump at 0.1 and 1 mm, linear and cubic.
    pub jump_tight: Vec<SweepRow>,
    /// gzip by record type.
    pub gzip_split: Vec<GzipSplit>,
    /// The jump's animated keys per phase (label, first frame, end frame, keys) at 1 mm linear.
    pub jump_histogram: Vec<(&'static str, usize, usize, usize)>,
}

/// Loads the three study clips (`walk`, `jump`, `mocap`) from the fixtures.
///
/// # Errors
///
/// When a fixture is missing or does not parse.
pub fn load_study_clips() -> Result<Vec<Clip>, String> {
    ["walk", "jump", "mocap"]
        .iter()
        .map(|n| {
            let path = statepack_fixtures::fixture_path(&format!("study/study-{n}.json"))
                .map_err(|e| e.to_string())?;
            statepack_codecs::motion::load_motion_file(&path)
                .map_err(|e: MotionError| e.to_string())
        })
        .collect()
}

fn measured(clip: &Clip, p: &Plan) -> Result<(usize, usize, f64, f64), EncodeError> {
    let b = encode_plan(p)?;
    let e = fk_error(clip, &p.decoded);
    Ok((b.len(), gzip_len(&b), e.max_m * 1000.0, e.max_deg))
}

/// The table of one clip at [`TABLE_TOLERANCE_MM`].
///
/// # Errors
///
/// When the writer refuses the clip (more frames or bones than u16).
pub fn clip_table(clip: &Clip) -> Result<ClipTable, EncodeError> {
    let e = TABLE_TOLERANCE_MM / 1000.0;
    let d = mm_to_deg(TABLE_TOLERANCE_MM);
    let raw = encode_raw(clip)?;
    let mut rows = vec![Row {
        number: 1,
        label: "raw float32, every channel every frame",
        bytes: raw.len(),
        gzip: gzip_len(&raw),
        err_mm: None,
        err_deg: None,
    }];
    /// Row number, label, tolerance (m, deg), cubic, quantise, drop constants.
    type RowSpec = (u8, &'static str, Option<(f64, f64)>, bool, bool, bool);
    let specs: [RowSpec; 6] = [
        (
            2,
            "+ constant-channel removal (lossless)",
            None,
            false,
            false,
            true,
        ),
        (
            3,
            "keyframe reduction only, linear",
            Some((e, d)),
            false,
            false,
            false,
        ),
        (
            4,
            "constant removal + linear keyframes",
            Some((e, d)),
            false,
            false,
            true,
        ),
        (
            5,
            "constant removal + cubic keyframes",
            Some((e, d)),
            true,
            false,
            true,
        ),
        (
            6,
            "5 + 16-bit pos/scale + smallest-3 quat",
            Some((e, d)),
            true,
            true,
            true,
        ),
        (
            7,
            "constant removal + quantisation only",
            None,
            false,
            true,
            true,
        ),
    ];
    let mut plans = Vec::new();
    for (number, label, tolerance, cubic, quantize, drop_constant) in specs {
        let p = plan(
            clip,
            PlanOptions {
                tolerance,
                cubic,
                quantize,
                drop_constant,
            },
        );
        let (bytes, gzip, mm, deg) = measured(clip, &p)?;
        rows.push(Row {
            number,
            label,
            bytes,
            gzip,
            err_mm: Some(mm),
            err_deg: Some(deg),
        });
        plans.push(p);
    }
    let (p4, p5) = (&plans[2], &plans[3]);
    let scalars = p4.scalars.len();
    let rotations = p4.rotations.len();
    let animated = (scalars - p4.constant_scalars()) + (rotations - p4.constant_rotations());
    let secs = clip.frame_count() as f64 / clip.fps();
    let kd = |p: &Plan| {
        (p.keys_scalar() + p.keys_quat() - p.constant_scalars() - p.constant_rotations()) as f64
            / animated.max(1) as f64
            / secs
    };
    Ok(ClipTable {
        name: clip.name.clone(),
        frames: clip.frame_count(),
        fps: clip.fps(),
        constant_scalars: p4.constant_scalars(),
        scalars,
        constant_rotations: p4.constant_rotations(),
        rotations,
        rows,
        animated_tracks: animated,
        keys_per_track_s: (kd(p4), kd(p5)),
    })
}

/// One sweep row: float32 keys at `mm`, constant removal on.
///
/// # Errors
///
/// As [`clip_table`].
pub fn sweep_row(clip: &Clip, mm: f64, cubic: bool) -> Result<SweepRow, EncodeError> {
    let p = plan(clip, PlanOptions::at_mm(mm, cubic, false));
    let (bytes, gzip, err_mm, err_deg) = measured(clip, &p)?;
    Ok(SweepRow {
        cubic,
        mm,
        keys: p.keys_scalar() + p.keys_quat(),
        bytes,
        gzip,
        err_mm,
        err_deg,
    })
}

/// The whole report from the clips `[walk, jump, mocap]`.
///
/// # Errors
///
/// As [`clip_table`]; also when fewer than three clips are given.
pub fn study_report(clips: &[Clip]) -> Result<StudyReport, EncodeError> {
    let [walk, jump, ..] = clips else {
        return Err(EncodeError::new(
            statepack_runtime::io::EncodeErrorKind::Semantic(
                "the study report needs the walk, jump and mocap clips".into(),
            ),
        ));
    };
    let tables = clips
        .iter()
        .map(clip_table)
        .collect::<Result<Vec<_>, _>>()?;
    let mut sweep = Vec::new();
    for cubic in [false, true] {
        for mm in SWEEP_MM {
            sweep.push(sweep_row(walk, mm, cubic)?);
        }
    }
    let mut jump_tight = Vec::new();
    for mm in [0.1, 1.0] {
        for cubic in [false, true] {
            jump_tight.push(sweep_row(jump, mm, cubic)?);
        }
    }
    let mut gzip_split = Vec::new();
    for (label, quant) in [("float32 keys", false), ("quantised keys", true)] {
        let p = plan(walk, PlanOptions::at_mm(TABLE_TOLERANCE_MM, true, quant));
        let (c, a) = record_bytes(&p)?;
        let whole: Vec<u8> = c.iter().chain(&a).copied().collect();
        gzip_split.push(GzipSplit {
            label,
            constant: (c.len(), gzip_len(&c)),
            animated: (a.len(), gzip_len(&a)),
            whole: (whole.len(), gzip_len(&whole)),
        });
    }
    let pj = plan(jump, PlanOptions::at_mm(TABLE_TOLERANCE_MM, false, false));
    let mut hist = vec![0usize; jump.frame_count()];
    for s in pj.scalars.iter().filter(|s| !s.constant) {
        for &k in &s.keys {
            hist[k] += 1;
        }
    }
    for r in pj.rotations.iter().filter(|r| !r.constant) {
        for &k in &r.keys {
            hist[k] += 1;
        }
    }
    let phases: [(&str, usize, usize); 7] = [
        ("0.00-0.30 idle", 0, 18),
        ("0.30-0.48 crouch", 18, 29),
        ("0.48-0.54 launch", 29, 32),
        ("0.54-1.10 airborne", 32, 66),
        ("1.10-1.18 impact", 66, 71),
        ("1.18-1.45 recover", 71, 87),
        ("1.45-2.00 settle", 87, 120),
    ];
    let jump_histogram = phases
        .iter()
        .map(|&(l, a, b)| {
            (
                l,
                a,
                b,
                hist.get(a..b.min(hist.len())).map_or(0, |s| s.iter().sum()),
            )
        })
        .collect();
    Ok(StudyReport {
        clips: tables,
        sweep,
        jump_tight,
        gzip_split,
        jump_histogram,
    })
}

impl StudyReport {
    /// The report as text, laid out like the study's output.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for c in &self.clips {
            let _ = writeln!(
                s,
                "{:<6} {} frames @{}fps  {}/{} scalar channels constant, {}/{} rotation tracks constant",
                c.name, c.frames, c.fps.round(), c.constant_scalars, c.scalars, c.constant_rotations, c.rotations
            );
        }
        for c in &self.clips {
            let secs = c.seconds();
            let _ = writeln!(
                s,
                "\n### {} — {:.2} s, tolerance {} mm / {:.3} deg",
                c.name,
                secs,
                TABLE_TOLERANCE_MM,
                mm_to_deg(TABLE_TOLERANCE_MM)
            );
            let _ = writeln!(
                s,
                "{:<42}  bytes     B/s    gzip   gzB/s  maxErr_mm  maxDeg",
                "technique"
            );
            for r in &c.rows {
                let label = format!("{} {}", r.number, r.label);
                let _ = writeln!(
                    s,
                    "{:<42} {:>6} {:>7.0} {:>7} {:>7.0} {:>9} {:>7}",
                    label,
                    r.bytes,
                    r.bytes as f64 / secs,
                    r.gzip,
                    r.gzip as f64 / secs,
                    r.err_mm.map_or("0".into(), |e| format!("{e:.2}")),
                    r.err_deg.map_or("0".into(), |e| format!("{e:.3}")),
                );
            }
            let (l, cu) = c.keys_per_track_s;
            let _ = writeln!(
                s,
                "   {} animated tracks; keys kept per animated track per second: linear {:.1}/{:.0} ({:.1}%), cubic {:.1}/{:.0} ({:.1}%)",
                c.animated_tracks, l, c.fps, l / c.fps * 100.0, cu, c.fps, cu / c.fps * 100.0
            );
        }
        let secs = self.clips.first().map_or(1.0, ClipTable::seconds);
        let _ = writeln!(
            s,
            "\n### walk — tolerance sweep (constant removal always on)"
        );
        let _ = writeln!(
            s,
            "interp  eps_mm  eps_deg    keys   bytes    B/s    gzip  maxErr_mm  maxDeg"
        );
        for r in &self.sweep {
            let _ = writeln!(
                s,
                "{} {:>7} {:>8.3} {:>7} {:>7} {:>6.0} {:>7} {:>10.2} {:>7.3}",
                if r.cubic { "cubic" } else { "lin  " },
                r.mm,
                mm_to_deg(r.mm),
                r.keys,
                r.bytes,
                r.bytes as f64 / secs,
                r.gzip,
                r.err_mm,
                r.err_deg
            );
        }
        let _ = writeln!(
            s,
            "\n### jump — does a cubic curve help at a tight tolerance?"
        );
        for r in &self.jump_tight {
            let _ = writeln!(
                s,
                "{} {:>5} mm  keys {:>5}  bytes {:>6}  maxErr {:.2} mm",
                if r.cubic { "cubic" } else { "lin  " },
                r.mm,
                r.keys,
                r.bytes,
                r.err_mm
            );
        }
        let _ = writeln!(
            s,
            "\n### gzip on the packed stream, by record type (walk, cubic keys)"
        );
        for g in &self.gzip_split {
            let x =
                |(a, b): (usize, usize)| format!("{a} B -> {b} B ({:.2}x)", a as f64 / b as f64);
            let _ = writeln!(
                s,
                "{}: constant {}, animated {}, whole {}",
                g.label,
                x(g.constant),
                x(g.animated),
                x(g.whole)
            );
        }
        let _ = writeln!(s, "\n### jump: where the keyframes land");
        let tot: usize = self.jump_histogram.iter().map(|h| h.3).sum();
        for &(l, a, b, k) in &self.jump_histogram {
            let _ = writeln!(
                s,
                "{:<19} {:>3} frames  {:>4} keys ({:>5.1}%, {:>5.1} keys/frame)",
                l,
                b - a,
                k,
                k as f64 / tot.max(1) as f64 * 100.0,
                k as f64 / (b - a) as f64
            );
        }
        let _ = writeln!(s, "total animated keys {tot}");
        s
    }
}
