//! The CLI's CBTK v1 commands: import a motion file as a crowd match, sample a frame, verify
//! against the recording, the scale run, and the demo row.

use anyhow::{bail, Context, Result};
use statepack::codecs::motion::Clip;
use statepack::formats::cbtrack::writer::{SectionBytes, Stats};
use statepack::formats::cbtrack::{self, Track};
use statepack::runtime::cbtk_columns::{deflate, ChunkBuilder};
use statepack::sim::cbtrack_match::MatchSpec;
use std::path::Path;
use std::time::Instant;

/// The registry name of the CBTK format, for the commands that add a content view.
pub const FORMAT_NAME: &str = cbtrack::FORMAT.name;

/// A motion file for a crowd, read with the command's length unit: glTF (`.gltf` / `.glb`,
/// first skin and animation) resampled at 30 frames per second, the simulation's rate, and
/// every other motion format (`.bvh`, study `.json`, `.acl.sjson`) at its own frames.
///
/// Errors: the unit is not a finite positive number, or the file cannot be read as motion.
pub fn load_any(path: &Path, unit: &crate::args::UnitArg) -> Result<Clip> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let fps = (ext == "gltf" || ext == "glb").then_some(30.0);
    crate::load_motion_with(path, unit, None, fps)
}

/// Bytes of one recorded sample in a plain dump, for the ratio to raw: a u32 frame, the ids
/// and every value as f32. Unit: frame, unit id (u16), position (3), rotation (4) = 34;
/// status: frame, id, health, build, flags (u8) = 15; piece: frame, unit, piece (u16),
/// rotation as three angles and offset (6) = 32; projectile: frame, serial (u32), position
/// and velocity (6) = 32; team number: frame, team (u8), code (u16), value = 11.
pub fn raw_bytes(st: &Stats) -> u64 {
    st.unit_samples * (34 + 15)
        + st.piece_samples * 32
        + st.projectile_samples * 32
        + st.team_samples * 11
}

/// Writes to `path` through a temporary file that is renamed only when the whole track was
/// written and checked, so a failed check leaves no file.
fn write_track(
    spec: &MatchSpec,
    path: &Path,
    progress: impl FnMut(usize, usize),
) -> Result<(u64, Stats, SectionBytes)> {
    let tmp = path.with_extension("cbtrack.part");
    let file =
        std::fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    let mut out = std::io::BufWriter::new(file);
    let res = spec.write(&mut out, progress);
    let res = res.and_then(|r| {
        use std::io::Write;
        out.flush()?;
        Ok(r)
    });
    drop(out);
    match res {
        Ok(r) => {
            std::fs::rename(&tmp, path)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(r)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            bail!("no file written: {e}")
        }
    }
}

/// The crowd match a motion file makes (the same for `import` and `verify`).
pub fn crowd_spec(clip: Clip, crowd: u32, frames: u32, elmos_per_metre: f64) -> MatchSpec {
    let mut s = MatchSpec::crowd(clip, crowd, frames);
    s.elmos_per_metre = elmos_per_metre;
    s
}

/// Each section's columns compressed on their own at level 9, summed over the windows (as
/// the spec's tables do), and the sum of the columns before compression.
pub fn section_table(bytes: &[u8]) -> Result<Vec<(&'static str, u64, u64)>> {
    let t = Track::open(bytes)?;
    let names = [
        "unit entries",
        "transform keys",
        "status keys",
        "target tracks",
        "pose tracks",
        "build queues",
        "projectiles",
        "team numbers",
    ];
    let mut sums = vec![(0u64, 0u64); names.len()];
    for k in 0..t.num_windows() {
        let w = t.window(k)?.decode()?;
        let sets = w.to_column_sets()?;
        let mut add = |i: usize, put: &dyn Fn(&mut ChunkBuilder)| -> Result<()> {
            let mut b = ChunkBuilder::new();
            put(&mut b);
            if b.is_empty() {
                return Ok(());
            }
            let body = cbtrack::build_chunk(b)?;
            sums[i].0 += body.len() as u64;
            sums[i].1 += deflate(&body, 9).len() as u64;
            Ok(())
        };
        add(0, &|b| sets.0.put(b).expect("fresh builder"))?;
        add(1, &|b| sets.1.put(b).expect("fresh builder"))?;
        add(2, &|b| sets.2.put(b).expect("fresh builder"))?;
        add(3, &|b| sets.3.put(b).expect("fresh builder"))?;
        add(4, &|b| sets.4.put(b).expect("fresh builder"))?;
        add(5, &|b| sets.5.put(b).expect("fresh builder"))?;
        add(6, &|b| sets.6.put(b).expect("fresh builder"))?;
        add(7, &|b| sets.7.put(b).expect("fresh builder"))?;
    }
    Ok(names
        .iter()
        .zip(sums)
        .map(|(n, (a, b))| (*n, a, b))
        .collect())
}

/// Prints the report of a written track.
pub fn report(len: u64, st: &Stats, sb: &SectionBytes) {
    let raw = raw_bytes(st);
    println!("| curve | samples | keys kept | keys written |");
    println!("|---|---|---|---|");
    println!(
        "| unit transform | {} | {} | {} |",
        st.unit_samples, st.kept_transform, st.transform_keys
    );
    println!(
        "| unit status | {} | {} | {} |",
        st.unit_samples, st.kept_status, st.status_keys
    );
    println!(
        "| piece pose | {} | {} | {} |",
        st.piece_samples, st.kept_pose, st.pose_keys
    );
    println!(
        "| projectile | {} | {} | {} |",
        st.projectile_samples, st.kept_projectile, st.projectile_keys
    );
    println!(
        "| team number | {} | {} | {} |",
        st.team_samples, st.kept_team, st.team_keys
    );
    println!();
    println!("| what | count |");
    println!("|---|---|");
    println!("| windows | {} |", st.windows);
    println!(
        "| unit samples / transform keys written | {} / {} |",
        st.unit_samples, st.transform_keys
    );
    println!("| unit entries | {} |", st.unit_entries);
    println!("| status keys written | {} |", st.status_keys);
    println!("| target keys written | {} |", st.target_keys);
    println!(
        "| piece samples / pose tracks / pose keys written | {} / {} / {} |",
        st.piece_samples, st.pose_tracks, st.pose_keys
    );
    println!("| build queue keys written | {} |", st.queue_keys);
    println!(
        "| projectile samples / entries / keys written | {} / {} / {} |",
        st.projectile_samples, st.projectile_entries, st.projectile_keys
    );
    println!(
        "| team number samples / keys written | {} / {} |",
        st.team_samples, st.team_keys
    );
    println!("| terrain rows written | {} |", st.terrain_rows);
    println!();
    println!("| section | bytes |");
    println!("|---|---|");
    println!("| header and index | {} |", sb.header_and_index);
    println!("| info chunk | {} |", sb.info);
    println!("| features chunk | {} |", sb.features);
    println!(
        "| main chunks ({} before compression) | {} |",
        sb.main_raw, sb.main
    );
    println!("| terrain chunks | {} |", sb.terrain);
    println!("| largest main chunk, decompressed | {} |", sb.largest_main);
    println!("| track (padding to 64-byte blocks included) | {len} |");
    println!("| raw samples (see raw_bytes) | {raw} |");
    println!("| raw / track | {:.2} |", raw as f64 / len.max(1) as f64);
    println!();
    println!(
        "furthest samples: unit {:.8} elmo, piece {:.8} elmo, projectile {:.8} elmo, health/build {:.3} steps, team number {:.4} of its allowance; projectile velocity {:.4} elmo/frame (no tolerance)",
        st.worst_unit, st.worst_piece, st.worst_projectile, st.worst_status_steps, st.worst_team_ratio, st.worst_projectile_velocity
    );
}

/// `import --format cbtrack`.
pub fn import(
    clip: Clip,
    output: &Path,
    crowd: u32,
    frames: u32,
    elmos_per_metre: f64,
) -> Result<()> {
    let spec = crowd_spec(clip, crowd, frames, elmos_per_metre);
    let t0 = Instant::now();
    let bar = crate::progress::Progress::bar(0, "import: scan, thin, check and write", "windows");
    let (len, st, sb) = write_track(&spec, output, |done, n| bar.set(done as u64, n as u64))?;
    drop(bar);
    let secs = t0.elapsed().as_secs_f64();
    println!(
        "wrote {} ({len} bytes) in {secs:.2} s: {crowd} characters, {} pieces each, {frames} frames, tolerance {} elmo",
        output.display(),
        spec.pieces().len(),
        spec.tolerance
    );
    report(len, &st, &sb);
    let bytes = std::fs::read(output)?;
    let bar = crate::progress::Progress::spinner("import: compressing each section on its own");
    let table = section_table(&bytes);
    drop(bar);
    println!();
    println!("| section, compressed on its own per window | before | after |");
    println!("|---|---|---|");
    for (n, a, b) in table? {
        println!("| {n} | {a} | {b} |");
    }
    Ok(())
}

/// `sample FILE --at FRAME`: the full state as JSON.
///
/// Written as it is read, one unit, projectile or team number track at a time
/// ([`cbtrack::write_sample`]): the same text as the [`cbtrack::Player`]'s state of the frame.
pub fn sample(bytes: &[u8], at: f64) -> Result<()> {
    let h = Track::open(bytes)?.header();
    let (first, last) = (h.first_frame, h.last_frame);
    if !(f64::from(first)..=f64::from(last)).contains(&at) {
        bail!("--at {at} is outside the track, whose frames run from {first} to {last}");
    }
    crate::emit_stdout(|out| cbtrack::write_sample(bytes, at, out))
}

/// `verify FILE --against MOTION`: every recorded sample against the file. The crowd size and
/// the frames are the file header's (`num_units`, `last_frame - first_frame + 1`) unless given;
/// a given value that differs from the header is refused, naming both.
pub fn verify(
    bytes: &[u8],
    clip: Clip,
    crowd: Option<u32>,
    frames: Option<u32>,
    elmos_per_metre: f64,
) -> Result<()> {
    let h = Track::open(bytes)?.header();
    let file_frames = (h.last_frame - h.first_frame).saturating_add(1);
    if h.first_frame != 0 {
        bail!(
            "the track starts at frame {}; tracks imported from motion start at frame 0",
            h.first_frame
        );
    }
    let crowd = match crowd {
        Some(c) if c != h.num_units => bail!(
            "--crowd {c} differs from the file, whose header holds {} units (leave --crowd out to take the file's)",
            h.num_units
        ),
        _ => h.num_units,
    };
    let frames = match frames {
        Some(f) if f != file_frames => bail!(
            "--frames {f} differs from the file, whose header holds {file_frames} frames (leave --frames out to take the file's)"
        ),
        _ => file_frames,
    };
    let mut spec = crowd_spec(clip, crowd, frames, elmos_per_metre);
    spec.window_length = h.window_length;
    println!(
        "match from the header: crowd of {crowd}, {frames} frames, windows of {}",
        h.window_length
    );
    let bar = crate::progress::Progress::bar(0, "verify", "windows");
    let st = spec.verify_with_progress(bytes, |done, n| bar.set(done as u64, n as u64));
    drop(bar);
    let st = st?;
    let tol = h.tolerance_elmos as f64;
    println!(
        "samples measured: {} unit, {} piece, {} projectile",
        st.unit_samples, st.piece_samples, st.projectile_samples
    );
    println!(
        "furthest unit sample from the track: {:.8} elmo",
        st.worst_unit
    );
    println!("furthest piece sample: {:.8} elmo", st.worst_piece);
    println!(
        "furthest projectile sample: {:.8} elmo",
        st.worst_projectile
    );
    println!(
        "worst projectile velocity: {:.8} elmo per frame (no tolerance)",
        st.worst_projectile_velocity
    );
    println!("tolerance: {tol} elmo");
    if st.worst_unit > tol || st.worst_piece > tol || st.worst_projectile > tol {
        let (what, worst) = [
            ("unit", st.worst_unit),
            ("piece", st.worst_piece),
            ("projectile", st.worst_projectile),
        ]
        .into_iter()
        .fold(("unit", f64::MIN), |a, b| if b.1 > a.1 { b } else { a });
        bail!(
            "the furthest recorded {what} sample is {worst:.8} elmo from the track, over the tolerance of {tol} elmo (verify needs the --elmos-per-metre and --unit-m that import was given: {elmos_per_metre} elmos per metre here)"
        );
    }
    println!("verified: every recorded sample is within the tolerance");
    Ok(())
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// `cbtrack-scale`: the synthetic match of the spec's BAR size, written window by window.
pub fn scale(output: &Path, quiet: bool) -> Result<()> {
    let spec = MatchSpec::bar_scale();
    let bar = indicatif::ProgressBar::new(0);
    if quiet {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} windows ({eta} left)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let t0 = Instant::now();
    let (len, st, sb) = write_track(&spec, output, |done, n| {
        bar.set_length(n as u64);
        bar.set_position(done as u64);
    })?;
    let secs = t0.elapsed().as_secs_f64();
    bar.finish_and_clear();
    println!(
        "scale run: {} frames, {} units, written to {} in {secs:.2} s (scan, thin, check and write), peak memory {} bytes",
        spec.frames,
        spec.units,
        output.display(),
        peak_rss().map_or("unknown".into(), |v| v.to_string())
    );
    report(len, &st, &sb);
    Ok(())
}

/// The demo row: the motion as a crowd of 4 over 600 frames (windows of 300).
pub fn demo_row(clip: &Clip) -> Result<String> {
    let mut spec = crowd_spec(clip.clone(), 4, 600, 16.0);
    spec.window_length = 300;
    let t0 = Instant::now();
    let mut cur = std::io::Cursor::new(Vec::new());
    let (len, st, _) = spec.write(&mut cur, |_, _| {})?;
    let enc = t0.elapsed().as_secs_f64();
    let bytes = cur.into_inner();
    let t1 = Instant::now();
    cbtrack::decode_all(&bytes)?;
    let dec = t1.elapsed().as_secs_f64();
    let v = spec.verify(&bytes)?;
    Ok(format!(
        "| CBTK v1 (crowd of 4, 600 frames) | {len} | {:.2} | {:.3} of raw samples | {} keys for {} samples | {:.4} elmo | piece {:.4} elmo | {:.2} ms | {:.2} ms |",
        len as f64 / spec.frames as f64,
        len as f64 / raw_bytes(&st).max(1) as f64,
        st.transform_keys + st.pose_keys + st.projectile_keys,
        st.unit_samples + st.piece_samples + st.projectile_samples,
        v.worst_unit,
        v.worst_piece,
        enc * 1e3,
        dec * 1e3
    ))
}

/// Writes `n` items of a list as lines under `indent`, at most `max` of them (all when `max`
/// is 0), then a line counting the rest.
fn bounded_list<T>(
    out: &mut dyn std::io::Write,
    indent: &str,
    items: &[T],
    max: usize,
    mut line: impl FnMut(usize, &T) -> String,
) -> std::io::Result<()> {
    let shown = if max == 0 {
        items.len()
    } else {
        max.min(items.len())
    };
    for (i, x) in items.iter().take(shown).enumerate() {
        writeln!(out, "{indent}[{i}] {}", line(i, x))?;
    }
    if items.len() > shown {
        writeln!(out, "{indent}... {} more", items.len() - shown)?;
    }
    Ok(())
}

/// A list of numbers on one line, at most `max` of them (all when 0), with a count of the rest.
fn bounded_inline<T: std::fmt::Display>(items: &[T], max: usize) -> String {
    let shown = if max == 0 {
        items.len()
    } else {
        max.min(items.len())
    };
    let mut s: Vec<String> = items.iter().take(shown).map(|v| v.to_string()).collect();
    if items.len() > shown {
        s.push(format!("... {} more", items.len() - shown));
    }
    format!("[{}]", s.join(", "))
}

/// Prints the info chunk's lists for `inspect` as [`Track::visit_info`] hands their items
/// over, each cut to its first `m` items (all when `m` is 0) with a count of the rest:
/// nothing is kept but where it is in the list being printed.
struct InfoPrinter<'o> {
    out: &'o mut dyn std::io::Write,
    m: usize,
    /// The list being printed and its length.
    list: Option<(cbtrack::InfoList, usize)>,
    /// Items of it seen so far (teams).
    item: usize,
    /// The number of piece names of the posed entry being printed.
    pieces: Option<usize>,
}

impl InfoPrinter<'_> {
    fn cut(&self, n: usize) -> usize {
        if self.m == 0 {
            n
        } else {
            n.min(self.m)
        }
    }

    /// Ends an inline list of `len` items of which the first `cut(len)` were printed.
    fn end_inline(&mut self, len: usize) -> std::io::Result<()> {
        let shown = self.cut(len);
        if len > shown {
            let sep = if shown > 0 { ", " } else { "" };
            write!(self.out, "{sep}... {} more", len - shown)?;
        }
        writeln!(self.out, "]")
    }

    fn close(&mut self) -> std::io::Result<()> {
        use cbtrack::InfoList as L;
        if let Some(n) = self.pieces.take() {
            self.end_inline(n)?;
        }
        match self.list.take() {
            Some((L::Posed | L::Teams, n)) if n > self.cut(n) => {
                writeln!(self.out, "      ... {} more", n - self.cut(n))
            }
            Some((L::Posed | L::Teams, _)) | None => Ok(()),
            Some((_, n)) => self.end_inline(n),
        }
    }

    fn part(&mut self, part: cbtrack::InfoPart<'_>) -> std::io::Result<()> {
        use cbtrack::{InfoList as L, InfoPart as P};
        match part {
            P::Start(l, n) => {
                self.close()?;
                match l {
                    L::Texts => write!(self.out, "    texts = [")?,
                    L::UnitDefs => write!(self.out, "    unit_defs ({n}) = [")?,
                    L::WeaponDefs => write!(self.out, "    weapon_defs ({n}) = [")?,
                    L::FeatureDefs => write!(self.out, "    feature_defs ({n}) = [")?,
                    L::Posed => writeln!(self.out, "    posed ({n}):")?,
                    L::Teams => writeln!(self.out, "    teams ({n}):")?,
                    L::TeamParams => write!(self.out, "    team_params = [")?,
                    L::GameParams => write!(self.out, "    game_params = [")?,
                    L::PieceNames => {}
                }
                self.list = Some((l, n));
                self.item = 0;
            }
            P::Name(L::PieceNames, i, s) => {
                if let Some(n) = self.pieces {
                    if i < self.cut(n) {
                        let sep = if i > 0 { ", " } else { "" };
                        write!(self.out, "{sep}{s:?}")?;
                    }
                }
            }
            P::Name(_, i, s) => {
                let n = self.list.map_or(0, |l| l.1);
                if i < self.cut(n) {
                    let sep = if i > 0 { ", " } else { "" };
                    write!(self.out, "{sep}{s:?}")?;
                }
            }
            P::Posed { entry, def, pieces } => {
                if let Some(n) = self.pieces.take() {
                    self.end_inline(n)?;
                }
                let n = self.list.map_or(0, |l| l.1);
                if entry < self.cut(n) {
                    write!(self.out, "      [{entry}] unit def {def}: pieces [")?;
                    self.pieces = Some(pieces);
                }
            }
            P::Team(tm) => {
                let n = self.list.map_or(0, |l| l.1);
                if self.item < self.cut(n) {
                    writeln!(
                        self.out,
                        "      [{}] id {} ally {} flags {} colour {:?} side {:?} leader {:?}",
                        self.item, tm.id, tm.ally, tm.flags, tm.colour, tm.side, tm.leader
                    )?;
                }
                self.item += 1;
            }
            P::MapSize(v) => {
                self.close()?;
                writeln!(
                    self.out,
                    "    map_size (elmos) = {}",
                    bounded_inline(v, self.m)
                )?;
            }
            P::Footprints { x, z } => {
                writeln!(
                    self.out,
                    "    footprint_x (elmos) = {}",
                    bounded_inline(x, self.m)
                )?;
                writeln!(
                    self.out,
                    "    footprint_z (elmos) = {}",
                    bounded_inline(z, self.m)
                )?;
            }
        }
        Ok(())
    }
}

/// The info chunk's lists for `inspect` ([`InfoPrinter`]); the chunk must have been checked.
fn info_content(out: &mut dyn std::io::Write, t: &Track<'_>, m: usize) -> std::io::Result<()> {
    let mut p = InfoPrinter {
        out,
        m,
        list: None,
        item: 0,
        pieces: None,
    };
    let mut io = Ok(());
    t.visit_info(|part| {
        if io.is_ok() {
            io = p.part(part);
        }
    })
    .map_err(|e| std::io::Error::other(e.to_string()))?;
    io?;
    p.close()
}

/// The content part of `inspect` for a CBTK file: each chunk inflated and read as the format
/// module reads it (`Track::visit_info`, `Track::visit_features`, `Track::visit_window`,
/// `Track::terrain`), each item printed as it is read, with
/// every list and every byte run bounded by `max_items` (0 shows everything) and a count of
/// what was left out. Positions are printed in elmos (position steps times the header's step),
/// frames as absolute simulation frames, rotations as the stored smallest-three codes.
/// A chunk that does not read prints its error in its place, and the others still print.
///
/// Errors: only those of writing to `out`; the header and index must read (the caller checks
/// the file first).
pub fn inspect_content(
    out: &mut dyn std::io::Write,
    bytes: &[u8],
    max_items: usize,
) -> std::io::Result<()> {
    let Ok(t) = Track::open(bytes) else {
        return Ok(());
    };
    let h = t.header();
    let step = h.pos_step();
    let el = |p: &[i32; 3]| {
        format!(
            "({}, {}, {})",
            p[0] as f64 * step,
            p[1] as f64 * step,
            p[2] as f64 * step
        )
    };
    let m = max_items;
    writeln!(
        out,
        "content: chunks inflated and read as the format reads them (positions in elmos, step 1/{} elmo; frames absolute)",
        1u64 << h.position_shift.min(62)
    )?;
    let chunk_line = |what: &str, block: u32, len: u32, inflated: Option<usize>| {
        let start = block as u64 * 64;
        format!(
            "{what}: block {block} (bytes {start}..{}), {len} bytes{}",
            start + len as u64,
            inflated
                .map(|n| format!(", {n} bytes inflated"))
                .unwrap_or_default()
        )
    };
    let info_len = t.info_bytes().ok().map(|b| b.len());
    writeln!(
        out,
        "  {}",
        chunk_line("info chunk", t.raw.info_block, t.raw.info_len, info_len)
    )?;
    // Each item is printed as it is read (its list's length comes first), and nothing past
    // what is shown is kept.
    if let Err(e) = t.check_info() {
        writeln!(out, "    error: {e}")?;
    } else {
        info_content(out, &t, m)?;
    }
    writeln!(
        out,
        "  {}",
        chunk_line(
            "features chunk",
            t.raw.features_block,
            t.raw.features_len,
            None
        )
    )?;
    match t.visit_features(|_, _| {}) {
        Ok(count) => {
            writeln!(out, "    features ({count}):")?;
            let shown = if m == 0 { count } else { m.min(count) };
            let mut io = Ok(());
            let _ = t.visit_features(|i, x| {
                if i < shown && io.is_ok() {
                    io = writeln!(
                        out,
                        "      [{i}] feature_id {} def {} team {} flags {} frames {}..={} pos {} rot dropped {} codes {:?}",
                        x.feature_id, x.def, x.team, x.flags, x.first_frame, x.last_frame,
                        el(&x.pos), x.rot_dropped, x.rot
                    );
                }
            });
            io?;
            if count > shown {
                writeln!(out, "      ... {} more", count - shown)?;
            }
        }
        Err(e) => writeln!(out, "    error: {e}")?,
    }
    writeln!(out, "  windows ({}):", t.num_windows())?;
    let shown = if m == 0 {
        t.num_windows()
    } else {
        m.min(t.num_windows())
    };
    for k in 0..shown {
        let e = &t.raw.index[k];
        let (start, end) = h.window_span(k);
        let inflated = t.main_bytes(k).ok();
        writeln!(
            out,
            "    [{k}] frames {start}..={end}, {}",
            chunk_line(
                "main chunk",
                e.main_block,
                e.main_len,
                inflated.as_ref().map(|b| b.len())
            )
        )?;
        if let Some(b) = &inflated {
            if let Ok(c) = cbtrack::parse_chunk(b) {
                let names = column_names();
                writeln!(out, "      columns ({}):", c.entries().len())?;
                bounded_list(out, "        ", c.entries(), m, |_, d| {
                    let name = names
                        .iter()
                        .find(|(id, _)| *id == d.id)
                        .map(|(_, n)| n.as_str())
                        .unwrap_or("(unknown)");
                    format!(
                        "id {} {name}: type {} at {}, {} values",
                        d.id, d.code, d.offset, d.count
                    )
                })?;
            }
        }
        drop(inflated);
        // Checked first (nothing kept), so a window that does not read prints its error
        // alone; then read again one entry at a time, each printed and dropped.
        match t.check_window(k) {
            Ok(()) => {
                let mut p = WindowPrinter {
                    out: &mut *out,
                    m,
                    start,
                    el: &el,
                    seen: [0; 3],
                    counts: [0; 3],
                    phase: 0,
                    res: Ok(()),
                };
                let visited = t.visit_window(k, |part| p.part(part));
                p.advance(3);
                p.res?;
                if let Err(e) = visited {
                    writeln!(out, "      error: {e}")?;
                }
            }
            Err(e) => writeln!(out, "      error: {e}")?,
        }
        if e.terrain_len > 0 {
            writeln!(
                out,
                "      {}",
                chunk_line("terrain chunk", e.terrain_block, e.terrain_len, None)
            )?;
        }
        // Counted (and checked) first, then each row printed as it is read.
        match t.visit_terrain(k, |_| {}) {
            Ok(0) => {}
            Ok(n) => {
                writeln!(out, "        rows ({n}):")?;
                let rows = if m == 0 { n } else { m.min(n) };
                let mut io = Ok(());
                let mut i = 0;
                let _ = t.visit_terrain(k, |r| {
                    if i < rows && io.is_ok() {
                        io = writeln!(
                            out,
                            "          [{i}] frame {} at ({}, {}) height {} -> {} elmos",
                            r.frame,
                            r.x,
                            r.z,
                            r.before as f64 * step,
                            r.after as f64 * step
                        );
                    }
                    i += 1;
                });
                io?;
                if n > rows {
                    writeln!(out, "          ... {} more", n - rows)?;
                }
            }
            Err(e) => writeln!(out, "        error: {e}")?,
        }
    }
    if t.num_windows() > shown {
        writeln!(out, "    ... {} more", t.num_windows() - shown)?;
    }
    Ok(())
}

/// Prints a window's entries as [`Track::visit_window`] hands them over, in the layout of a
/// listed window: the units with their keys, then the projectiles, then the team number
/// tracks, each list bounded by `m` (0 shows everything) with a count of the rest.
struct WindowPrinter<'o, 'e> {
    out: &'o mut dyn std::io::Write,
    m: usize,
    start: u32,
    el: &'e dyn Fn(&[i32; 3]) -> String,
    /// Entries seen so far: units, projectiles, team number tracks.
    seen: [usize; 3],
    /// Entries the window holds, in the same order.
    counts: [usize; 3],
    /// The list being printed (0 units, 1 projectiles, 2 team numbers, 3 done).
    phase: usize,
    /// The first write error; nothing more is written after it.
    res: std::io::Result<()>,
}

impl WindowPrinter<'_, '_> {
    fn shown(&self, list: usize) -> usize {
        if self.m == 0 {
            self.counts[list]
        } else {
            self.m.min(self.counts[list])
        }
    }

    /// Ends the lists before `to` (their counts of what was not shown) and starts the
    /// next ones (their headings).
    fn advance(&mut self, to: usize) {
        while self.phase < to && self.res.is_ok() {
            let list = self.phase;
            let rest = self.counts[list] - self.shown(list);
            if rest > 0 {
                self.res = writeln!(self.out, "        ... {rest} more");
            }
            self.phase += 1;
            if self.phase < 3 && self.res.is_ok() {
                self.res = self.heading(self.phase);
            }
        }
    }

    fn heading(&mut self, list: usize) -> std::io::Result<()> {
        let n = self.counts[list];
        match list {
            0 => writeln!(self.out, "      units ({n}):"),
            1 => writeln!(self.out, "      projectiles ({n}):"),
            _ => writeln!(self.out, "      team numbers ({n}):"),
        }
    }

    fn part(&mut self, part: cbtrack::WindowPart<'_>) {
        use cbtrack::WindowPart as P;
        if self.res.is_err() {
            return;
        }
        let list = match part {
            P::Counts {
                units,
                projectiles,
                teams,
            } => {
                self.counts = [units, projectiles, teams];
                self.res = self.heading(0);
                return;
            }
            P::Unit(_) => 0,
            P::Projectile(_) => 1,
            P::Team(_) => 2,
        };
        self.advance(list);
        let i = self.seen[list];
        self.seen[list] += 1;
        if i >= self.shown(list) || self.res.is_err() {
            return;
        }
        self.res = match part {
            P::Unit(u) => self.unit(i, u),
            P::Projectile(p) => {
                let line = self.projectile(p);
                writeln!(self.out, "        [{i}] {line}")
            }
            P::Team(n) => {
                let line = self.team(n);
                writeln!(self.out, "        [{i}] {line}")
            }
            P::Counts { .. } => Ok(()),
        };
    }

    fn unit(&mut self, i: usize, u: &cbtrack::Unit) -> std::io::Result<()> {
        let (out, m, start, el) = (&mut *self.out, self.m, self.start, self.el);
        writeln!(
            out,
            "        [{i}] unit_id {} serial {} def {} team {} flags {} frames {}..={}: {} transform, {} status keys, {} target, {} pose tracks, {} queue keys",
            u.unit_id, u.serial, u.def, u.team, u.flags,
            start + u.first as u32, start + u.last as u32,
            u.transforms.len(), u.status.len(), u.targets.len(), u.poses.len(), u.queue.len()
        )?;
        writeln!(out, "          transform keys:")?;
        bounded_list(out, "            ", &u.transforms, m, |_, x| {
            format!(
                "frame {} pos {} rot dropped {} codes {:?}",
                start + x.offset,
                el(&x.pos),
                x.rot_dropped,
                x.rot
            )
        })?;
        writeln!(out, "          status keys:")?;
        bounded_list(out, "            ", &u.status, m, |_, x| {
            format!(
                "frame {} health {}/65535 build {}/65535 flags {}",
                start + x.offset,
                x.health,
                x.build,
                x.flags
            )
        })?;
        if !u.targets.is_empty() {
            writeln!(out, "          target tracks:")?;
            bounded_list(out, "            ", &u.targets, m, |_, g| {
                let keys: Vec<String> = g
                    .keys
                    .iter()
                    .map(|x| {
                        format!(
                            "frame {} kind {} ref {}{}",
                            start + x.offset,
                            x.kind,
                            x.reference,
                            x.pos.map(|p| format!(" at {}", el(&p))).unwrap_or_default()
                        )
                    })
                    .collect();
                format!("weapon {}: keys {}", g.weapon, bounded_inline(&keys, m))
            })?;
        }
        if !u.poses.is_empty() {
            writeln!(out, "          pose tracks:")?;
            bounded_list(out, "            ", &u.poses, m, |_, p| {
                let keys: Vec<String> = p
                    .keys
                    .iter()
                    .map(|x| {
                        format!(
                            "frame {} angles (1/65536 turn) {:?} offsets {}",
                            start + x.offset,
                            x.angles,
                            el(&x.offsets)
                        )
                    })
                    .collect();
                format!(
                    "piece {} ({} keys): {}",
                    p.piece,
                    p.keys.len(),
                    bounded_inline(&keys, m)
                )
            })?;
        }
        if !u.queue.is_empty() {
            writeln!(out, "          build queue keys:")?;
            bounded_list(out, "            ", &u.queue, m, |_, q| {
                let items: Vec<String> = q
                    .items
                    .iter()
                    .map(|x| format!("def {} facing {}", x.def, x.facing))
                    .collect();
                format!(
                    "frame {} items {}",
                    start + q.offset,
                    bounded_inline(&items, m)
                )
            })?;
        }
        Ok(())
    }

    fn projectile(&self, p: &cbtrack::Projectile) -> String {
        let (m, start, el) = (self.m, self.start, self.el);
        let keys: Vec<String> = p
            .keys
            .iter()
            .map(|x| format!("frame {} pos {}", start + x.offset, el(&x.pos)))
            .collect();
        format!(
            "serial {} weapon {} team {} owner {} frames {}..={}: keys {}",
            p.serial,
            p.weapon,
            p.team,
            p.owner,
            start + p.first as u32,
            start + p.last as u32,
            bounded_inline(&keys, m)
        )
    }

    fn team(&self, n: &cbtrack::TeamTrack) -> String {
        let (m, start) = (self.m, self.start);
        let keys: Vec<String> = n
            .keys
            .iter()
            .map(|(f, v)| format!("frame {} = {v}", start + f))
            .collect();
        format!(
            "team {} code {}: {}",
            n.team,
            n.code,
            bounded_inline(&keys, m)
        )
    }
}

/// Column id and `<set>.<column>` name of every column the schema's column sets know.
fn column_names() -> Vec<(u16, String)> {
    use statepack::generated::cbtrack_v1 as raw;
    let sets: [(&str, &[(u16, u8, &str)]); 11] = [
        ("info", raw::InfoColumns::COLUMNS),
        ("features", raw::FeaturesColumns::COLUMNS),
        ("units", raw::UnitsColumns::COLUMNS),
        ("transform_keys", raw::TransformKeysColumns::COLUMNS),
        ("status_keys", raw::StatusKeysColumns::COLUMNS),
        ("target_tracks", raw::TargetTracksColumns::COLUMNS),
        ("pose_tracks", raw::PoseTracksColumns::COLUMNS),
        ("build_queue", raw::BuildQueueColumns::COLUMNS),
        ("projectiles", raw::ProjectilesColumns::COLUMNS),
        ("team_numbers", raw::TeamNumbersColumns::COLUMNS),
        ("terrain_rows", raw::TerrainRowsColumns::COLUMNS),
    ];
    sets.iter()
        .flat_map(|(s, cols)| cols.iter().map(move |(id, _, n)| (*id, format!("{s}.{n}"))))
        .collect()
}
