//! Matches made in code for CBTK tracks: a crowd of characters driven by a motion clip (each
//! character a unit, its joints pieces with pose tracks relative to the parent), projectiles
//! on ballistic arcs, craters in the terrain, team numbers, targets, build queues and
//! features. Everything is a closed-form function of the frame, so a window's samples are
//! made when the window is written and memory does not grow with the match.
//!
//! [`MatchSpec::crowd`] maps a motion clip onto a match; [`MatchSpec::bar_scale`] is the
//! synthetic match of the spec's larger benchmark size (about 7.0M unit samples, 4.3M piece
//! rows and 0.48M projectile rows over 82,496 frames); [`small_sample_file`] is a small track
//! with every chunk kind, the seed of the hostile-input sweeps and the oracle.

use crate::formats::cbtrack::writer::*;
use crate::formats::cbtrack::*;
use glam::{DQuat, DVec3};
use statepack_codecs::motion::{Clip, LocalTransform};
use statepack_codecs::smallest3;
use statepack_runtime::io::DecodeError;

/// Gravity on projectiles, elmos per frame squared.
pub const GRAVITY: f64 = 0.12;

/// How a match is made.
#[derive(Debug, Clone)]
pub struct MatchSpec {
    /// Motion driving each unit's root and pieces; `None` gives a synthetic tank with a turret.
    pub clip: Option<Clip>,
    /// Elmos per metre of motion input.
    pub elmos_per_metre: f64,
    /// Frames in the match (the last frame is `frames - 1`).
    pub frames: u32,
    /// Window length.
    pub window_length: u32,
    /// Tolerance in elmos.
    pub tolerance: f64,
    /// Frames between unit spawns.
    pub spawn_every: u32,
    /// Unit lifetime in frames.
    pub lifetime: u32,
    /// Number of units (spawned `spawn_every` apart).
    pub units: u32,
    /// Frames between piece samples (synthetic units only; clip joints are sampled every frame).
    pub piece_every: u32,
    /// Share of units (out of 100) that have posed pieces.
    pub posed_percent: u32,
    /// Frames between shots.
    pub fire_every: u32,
    /// Projectile flight time in frames.
    pub flight: u32,
    /// Every n-th projectile digs a crater (0: none).
    pub crater_every: u32,
    /// Number of features.
    pub features: u32,
}

impl MatchSpec {
    /// A crowd driven by `clip`: `units` characters spawned 30 frames apart, living the whole
    /// match, looping the clip at its own speed.
    pub fn crowd(clip: Clip, units: u32, frames: u32) -> Self {
        Self {
            clip: Some(clip),
            elmos_per_metre: 16.0,
            frames,
            window_length: 900,
            tolerance: 0.5,
            spawn_every: 30,
            lifetime: frames,
            units,
            piece_every: 1,
            posed_percent: 100,
            fire_every: 9,
            flight: 45,
            crater_every: 3,
            features: 40,
        }
    }

    /// The synthetic match of the spec's BAR size.
    pub fn bar_scale() -> Self {
        Self {
            clip: None,
            elmos_per_metre: 16.0,
            frames: 82_496,
            window_length: 900,
            tolerance: 0.5,
            spawn_every: 60,
            lifetime: 5_100,
            units: 1_367,
            piece_every: 2,
            posed_percent: 62,
            fire_every: 7,
            flight: 41,
            crater_every: 4,
            features: 636,
        }
    }

    /// A small match with every chunk kind (a few kilobytes).
    pub fn small() -> Self {
        Self {
            clip: None,
            elmos_per_metre: 16.0,
            frames: 181,
            window_length: 60,
            tolerance: 0.5,
            spawn_every: 20,
            lifetime: 120,
            units: 4,
            piece_every: 2,
            posed_percent: 50,
            fire_every: 25,
            flight: 30,
            crater_every: 2,
            features: 3,
        }
    }

    fn spawn(&self, i: u32) -> u32 {
        i * self.spawn_every
    }

    fn death(&self, i: u32) -> u32 {
        (self.spawn(i) + self.lifetime - 1 + (i % 7) * 13).min(self.frames - 1)
    }

    fn has_pieces(&self, i: u32) -> bool {
        (i * 37 + 11) % 100 < self.posed_percent
    }

    /// Largest unit radius in the match.
    pub fn max_radius(&self) -> f64 {
        if self.clip.is_some() {
            24.0
        } else {
            30.0
        }
    }

    fn radius(&self) -> f64 {
        self.max_radius()
    }

    /// Header values by the spec's rules for this match's tolerance and largest radius.
    pub fn params(&self) -> FileParams {
        let tol = self.tolerance;
        FileParams {
            first_frame: 0,
            last_frame: self.frames - 1,
            window_length: self.window_length,
            tolerance: tol as f32,
            position_shift: position_shift_for(tol),
            velocity_shift: velocity_shift_for(tol, self.window_length),
            rotation_bits: rotation_bits_for(tol, self.max_radius()),
            ..FileParams::default()
        }
    }

    /// The pieces a unit has: (name, parent piece or none, reach in elmos).
    pub fn pieces(&self) -> Vec<(String, f64)> {
        match &self.clip {
            Some(c) => {
                let sk = c.skeleton.bones();
                let n = sk.len();
                // reach: furthest rest position of a descendant from the joint's origin
                let mut reach = vec![0.0f64; n];
                for b in (0..n).rev() {
                    // accumulate offsets down the chain
                    let mut best: f64 = 0.0;
                    for d in b + 1..n {
                        let mut p = d;
                        let mut off = DVec3::ZERO;
                        let mut ok = false;
                        while let Some(par) = sk[p].parent {
                            off += sk[p].rest_translation;
                            if par == b {
                                ok = true;
                                break;
                            }
                            p = par;
                        }
                        if ok {
                            best = best.max(off.length() * self.elmos_per_metre);
                        }
                    }
                    reach[b] = if best > 0.0 { best } else { self.radius() };
                }
                (1..n).map(|b| (sk[b].name.clone(), reach[b])).collect()
            }
            None => vec![("turret".into(), 12.0), ("barrel".into(), 8.0)],
        }
    }

    /// The info chunk.
    pub fn info(&self) -> Info {
        Info {
            texts: vec![
                "statepack synthetic engine".into(),
                "statepack crowd 1".into(),
                "flatland".into(),
                format!("statepack {}", env!("CARGO_PKG_VERSION")),
            ],
            unit_defs: vec!["walker".into(), "tank".into()],
            weapon_defs: vec!["cannon".into()],
            feature_defs: vec!["rock".into()],
            posed: vec![(0, self.pieces().into_iter().map(|p| p.0).collect())],
            teams: (0..3)
                .map(|t| TeamInfo {
                    id: t,
                    ally: t.min(1),
                    flags: 0,
                    colour: [t * 100, 50, 200 - t * 60],
                    side: "core".into(),
                    leader: format!("player{t}"),
                })
                .collect(),
            map_size: vec![8192, 8192],
            footprint_x: vec![32, 48],
            footprint_z: vec![32, 48],
            team_params: vec!["supplyUsed".into()],
            game_params: vec![],
        }
    }

    /// The features chunk.
    pub fn features(&self, pos_step: f64) -> Vec<Feature> {
        (0..self.features)
            .map(|i| {
                let x = 200.0 + (i * 97 % 7000) as f64;
                let z = 300.0 + (i * 53 % 7000) as f64;
                let (d, c) = smallest3::encode(DQuat::from_rotation_y(i as f64 * 0.7), 16);
                let last = if i % 3 == 0 {
                    self.frames / 2 + i
                } else {
                    self.frames - 1
                };
                Feature {
                    feature_id: i as u16,
                    def: 0,
                    team: 255,
                    flags: if last >= self.frames - 1 { 3 } else { 1 },
                    first_frame: 0,
                    last_frame: last.min(self.frames - 1),
                    pos: [
                        (x / pos_step).round() as i32,
                        (20.0 / pos_step).round() as i32,
                        (z / pos_step).round() as i32,
                    ],
                    rot_dropped: d,
                    rot: c.map(|v| v as i16),
                }
            })
            .collect()
    }

    /// Root position (elmos) and rotation of unit `i` at `frame`.
    fn root(&self, i: u32, frame: u32) -> (DVec3, DQuat) {
        let base = DVec3::new(
            400.0 + (i % 40) as f64 * 160.0,
            30.0,
            400.0 + (i / 40 % 40) as f64 * 160.0,
        );
        let t = (frame - self.spawn(i)) as f64;
        match &self.clip {
            Some(c) => {
                let (lt, loops) = self.clip_time(c, i, frame);
                let f = c.frame(lt).unwrap_or(&[]);
                let root = f.first().copied().unwrap_or(LocalTransform {
                    translation: DVec3::ZERO,
                    rotation: DQuat::IDENTITY,
                    scale: DVec3::ONE,
                });
                // loop: carry the root's displacement over a whole loop forward
                let first = c
                    .frame(0)
                    .and_then(|r| r.first())
                    .map_or(DVec3::ZERO, |r| r.translation);
                let lastf = c
                    .frame(c.frame_count().saturating_sub(1))
                    .and_then(|r| r.first())
                    .map_or(DVec3::ZERO, |r| r.translation);
                let mut disp = lastf - first;
                disp.y = 0.0;
                let heading = DQuat::from_rotation_y((i % 8) as f64 * 0.785);
                let p = root.translation - DVec3::new(first.x, 0.0, first.z) + disp * loops as f64;
                (
                    base + heading * (p * self.elmos_per_metre),
                    heading * root.rotation,
                )
            }
            None => {
                // drive in a circle, stopping for a while every 400 frames
                let phase = t % 400.0;
                let moving = if phase < 250.0 {
                    t - (t / 400.0).floor() * 150.0
                } else {
                    (t / 400.0).floor() * 250.0 + 250.0
                };
                let a = moving * 0.004 + i as f64;
                let r = 120.0;
                let p = base + DVec3::new(r * a.cos(), 2.0 * (a * 3.0).sin(), r * a.sin());
                let yaw = -a;
                let pitch = 0.05 * (a * 5.0).sin();
                (
                    p,
                    DQuat::from_rotation_y(yaw) * DQuat::from_rotation_x(pitch),
                )
            }
        }
    }

    /// Frame of the clip and the number of whole loops done for unit `i` at `frame`.
    fn clip_time(&self, c: &Clip, i: u32, frame: u32) -> (usize, u64) {
        let n = c.frame_count().max(1);
        let secs = (frame - self.spawn(i)) as f64 / 30.0 + i as f64 * 0.37;
        let f = (secs / c.frame_time_s).floor() as u64;
        ((f % n as u64) as usize, f / n as u64)
    }

    /// Piece samples of unit `i` at `frame`: (piece index, rotation relative to the parent,
    /// offset from rest in elmos).
    fn piece_sample(&self, i: u32, frame: u32, out: &mut Vec<(u16, DQuat, DVec3)>) {
        out.clear();
        match &self.clip {
            Some(c) => {
                let (lt, _) = self.clip_time(c, i, frame);
                let f = c.frame(lt).unwrap_or(&[]);
                let sk = c.skeleton.bones();
                for b in 1..f.len().min(sk.len()) {
                    let off = (f[b].translation - sk[b].rest_translation) * self.elmos_per_metre;
                    out.push(((b - 1) as u16, f[b].rotation, off));
                }
            }
            None => {
                let t = frame as f64;
                let yaw = 0.8 * (t * 0.01 + i as f64).sin() + (t * 0.0007);
                out.push((0, DQuat::from_rotation_y(yaw), DVec3::ZERO));
                let pitch = 0.2 * (t * 0.013 + i as f64).sin();
                let recoil = if (frame + i) % self.fire_every < 3 {
                    -1.5
                } else {
                    0.0
                };
                out.push((
                    1,
                    DQuat::from_rotation_x(pitch),
                    DVec3::new(0.0, 0.0, recoil),
                ));
            }
        }
    }

    fn projectile(&self, j: u32) -> Option<(u32, u32, u32, DVec3, DVec3)> {
        let fired = j * self.fire_every;
        if fired >= self.frames {
            return None;
        }
        // the newest unit alive at that frame fires
        let mut owner = (fired / self.spawn_every.max(1)).min(self.units.saturating_sub(1));
        while owner > 0 && self.death(owner) < fired {
            owner -= 1;
        }
        if self.spawn(owner) > fired || self.death(owner) < fired {
            return None;
        }
        let (p, _) = self.root(owner, fired);
        let a = j as f64 * 2.4;
        let speed = 4.0 + (j % 5) as f64;
        let v = DVec3::new(
            a.cos() * speed,
            0.5 * GRAVITY * self.flight as f64,
            a.sin() * speed,
        );
        let last = (fired + self.flight).min(self.frames - 1);
        Some((owner, fired, last, p + DVec3::new(0.0, 20.0, 0.0), v))
    }

    /// Samples of everything in window `[start, end]` (with one frame either side).
    pub fn window(&self, start: u32, end: u32) -> WindowInput {
        let lo = start.saturating_sub(1);
        let hi = (end + 1).min(self.frames - 1);
        let mut w = WindowInput::default();
        let pieces = self.pieces();
        let mut ps = Vec::new();
        for i in 0..self.units {
            let (s, d) = (self.spawn(i), self.death(i));
            if s > end || d < start || s >= self.frames {
                continue;
            }
            let (a, b) = (lo.max(s), hi.min(d));
            let mut u = UnitInput {
                unit_id: (i % 32000) as u16,
                serial: i,
                def: if self.clip.is_some() { 0 } else { 1 },
                team: (i % 2) as u8,
                radius: self.radius(),
                first_frame: s,
                last_frame: d,
                ..Default::default()
            };
            for f in a..=b {
                let (p, q) = self.root(i, f);
                u.samples.push(UnitSample {
                    frame: f,
                    pos: p,
                    rot: q,
                });
                let hit = ((f - s) / 500) as f64;
                let health = (1.0 - 0.1 * hit).max(0.2) + 0.0002 * ((f - s) % 500) as f64;
                u.status.push(StatusSample {
                    frame: f,
                    health: health.min(1.0),
                    build: ((f - s) as f64 / 90.0).min(1.0),
                    flags: 1,
                });
            }
            if self.has_pieces(i) {
                let every = if self.clip.is_some() {
                    1
                } else {
                    self.piece_every
                };
                let mut pin: Vec<PieceInput> = pieces
                    .iter()
                    .enumerate()
                    .map(|(k, p)| PieceInput {
                        piece: k as u16,
                        reach: p.1,
                        samples: Vec::new(),
                    })
                    .collect();
                for f in a..=b {
                    if (f - s) % every != 0 && f != a && f != b {
                        continue;
                    }
                    self.piece_sample(i, f, &mut ps);
                    for &(k, q, o) in &ps {
                        if let Some(p) = pin.get_mut(k as usize) {
                            p.samples.push(PieceSample {
                                frame: f,
                                rot: q,
                                offset: o,
                            });
                        }
                    }
                }
                u.pieces = pin;
            }
            // weapon 1 aims at a position that changes every 300 frames
            let mut keys = Vec::new();
            let mut f = s + 15;
            while f <= d {
                let k = (f - s) / 300;
                keys.push(TargetInputKey {
                    frame: f,
                    kind: if k % 3 == 2 { 0 } else { 128 },
                    reference: 0,
                    power15: 0,
                    pos: if k % 3 == 2 {
                        None
                    } else {
                        Some(DVec3::new(1000.0 + k as f64 * 8.0, 25.0, 2000.0 - i as f64))
                    },
                });
                f += 300;
            }
            u.targets.push((1, keys));
            if i % 10 == 3 && self.features > 0 {
                u.targets.push((
                    0,
                    vec![TargetInputKey {
                        frame: s + 40,
                        kind: 18,
                        reference: i % self.features,
                        power15: 15,
                        pos: None,
                    }],
                ));
                let mut f = s + 10;
                while f <= d {
                    let n = ((f - s) / 600 % 3) as u16;
                    u.queue.push((
                        f,
                        (0..n)
                            .map(|q| (1, 500.0 + q as f64 * 48.0, 600.0, (q % 4) as u8))
                            .collect(),
                    ));
                    f += 600;
                }
            }
            w.units.push(u);
        }
        // projectiles
        let j0 = (lo.saturating_sub(self.flight)) / self.fire_every.max(1);
        let j1 = hi / self.fire_every.max(1);
        for j in j0..=j1 {
            let Some((owner, fired, last, p0, v0)) = self.projectile(j) else {
                continue;
            };
            if fired > end || last < start {
                continue;
            }
            let mut p = ProjectileInput {
                serial: j,
                weapon: if j % 11 == 5 { NO_WEAPON } else { 0 },
                team: (owner % 2) as u8,
                owner: Some(owner),
                first_frame: fired,
                last_frame: last,
                samples: Vec::new(),
            };
            for f in lo.max(fired)..=hi.min(last) {
                let t = (f - fired) as f64;
                let g = DVec3::new(0.0, -GRAVITY, 0.0);
                p.samples.push(ProjectileSample {
                    frame: f,
                    pos: p0 + v0 * t + g * (0.5 * t * t),
                    vel: v0 + g * t,
                });
            }
            if self.crater_every > 0 && j % self.crater_every == 0 && last < self.frames - 1 {
                let t = (last - fired) as f64;
                let land = p0 + v0 * t;
                let (cx, cz) = (
                    (land.x / 8.0).round().max(0.0) as u16,
                    (land.z / 8.0).round().max(0.0) as u16,
                );
                for dz in 0..3u16 {
                    for dx in 0..3u16 {
                        let depth = if dx == 1 && dz == 1 { 1.0 } else { 0.375 };
                        let hits = (j / self.crater_every) % 4;
                        let map = 30.0;
                        w.terrain.push(TerrainChange {
                            frame: last,
                            x: cx + dx,
                            z: cz + dz,
                            map_height: map,
                            after: map - depth * (hits + 1) as f64 + (j % 3) as f64 * 0.03,
                        });
                    }
                }
            }
            w.projectiles.push(p);
        }
        // team numbers: metal held (thinned), storage (exact), energy held, a rules parameter
        for team in 0..2u8 {
            let mut metal = TeamInput {
                team,
                code: 0,
                samples: Vec::new(),
            };
            let mut storage = TeamInput {
                team,
                code: 1,
                samples: Vec::new(),
            };
            let mut energy = TeamInput {
                team,
                code: 16,
                samples: Vec::new(),
            };
            let mut supply = TeamInput {
                team,
                code: RULES_PARAM_BASE,
                samples: Vec::new(),
            };
            for f in lo..=hi {
                let t = f as f64;
                metal.samples.push((
                    f,
                    (500.0 + 3.0 * t - 900.0 * (t / 300.0).floor() % 4000.0).max(0.0) as f32,
                ));
                storage.samples.push((f, (1000 + 500 * (f / 2000)) as f32));
                energy
                    .samples
                    .push((f, (2000.0 + 800.0 * (t * 0.002 + team as f64).sin()) as f32));
                if f >= 30 {
                    supply.samples.push((f, (f / 450 + 2) as f32));
                }
            }
            w.teams.extend([metal, storage, energy, supply]);
        }
        w
    }

    /// Writes the match as a track into `out`, window by window, calling `progress` after
    /// each window with (windows done, windows).
    ///
    /// Errors: as for [`ThinningWriter::push`].
    pub fn write<W: std::io::Write + std::io::Seek>(
        &self,
        out: &mut W,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<(u64, Stats, SectionBytes), WriteError> {
        let params = self.params();
        let feats = self.features(1.0 / (1u64 << params.position_shift) as f64);
        let mut w = ThinningWriter::new(out, params, &self.info(), &feats)?;
        let n = w.num_windows();
        for k in 0..n {
            let (s, e) = w.next_span();
            let input = self.window(s, e);
            w.push(&input)?;
            progress(k + 1, n);
        }
        w.finish()
    }

    /// Every recorded sample measured against a track made from this match: the worst of each
    /// kind, with the track read window by window (as `verify` does). Every chunk is read,
    /// the ones that hold no measured sample too (info, features, terrain), so a track that
    /// does not fully decode is never reported as within its tolerance.
    ///
    /// Errors: the track, or any of its chunks, does not read.
    pub fn verify(&self, bytes: &[u8]) -> Result<Stats, DecodeError> {
        self.verify_with_progress(bytes, |_, _| {})
    }

    /// [`Self::verify`], calling `progress` after each window with (windows done, windows).
    ///
    /// Errors: as for [`Self::verify`].
    pub fn verify_with_progress(
        &self,
        bytes: &[u8],
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Stats, DecodeError> {
        let t = Track::open(bytes)?;
        let h = t.header();
        t.check_info()?;
        t.check_features()?;
        let mut st = Stats::default();
        let n = t.num_windows();
        for k in 0..n {
            t.check_terrain(k)?;
            let (s, e) = h.window_span(k);
            let input = self.window(s, e);
            // The window is read one entry at a time and each unit or projectile measured
            // as it is decoded (nothing of the window is kept), against the recorded
            // entries of the same serial (the first window entry of a serial, as `measure`).
            let index = |serials: &mut dyn Iterator<Item = u32>| {
                let mut m: std::collections::HashMap<u32, Vec<usize>> = Default::default();
                for (i, serial) in serials.enumerate() {
                    m.entry(serial).or_default().push(i);
                }
                m
            };
            let units = index(&mut input.units.iter().map(|u| u.serial));
            let projectiles = index(&mut input.projectiles.iter().map(|p| p.serial));
            let mut seen = (
                std::collections::HashSet::new(),
                std::collections::HashSet::new(),
            );
            t.visit_window(k, |part| match part {
                WindowPart::Unit(wu) if seen.0.insert(wu.serial) => {
                    for &i in units.get(&wu.serial).into_iter().flatten() {
                        measure_unit(&h, wu, &input.units[i], (s, e), &mut st);
                    }
                }
                WindowPart::Projectile(wp) if seen.1.insert(wp.serial) => {
                    for &i in projectiles.get(&wp.serial).into_iter().flatten() {
                        measure_projectile(&h, wp, &input.projectiles[i], (s, e), &mut st);
                    }
                }
                _ => {}
            })?;
            progress(k + 1, n);
        }
        Ok(st)
    }
}

/// Measures the samples of recorded unit `u` in `[start, end]` against the track's unit
/// `wu` (transform and pieces), keeping the worst of each kind in `st`.
fn measure_unit(h: &Header, wu: &Unit, u: &UnitInput, (start, end): (u32, u32), st: &mut Stats) {
    let ps = h.pos_step();
    // a frame on a window edge is measured in both windows and counted in the first
    let once = |f: u32| u64::from(f < end || end == h.last_frame);
    for x in u.samples.iter().filter(|x| {
        x.frame >= start && x.frame <= end && x.frame >= u.first_frame && x.frame <= u.last_frame
    }) {
        let (p, q) = wu.transform_at((x.frame - start) as f64, h.rotation_bits);
        st.unit_samples += once(x.frame);
        st.worst_unit = st
            .worst_unit
            .max((p * ps).distance(x.pos) + u.radius * smallest3::angle_between(q, x.rot));
    }
    for pc in &u.pieces {
        let tr = wu.poses.iter().find(|t| t.piece == pc.piece);
        for x in pc.samples.iter().filter(|x| {
            x.frame >= start
                && x.frame <= end
                && x.frame >= u.first_frame
                && x.frame <= u.last_frame
        }) {
            let (a, o) = tr.map_or(([0.0; 3], [0.0; 3]), |t| t.at((x.frame - start) as f64));
            let rot = angles_rotation(a.map(|v| v / COB_PER_RAD));
            st.piece_samples += once(x.frame);
            st.worst_piece = st.worst_piece.max(
                (DVec3::from(o) * ps).distance(x.offset)
                    + pc.reach * smallest3::angle_between(rot, x.rot),
            );
        }
    }
}

/// Measures the samples of recorded projectile `p` in `[start, end]` against the track's
/// projectile `wp`, keeping the worst in `st`.
fn measure_projectile(
    h: &Header,
    wp: &Projectile,
    p: &ProjectileInput,
    (start, end): (u32, u32),
    st: &mut Stats,
) {
    let ps = h.pos_step();
    let once = |f: u32| u64::from(f < end || end == h.last_frame);
    for x in p.samples.iter().filter(|x| {
        x.frame >= start && x.frame <= end && x.frame >= p.first_frame && x.frame <= p.last_frame
    }) {
        let (pos, vel) = wp.at((x.frame - start) as f64, ps, h.vel_step());
        st.projectile_samples += once(x.frame);
        st.worst_projectile = st.worst_projectile.max(pos.distance(x.pos));
        st.worst_projectile_velocity = st.worst_projectile_velocity.max(vel.distance(x.vel));
    }
}

/// Measures every sample of `input` in `[start, end]` against window `w`, keeping the worst
/// of each kind in `st` (no tolerance is applied here).
pub fn measure(
    h: &Header,
    w: &MainWindow,
    input: &WindowInput,
    start: u32,
    end: u32,
    st: &mut Stats,
) {
    for u in &input.units {
        if let Some(wu) = w.units.iter().find(|x| x.serial == u.serial) {
            measure_unit(h, wu, u, (start, end), st);
        }
    }
    for p in &input.projectiles {
        if let Some(wp) = w.projectiles.iter().find(|x| x.serial == p.serial) {
            measure_projectile(h, wp, p, (start, end), st);
        }
    }
}

/// The small sample track (every chunk kind, a few kilobytes).
pub fn small_sample_file() -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    MatchSpec::small()
        .write(&mut out, |_, _| {})
        .expect("the small match writes");
    out.into_inner()
}
