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

use super::rply::{Player, Recorder, RecorderOptions, RecorderStats, RigBuilder, RplyError};
use glam::{DQuat, DVec3};
use statepack_runtime::motion::{forward_kinematics, Clip};
use statepack_runtime::quant::angle_between_rad;
use statepack_runtime::replay_xform::Thresholds;

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
            keyframe_every: super::rply::DEFAULT_KEYFRAME_EVERY,
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

/// Records the crowd (see the module docs).
pub fn record_crowd(clip: &Clip, opts: &CrowdOptions) -> Result<Crowd, RplyError> {
    let mut rec = Recorder::new(RecorderOptions {
        tick_rate: opts.tick_rate,
        place_version: 1,
        start_unix: 1_764_460_800.0,
        keyframe_every: opts.keyframe_every,
        thresholds: opts.thresholds,
    });
    let clip_s = clip.frames.len() as f64 * clip.frame_time_s;
    let track = RootTrack::new(clip);
    let heading = track.heading();
    let mut ids = Vec::with_capacity(opts.characters);
    for c in 0..opts.characters {
        let id = rec.spawn(&format!("char:{}", 1000 + c), None)?;
        rec.snapshot(
            id,
            &rig_snapshot(clip, &format!("Walker{c}"), opts.studs_per_metre),
        )?;
        ids.push(id);
    }
    let dt = 1.0 / f64::from(opts.tick_rate.max(1));
    let mut source = Vec::with_capacity(opts.ticks as usize);
    for t in 1..=opts.ticks {
        rec.begin_tick()?;
        let mut row = Vec::with_capacity(ids.len());
        for (c, &id) in ids.iter().enumerate() {
            let phase = clip_s * c as f64 / opts.characters.max(1) as f64;
            let (p, q) = track.at(f64::from(t) * dt + phase, opts.studs_per_metre);
            let q = if opts.upright_root { heading } else { q };
            let p = p + DVec3::new(c as f64 * opts.spacing_studs, 0.0, 0.0);
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
