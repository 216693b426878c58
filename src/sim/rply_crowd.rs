//! A crowd of walkers recorded as an RPLY v3 replay: the real-input measurement of the
//! format (`statepack rply-crowd`, `docs/formats/rply.md`).
//!
//! Each character plays a motion clip (the CMU walk in the measurement), looped, with its
//! own phase and place: character `i` starts `i × clip_length / characters` seconds into the
//! clip and `i × spacing` studs to the side. When the clip wraps, the root's horizontal
//! travel over one cycle is added so the character keeps walking instead of jumping back.
//! Every tick the root joint's world position (metres × `studs_per_metre`) and rotation go
//! to [`Recorder::transform`]; each character also gets a SNAPSHOT built from the clip's
//! skeleton (one part per bone at its rest offset from the root, one Motor6D per bone
//! joining it to its parent).

use crate::formats::rply::{
    Player, Recorder, RecorderOptions, RecorderStats, RigBuilder, RplyError,
};
use glam::{DQuat, DVec3};
use statepack_codecs::motion::{forward_kinematics, Clip};
use statepack_codecs::quant::angle_between_rad;
use statepack_codecs::rply_xform::Thresholds;

/// Settings of a crowd recording.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdOptions {
    /// Number of characters (20 in the measurement).
    pub characters: usize,
    /// Ticks to record after tick 0 (9 000 = 10 minutes at 15 Hz).
    pub ticks: u32,
    /// Ticks per second.
    pub tick_rate: u8,
    /// Distance between characters, studs.
    pub spacing_studs: f64,
    /// Studs per metre of the clip (1/0.28 by default).
    pub studs_per_metre: f64,
    /// Keyframe interval in ticks.
    pub keyframe_every: u32,
    /// Delta thresholds.
    pub thresholds: Thresholds,
    /// Record an upright root (as a character's HumanoidRootPart is): the clip root's
    /// position with a rotation about world up only, facing the direction the clip travels
    /// over one cycle. When false, the clip root's full rotation (hips, with their sway).
    pub upright_root: bool,
}

impl Default for CrowdOptions {
    fn default() -> Self {
        Self {
            characters: 20,
            ticks: 9000,
            tick_rate: 15,
            spacing_studs: 12.0,
            studs_per_metre: 1.0 / 0.28,
            keyframe_every: crate::formats::rply::DEFAULT_KEYFRAME_EVERY,
            thresholds: Thresholds::default(),
            upright_root: false,
        }
    }
}

/// A recorded crowd: the replay and the source transforms it was made from.
#[derive(Debug, Clone)]
pub struct Crowd {
    /// The replay bytes.
    pub bytes: Vec<u8>,
    /// Entity id of each character.
    pub ids: Vec<u16>,
    /// Source root transforms, `[tick][character]` (position in studs, rotation), from tick 1.
    pub source: Vec<Vec<(DVec3, DQuat)>>,
    /// What the recorder wrote.
    pub stats: RecorderStats,
}

/// The root joint's world transform per frame of a clip, for sampling it looped.
#[derive(Debug, Clone)]
pub struct RootTrack {
    frames: Vec<(DVec3, DQuat)>,
    frame_time_s: f64,
    travel: DVec3,
}

impl RootTrack {
    /// Forward kinematics of the root joint (bone 0) at every frame.
    pub fn new(clip: &Clip) -> Self {
        let frames: Vec<(DVec3, DQuat)> = (0..clip.frames.len())
            .map(|f| {
                let w = forward_kinematics(&clip.skeleton, &clip.frames[f])[0];
                (w.position, w.rotation)
            })
            .collect();
        let travel = match (frames.first(), frames.last()) {
            (Some(a), Some(b)) if frames.len() > 1 => DVec3::new(b.0.x - a.0.x, 0.0, b.0.z - a.0.z),
            _ => DVec3::ZERO,
        };
        Self {
            frames,
            frame_time_s: clip.frame_time_s,
            travel,
        }
    }

    /// The rotation about world up facing the clip's travel over one cycle (identity when
    /// it does not travel). Facing is −Z, as for a CFrame's LookVector.
    pub fn heading(&self) -> DQuat {
        let d = self.travel;
        if d.length() < 1e-9 {
            return DQuat::IDENTITY;
        }
        DQuat::from_rotation_y((-d.x).atan2(-d.z))
    }

    /// Root transform at `t_s` seconds (nearest frame; looped with the horizontal travel of
    /// each cycle carried over), position scaled by `studs_per_metre`.
    pub fn at(&self, t_s: f64, studs_per_metre: f64) -> (DVec3, DQuat) {
        let n = self.frames.len();
        if n == 0 {
            return (DVec3::ZERO, DQuat::IDENTITY);
        }
        let frame_f = (t_s / self.frame_time_s).round().max(0.0) as usize;
        let (cycle, frame) = (frame_f / n, frame_f % n);
        let (p, q) = self.frames[frame];
        ((p + self.travel * cycle as f64) * studs_per_metre, q)
    }
}

/// The rig snapshot of a clip's skeleton (rest pose) for character `name`.
pub fn rig_snapshot(
    clip: &Clip,
    name: &str,
    studs_per_metre: f64,
) -> crate::generated::rply_v3::Snapshot {
    let rest = forward_kinematics(&clip.skeleton, &clip.skeleton.rest_pose());
    let bones = clip.skeleton.bones();
    let root_pos = rest.first().map_or(DVec3::ZERO, |w| w.position);
    let mut rig = RigBuilder::new(
        name,
        bones.first().map_or("Root", |b| b.name.as_str()),
        [204, 142, 105],
    );
    let mut index = Vec::with_capacity(bones.len());
    for (b, bone) in bones.iter().enumerate() {
        let offset = (rest[b].position - root_pos) * studs_per_metre;
        let len = (bone.rest_translation.length() * studs_per_metre).clamp(0.2, 4.0);
        index.push(rig.part(
            &bone.name,
            offset,
            DQuat::IDENTITY,
            DVec3::new(0.4, len, 0.4),
            [163, 162, 165],
        ));
    }
    for (b, bone) in bones.iter().enumerate() {
        if let Some(p) = bone.parent {
            let c0 = (bone.rest_translation * studs_per_metre, DQuat::IDENTITY);
            rig.motor(
                &bone.name,
                index[p],
                index[b],
                c0,
                (DVec3::ZERO, DQuat::IDENTITY),
            );
        }
    }
    rig.build()
}

/// Where each character of a crowd is at each tick (see the module docs).
struct CrowdSource {
    track: RootTrack,
    heading: DQuat,
    clip_s: f64,
    opts: CrowdOptions,
}

impl CrowdSource {
    fn new(clip: &Clip, opts: &CrowdOptions) -> Self {
        let track = RootTrack::new(clip);
        Self {
            heading: track.heading(),
            track,
            clip_s: clip.frames.len() as f64 * clip.frame_time_s,
            opts: *opts,
        }
    }

    /// Character `c`'s root at tick `t` (position in studs, rotation).
    fn at(&self, c: usize, t: u32) -> (DVec3, DQuat) {
        let o = &self.opts;
        let dt = 1.0 / f64::from(o.tick_rate.max(1));
        let phase = self.clip_s * c as f64 / o.characters.max(1) as f64;
        let (p, q) = self.track.at(f64::from(t) * dt + phase, o.studs_per_metre);
        let q = if o.upright_root { self.heading } else { q };
        (p + DVec3::new(c as f64 * o.spacing_studs, 0.0, 0.0), q)
    }
}

/// Records the crowd (see the module docs).
pub fn record_crowd(clip: &Clip, opts: &CrowdOptions) -> Result<Crowd, RplyError> {
    let mut rec = Recorder::new(RecorderOptions {
        tick_rate: opts.tick_rate,
        place_version: 1,
        start_unix: 1_764_460_800.0,
        keyframe_every: opts.keyframe_every,
        thresholds: opts.thresholds,
    });
    let src = CrowdSource::new(clip, opts);
    let mut ids = Vec::with_capacity(opts.characters);
    for c in 0..opts.characters {
        let id = rec.spawn(&format!("char:{}", 1000 + c), None)?;
        rec.snapshot(
            id,
            &rig_snapshot(clip, &format!("Walker{c}"), opts.studs_per_metre),
        )?;
        ids.push(id);
    }
    let mut source = Vec::with_capacity(opts.ticks as usize);
    for t in 1..=opts.ticks {
        rec.begin_tick()?;
        let mut row = Vec::with_capacity(ids.len());
        for (c, &id) in ids.iter().enumerate() {
            let (p, q) = src.at(c, t);
            rec.transform(id, p, q)?;
            row.push((p, q));
        }
        source.push(row);
    }
    let stats = rec.stats();
    Ok(Crowd {
        bytes: rec.finish()?,
        ids,
        source,
        stats,
    })
}

/// Worst reconstruction errors of a crowd replay against its source, playing every tick.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CrowdErrors {
    /// Worst position error, studs.
    pub max_pos_error_studs: f64,
    /// Worst rotation error, degrees.
    pub max_rot_error_deg: f64,
    /// Ops played.
    pub ops: u64,
}

/// Plays the replay tick by tick and compares each character with its source transform.
pub fn crowd_errors(crowd: &Crowd) -> Result<CrowdErrors, RplyError> {
    let mut p = Player::open(&crowd.bytes)?;
    p.advance()?;
    let mut e = CrowdErrors::default();
    for row in &crowd.source {
        p.advance()?;
        for (c, &(sp, sq)) in row.iter().enumerate() {
            let ent = &p.state().entities[&crowd.ids[c]];
            let pos = ent.xform.pos.unwrap_or(DVec3::splat(f64::NAN));
            let rot = ent.xform.shown_rot.unwrap_or(DQuat::IDENTITY);
            e.max_pos_error_studs = e.max_pos_error_studs.max((pos - sp).length());
            e.max_rot_error_deg = e
                .max_rot_error_deg
                .max(angle_between_rad(rot, sq.normalize()).to_degrees());
        }
    }
    e.ops = p.ops_applied();
    Ok(e)
}

/// What [`verify_against_clip`] found: the crowd the file holds and the worst errors of its
/// played transforms against the motion it was recorded from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceCheck {
    /// Characters found (entities `char:1000`, `char:1001`, ... spawned at tick 0).
    pub characters: usize,
    /// Ticks compared (1..=tick_count).
    pub ticks: u32,
    /// Whether the file's rotations are the upright root (`rply-crowd --upright-root`),
    /// read from the file's first tick.
    pub upright_root: bool,
    /// Worst position error per character, studs.
    pub max_pos_error_studs: Vec<f64>,
    /// Worst rotation error per character, degrees.
    pub max_rot_error_deg: Vec<f64>,
    /// Entity-ticks whose error is over the bound.
    pub over_bound: u64,
    /// Position bound, studs: the default position threshold (0.05).
    pub pos_bound_studs: f64,
    /// Rotation bound, degrees: the largest of the default rotation threshold (0.5°), the
    /// upright tilt (0.573° plus half a yaw step) and the delta quantization.
    pub rot_bound_deg: f64,
}

/// Checks every tick of a walker-crowd replay (written by `import --format rply` or
/// `rply-crowd`, default spacing 12 studs) against the motion it was recorded from, at
/// `studs_per_metre`: the number of characters, the ticks and the tick rate come from the
/// file, and whether the root was recorded upright from its first tick. The bounds assume
/// the default thresholds (0.05 studs, 0.5°).
///
/// Errors: the file does not play ([`RplyError`]), its op stream ends before `tick_count`
/// (an idle tail: the cost of comparing does not grow with it), or its entities are not
/// such a crowd (no `char:1000` entity at tick 0, a character without a transform).
pub fn verify_against_clip(
    bytes: &[u8],
    clip: &Clip,
    studs_per_metre: f64,
) -> Result<SourceCheck, RplyError> {
    let mut p = Player::open(bytes)?;
    let h = *p.header();
    // Files recorded from motion end their op stream on their last tick (the recorder
    // writes that tick's marker); an idle tail after it holds no motion to compare, and
    // comparing it tick by tick would cost its length (up to 4,294,967,295 ticks).
    p.verify_all()?;
    let last = p.last_marker_tick();
    if last < h.tick_count {
        return Err(RplyError::Input(format!(
            "the op stream ends at tick {last} and tick_count is {}: an idle tail of {} \
             tick(s), which a replay recorded from motion (`import --format rply`, \
             `rply-crowd`) does not have, so --against has nothing to compare there \
             (`verify` without --against accepts the file)",
            h.tick_count,
            h.tick_count - last
        )));
    }
    p.seek(0)?;
    let mut ids = Vec::new();
    for (c, e) in p.state().entities.values().enumerate() {
        if *e.descriptor != *format!("char:{}", 1000 + c) || e.parent != 0 {
            break;
        }
        ids.push(e.id);
    }
    if ids.is_empty() {
        return Err(RplyError::Input(
            "the replay holds no walker crowd (entities char:1000, char:1001, ... at tick 0): \
             --against checks files written by `import --format rply` or `rply-crowd`"
                .into(),
        ));
    }
    let th = Thresholds::default();
    let mut opts = CrowdOptions {
        characters: ids.len(),
        ticks: h.tick_count,
        tick_rate: h.tick_rate,
        studs_per_metre,
        ..CrowdOptions::default()
    };
    let pos_bound_studs = th.pos_threshold_studs + 1e-6;
    let rot_bound_rad = th
        .rot_threshold_rad
        .max(statepack_codecs::rply_xform::UPRIGHT_MAX_TILT_RAD)
        .max(1.0 / 128.0)
        + 1e-6;
    let mut check = SourceCheck {
        characters: ids.len(),
        ticks: h.tick_count,
        upright_root: false,
        max_pos_error_studs: vec![0.0; ids.len()],
        max_rot_error_deg: vec![0.0; ids.len()],
        over_bound: 0,
        pos_bound_studs,
        rot_bound_deg: rot_bound_rad.to_degrees(),
    };
    let mut src = None;
    while p.advance()? {
        let t = p.state().tick.unwrap_or(0);
        for (c, &id) in ids.iter().enumerate() {
            let e = p.state().entities.get(&id).ok_or_else(|| {
                RplyError::Input(format!(
                    "character {c} (entity {id}) is not live at tick {t}"
                ))
            })?;
            let (Some(pos), Some(rot)) = (e.xform.pos, e.xform.shown_rot) else {
                return Err(RplyError::Input(format!(
                    "character {c} (entity {id}) has no transform at tick {t}"
                )));
            };
            let src = src.get_or_insert_with(|| {
                // Upright or the clip root's rotation: whichever the first sample is.
                let [a, b] = [false, true].map(|u| {
                    let o = CrowdOptions {
                        upright_root: u,
                        ..opts
                    };
                    let (_, q) = CrowdSource::new(clip, &o).at(c, t);
                    angle_between_rad(rot, q.normalize())
                });
                opts.upright_root = b < a;
                check.upright_root = opts.upright_root;
                CrowdSource::new(clip, &opts)
            });
            let (sp, sq) = src.at(c, t);
            let dp = (pos - sp).length();
            let dr = angle_between_rad(rot, sq.normalize());
            let pe = &mut check.max_pos_error_studs[c];
            *pe = if dp.is_nan() { f64::NAN } else { pe.max(dp) };
            check.max_rot_error_deg[c] = check.max_rot_error_deg[c].max(dr.to_degrees());
            if !(dp <= pos_bound_studs && dr <= rot_bound_rad) {
                check.over_bound += 1;
            }
        }
    }
    Ok(check)
}
