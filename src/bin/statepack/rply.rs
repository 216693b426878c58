//! The CLI's RPLY v3 commands: import, verify, sample, the demo row and the crowd
//! measurement (`rply-crowd`).

use anyhow::{bail, Context, Result};
use statepack::codecs::motion::Clip;
use statepack::codecs::rply_xform::Thresholds;
use statepack::formats::rply::{self, Player, RplyV3};
use statepack::sim::rply_crowd::{
    crowd_errors, record_crowd, verify_against_clip, Crowd, CrowdOptions,
};
use std::path::Path;
use std::time::Instant;

/// The spec's raw budget: 20 players × 15 Hz × 22 bytes per full transform.
pub const SPEC_RAW_BUDGET_BYTES_PER_S: f64 = 20.0 * 15.0 * 22.0;

/// `import --format rply`: one walker playing the clip once at 15 Hz, with its rig snapshot.
pub fn import(clip: &Clip, output: &Path, studs_per_metre: f64) -> Result<()> {
    // One frame time per frame (the clip's span plus its last frame), as 15 Hz ticks.
    let frames_s = clip.frame_count() as f64 * clip.frame_time_s;
    let ticks = (frames_s * 15.0).floor().max(1.0) as u32;
    let opts = CrowdOptions {
        characters: 1,
        ticks,
        studs_per_metre,
        ..CrowdOptions::default()
    };
    let crowd = record_crowd(clip, &opts)?;
    std::fs::write(output, &crowd.bytes)
        .with_context(|| format!("cannot write {}", output.display()))?;
    let s = crowd.stats;
    let e = crowd_errors(&crowd)?;
    println!(
        "wrote {} ({} bytes): 1 entity, {} ticks at 15 Hz, {} full XFORM, {} XFORM_D, {} skipped; worst {:.3} studs, {:.3} deg",
        output.display(),
        crowd.bytes.len(),
        ticks,
        s.xform_full,
        s.xform_delta,
        s.skipped,
        e.max_pos_error_studs,
        e.max_rot_error_deg
    );
    Ok(())
}

/// `verify` for RPLY: every rule of the player (`rply::verify`), raw decode then encode
/// byte-identical, and seeking to every keyframe tick (and the ticks either side) equal to
/// playing there.
pub fn verify(bytes: &[u8], name: &str) -> Result<()> {
    let mut checked_player =
        Player::open(bytes).with_context(|| format!("{name} is not a valid RPLY v3 file"))?;
    let ops = checked_player
        .verify_all()
        .with_context(|| format!("{name} is not a valid RPLY v3 file"))?;
    let holds = checked_player.keyframe_holds();
    let raw = RplyV3::decode(bytes)?;
    if raw.encode()? != bytes {
        bail!("{name}: raw decode then encode does not give the same bytes");
    }
    let mut play = Player::open(bytes)?;
    let h = *play.header();
    let mut targets: Vec<u32> = play
        .keyframes()
        .iter()
        .flat_map(|k| {
            [
                k.tick.saturating_sub(1),
                k.tick,
                k.tick.saturating_add(1).min(h.tick_count),
            ]
        })
        .chain([0, h.tick_count])
        .collect();
    targets.sort_unstable();
    targets.dedup();
    let mut seek = Player::open(bytes)?;
    let mut checked = 0;
    for &t in &targets {
        play.seek(t)?; // forward only: plays
        for back in [true, false] {
            if back {
                seek.seek(h.tick_count)?;
            }
            seek.seek(t)?;
            if seek.state() != play.state() {
                bail!(
                    "{name}: the state reached by seeking to tick {t} differs from playing to it"
                );
            }
            checked += 1;
        }
    }
    println!(
        "{name}: valid RPLY v3: {} ticks at {} Hz, {} strings, {} keyframes, {} ops in {} bytes; raw round trip identical; {} seeks equal to playing",
        h.tick_count,
        h.tick_rate,
        h.string_count,
        h.keyframe_count,
        ops,
        bytes.len(),
        checked
    );
    if holds > 0 {
        println!(
            "{name}: {holds} time(s) a keyframe has no full XFORM for a live entity with a position (the spec asks for one; the reference recorder omits models whose parts are gone): the entity holds its last transform, when seeking as when playing"
        );
    }
    Ok(())
}

/// `verify FILE.rply --against MOTION`: [`verify`], then every tick of every character
/// against the motion it was recorded from (`rply_crowd::verify_against_clip`: characters,
/// ticks and tick rate from the file), with the worst errors per character; exits non-zero
/// when an error is over its bound.
pub fn verify_against(bytes: &[u8], name: &str, clip: &Clip, studs_per_metre: f64) -> Result<()> {
    verify(bytes, name)?;
    let c = verify_against_clip(bytes, clip, studs_per_metre)
        .with_context(|| format!("{name} cannot be checked against the motion"))?;
    println!(
        "against the motion at {studs_per_metre} studs per metre: {} character(s), ticks 1..={}, root rotation {} (read from the file)",
        c.characters,
        c.ticks,
        if c.upright_root { "upright (heading only)" } else { "the clip root's" }
    );
    println!(
        "{:<12} {:>16} {:>16}",
        "character", "max pos (studs)", "max rot (deg)"
    );
    for (i, (p, r)) in c
        .max_pos_error_studs
        .iter()
        .zip(&c.max_rot_error_deg)
        .enumerate()
    {
        println!("{:<12} {p:>16.4} {r:>16.4}", format!("char:{}", 1000 + i));
    }
    let worst_p = c.max_pos_error_studs.iter().copied().fold(0.0, f64::max);
    let worst_r = c.max_rot_error_deg.iter().copied().fold(0.0, f64::max);
    println!(
        "worst: {worst_p:.4} studs, {worst_r:.4} degrees (bounds {:.4} studs, {:.4} degrees, for the default thresholds 0.05 studs and 0.5 degrees)",
        c.pos_bound_studs, c.rot_bound_deg
    );
    if c.over_bound > 0 {
        bail!(
            "{name}: {} entity-tick(s) are further from the motion than the bounds (was it recorded with other thresholds, or another --studs-per-metre?)",
            c.over_bound
        );
    }
    Ok(())
}

/// `sample FILE --at TICK`: the player's state at a tick as JSON.
pub fn sample(bytes: &[u8], at: f64) -> Result<()> {
    if at.fract() != 0.0 {
        crate::args::argument_error(format!(
            "RPLY samples are taken at a tick: --at must be a whole number, not {at}"
        ));
    }
    let mut p = Player::open(bytes)?;
    let last = p.header().tick_count;
    if !(0.0..=f64::from(last)).contains(&at) {
        bail!("--at {at} is outside the replay, whose ticks run from 0 to {last}");
    }
    p.seek(at as u32)?;
    println!("{}", serde_json::to_string_pretty(&p.state().to_json())?);
    Ok(())
}

/// One row of `statepack demo` (returned, for the demo to print): the clip as a crowd of 20
/// walkers for 60 s at 15 Hz.
pub fn demo_row(clip: &Clip, studs_per_metre: f64) -> Result<String> {
    let opts = CrowdOptions {
        ticks: 900,
        studs_per_metre,
        ..CrowdOptions::default()
    };
    let t0 = Instant::now();
    let crowd = record_crowd(clip, &opts)?;
    let enc_s = t0.elapsed().as_secs_f64();
    let all_full = record_crowd(clip, &all_full_opts(opts))?;
    let t0 = Instant::now();
    let errs = crowd_errors(&crowd)?;
    let dec_s = t0.elapsed().as_secs_f64();
    rply::verify(&crowd.bytes)?;
    let s = crowd.stats;
    let n = s.transforms_in.max(1) as f64;
    Ok(format!(
        "| RPLY v3 (20 walkers, 60 s, 15 Hz) | {} | {:.2} | {:.3} ({} B) | {:.1}% | {:.2e} | {:.2e} | {:.2} ms | {:.2} ms |",
        crowd.bytes.len(),
        crowd.bytes.len() as f64 / n,
        crowd.bytes.len() as f64 / all_full.bytes.len() as f64,
        all_full.bytes.len(),
        100.0 * s.xform_delta as f64 / n,
        errs.max_pos_error_studs,
        errs.max_rot_error_deg,
        enc_s * 1e3,
        dec_s * 1e3
    ))
}

fn all_full_opts(opts: CrowdOptions) -> CrowdOptions {
    CrowdOptions {
        keyframe_every: 1,
        thresholds: Thresholds {
            pos_threshold_studs: 0.0,
            rot_threshold_rad: 0.0,
        },
        ..opts
    }
}

fn rate(c: &Crowd, opts: &CrowdOptions) -> f64 {
    c.bytes.len() as f64 / (f64::from(opts.ticks) / f64::from(opts.tick_rate))
}

/// `rply-crowd`: the real-input measurement (docs/formats/rply.md).
pub fn crowd_report(
    clip: &Clip,
    source: &str,
    opts: CrowdOptions,
    seeks: usize,
    out: Option<&Path>,
) -> Result<()> {
    println!(
        "input: {source}: {} joints, {} frames, {:.2} s",
        clip.skeleton.len(),
        clip.frame_count(),
        clip.duration_s()
    );
    println!(
        "crowd: {} characters x {} ticks at {} Hz ({:.0} s), {} studs apart, keyframe every {} ticks, root rotation: {}",
        opts.characters,
        opts.ticks,
        opts.tick_rate,
        f64::from(opts.ticks) / f64::from(opts.tick_rate),
        opts.spacing_studs,
        opts.keyframe_every,
        if opts.upright_root { "upright (heading only)" } else { "the clip root's full rotation" }
    );
    let t0 = Instant::now();
    let crowd = record_crowd(clip, &opts)?;
    let rec_s = t0.elapsed().as_secs_f64();
    if let Some(o) = out {
        std::fs::write(o, &crowd.bytes).with_context(|| format!("cannot write {}", o.display()))?;
        println!("wrote {}", o.display());
    }
    let raw = record_crowd(clip, &all_full_opts(opts))?;
    let fb = record_crowd(
        clip,
        &CrowdOptions {
            thresholds: Thresholds {
                pos_threshold_studs: 1.0 / 32.0,
                rot_threshold_rad: 1.0 / 64.0,
            },
            ..opts
        },
    )?;
    let ours = rate(&crowd, &opts);
    let raw_rate = rate(&raw, &opts);
    let snap_bytes: usize = RplyV3::decode(&crowd.bytes)?
        .ops
        .ops
        .iter()
        .filter_map(|o| match &o.body {
            rply::OpBody::OpSnapshot(s) => Some(7 + s.snapshot.encoded_len()),
            _ => None,
        })
        .sum();
    let s = crowd.stats;
    println!();
    println!("| stream | bytes | bytes/s | vs spec raw budget 6 600 B/s | cut vs measured raw |");
    println!("|---|---|---|---|---|");
    println!(
        "| every transform a full XFORM (thresholds 0, keyframe every tick) | {} | {:.0} | {:.3} | 1.00x |",
        raw.bytes.len(),
        raw_rate,
        raw_rate / SPEC_RAW_BUDGET_BYTES_PER_S
    );
    println!(
        "| reference thresholds (1/32 stud, 1/64 rad) | {} | {:.0} | {:.3} | {:.2}x |",
        fb.bytes.len(),
        rate(&fb, &opts),
        rate(&fb, &opts) / SPEC_RAW_BUDGET_BYTES_PER_S,
        raw_rate / rate(&fb, &opts)
    );
    println!(
        "| default thresholds ({} studs, {:.2} deg) | {} | {:.0} | {:.3} | {:.2}x |",
        opts.thresholds.pos_threshold_studs,
        opts.thresholds.rot_threshold_rad.to_degrees(),
        crowd.bytes.len(),
        ours,
        ours / SPEC_RAW_BUDGET_BYTES_PER_S,
        raw_rate / ours
    );
    println!();
    println!(
        "transforms: {} in, {} full XFORM ({} for keyframes), {} XFORM_D, {} skipped under the thresholds; {} tick markers; snapshots {} bytes ({} per character)",
        s.transforms_in,
        s.xform_full,
        s.xform_keyframe,
        s.xform_delta,
        s.skipped,
        s.markers,
        snap_bytes,
        snap_bytes / opts.characters.max(1)
    );
    let t0 = Instant::now();
    let errs = crowd_errors(&crowd)?;
    let play_s = t0.elapsed().as_secs_f64();
    println!(
        "worst error against the source motion over every tick and character: position {:.4} studs, rotation {:.4} deg",
        errs.max_pos_error_studs, errs.max_rot_error_deg
    );
    println!(
        "record: {:.1} ms ({:.0} ns per entity-tick); play every tick from the start: {:.1} ms ({} ops, {:.2} M ops/s, {:.1} MB/s)",
        rec_s * 1e3,
        rec_s * 1e9 / s.transforms_in.max(1) as f64,
        play_s * 1e3,
        errs.ops,
        errs.ops as f64 / play_s / 1e6,
        crowd.bytes.len() as f64 / play_s / 1e6
    );
    // Seek times: a fresh player per seek (open + first seek, which builds the keyframe
    // states up to the target), and one warm player seeking to random ticks.
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let ticks: Vec<u32> = (0..seeks)
        .map(|_| (next() % (u64::from(opts.ticks) + 1)) as u32)
        .collect();
    let mut cold = Vec::with_capacity(seeks);
    for &t in &ticks {
        let t0 = Instant::now();
        let mut p = Player::open(&crowd.bytes)?;
        p.seek(t)?;
        cold.push(t0.elapsed().as_secs_f64());
    }
    let mut warm_player = Player::open(&crowd.bytes)?;
    warm_player.seek(opts.ticks)?;
    let mut warm = Vec::with_capacity(seeks);
    for &t in &ticks {
        let t0 = Instant::now();
        warm_player.seek(t)?;
        warm.push(t0.elapsed().as_secs_f64());
    }
    let stat = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        (v[v.len() / 2] * 1e3, v[v.len() - 1] * 1e3)
    };
    let (cm, cx) = stat(&mut cold);
    let (wm, wx) = stat(&mut warm);
    println!(
        "seek to a random tick ({seeks} ticks): fresh player (open + seek) median {cm:.3} ms, max {cx:.3} ms; warm player median {wm:.3} ms, max {wx:.3} ms"
    );
    Ok(())
}
