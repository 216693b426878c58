//! Main and terrain chunks: one window's keys as the reader sees them, and their layout.

use super::*;

/// One transform key (offsets are frames from the window's first frame).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TransformKey {
    /// Frame offset in the window.
    pub offset: u32,
    /// Position in position steps.
    pub pos: [i32; 3],
    /// Dropped rotation component (0..=3 for x, y, z, w).
    pub rot_dropped: u8,
    /// The three kept rotation codes.
    pub rot: [i16; 3],
}

/// One status key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StatusKey {
    /// Frame offset in the window.
    pub offset: u32,
    /// Health fraction in 65,535ths.
    pub health: u16,
    /// Build progress in 65,535ths.
    pub build: u16,
    /// Flags; bit 0: switched on.
    pub flags: u8,
}

/// One target key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetKey {
    /// Frame offset in the window.
    pub offset: u32,
    /// Kind (0 nothing, 1 unit, 2 feature, 4 projectile, 16..20 builder work, 128/129 position).
    pub kind: u8,
    /// Reference, 0 when the kind has none.
    pub reference: u32,
    /// Build power, 255 for full; 0 for a weapon.
    pub power: u8,
    /// Position in position steps for kinds 128 and above.
    pub pos: Option<[i32; 3]>,
}

/// One target track of a unit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TargetTrack {
    /// Weapon number from 1, 0 for builder work.
    pub weapon: u8,
    /// Keys in time order.
    pub keys: Vec<TargetKey>,
}

/// One pose key: three angles (65,536ths of a turn, shifted by whole turns per window) and
/// three offsets (position steps), relative to the parent piece.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PoseKey {
    /// Frame offset in the window.
    pub offset: u32,
    /// Angles about x, y, z.
    pub angles: [i32; 3],
    /// Offsets x, y, z from the rest position.
    pub offsets: [i32; 3],
}

/// One pose track (one aiming piece of one unit).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoseTrack {
    /// Index into the posed piece names of the unit's definition.
    pub piece: u16,
    /// Keys in time order.
    pub keys: Vec<PoseKey>,
}

/// One item of a build queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueItem {
    /// Unit definition.
    pub def: u16,
    /// Position x in position steps.
    pub x: i32,
    /// Position z in position steps.
    pub z: i32,
    /// Facing 0..=3.
    pub facing: u8,
}

/// One build queue key: the whole queue from this frame on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueueKey {
    /// Frame offset in the window.
    pub offset: u32,
    /// The queue's items.
    pub items: Vec<QueueItem>,
}

/// One unit entry of a window, with all its keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Unit {
    /// The engine's unit id.
    pub unit_id: u16,
    /// Serial number in the match.
    pub serial: u32,
    /// Unit definition.
    pub def: u16,
    /// Team.
    pub team: u8,
    /// Bit 0: existed before the window; bit 1: exists after it.
    pub flags: u8,
    /// First offset at which it exists.
    pub first: u16,
    /// Last offset at which it exists.
    pub last: u16,
    /// Transform keys.
    pub transforms: Vec<TransformKey>,
    /// Status keys.
    pub status: Vec<StatusKey>,
    /// Target tracks.
    pub targets: Vec<TargetTrack>,
    /// Pose tracks.
    pub poses: Vec<PoseTrack>,
    /// Build queue keys.
    pub queue: Vec<QueueKey>,
}

/// One projectile key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectileKey {
    /// Frame offset in the window.
    pub offset: u32,
    /// Position in position steps.
    pub pos: [i32; 3],
    /// Velocity in velocity steps.
    pub vel: [i32; 3],
}

/// One projectile entry of a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Projectile {
    /// Serial number in the match.
    pub serial: u32,
    /// Weapon definition, 65,535 for none.
    pub weapon: u16,
    /// Team, 255 for none.
    pub team: u8,
    /// Bit 0: existed before the window; bit 1: exists after it.
    pub flags: u8,
    /// Index of the firing unit in this window's units, or 65,535.
    pub owner: u16,
    /// First offset at which it exists.
    pub first: u16,
    /// Last offset at which it exists.
    pub last: u16,
    /// Keys.
    pub keys: Vec<ProjectileKey>,
}

/// One team number track of a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TeamTrack {
    /// Team id, 255 for the game's own.
    pub team: u8,
    /// Code of the number (0..=8 metal, 16..=24 energy, 256+ rules parameters).
    pub code: u16,
    /// Keys: frame offset and value.
    pub keys: Vec<(u32, f32)>,
}

/// One terrain row (frame absolute here; heights in position steps).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TerrainRow {
    /// Frame of the change.
    pub frame: u32,
    /// Heightmap x (corners, 8 elmos apart).
    pub x: u16,
    /// Heightmap z.
    pub z: u16,
    /// Height before, position steps.
    pub before: i32,
    /// Height after, position steps.
    pub after: i32,
}

/// One window's main chunk as the reader sees it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MainWindow {
    /// Window number.
    pub index: usize,
    /// First frame of the window.
    pub start: u32,
    /// Last frame of the window.
    pub end: u32,
    /// Units.
    pub units: Vec<Unit>,
    /// Projectiles.
    pub projectiles: Vec<Projectile>,
    /// Team number tracks.
    pub teams: Vec<TeamTrack>,
}

/// One entry of a window's main chunk, as [`MainWindow::visit_chunk`] hands it over.
#[derive(Debug, Clone, Copy)]
pub enum WindowPart<'a> {
    /// The number of units, projectiles and team number tracks, before any of them.
    Counts {
        /// Units in the window.
        units: usize,
        /// Projectiles in the window.
        projectiles: usize,
        /// Team number tracks in the window.
        teams: usize,
    },
    /// A unit with its keys and tracks.
    Unit(&'a Unit),
    /// A projectile with its keys.
    Projectile(&'a Projectile),
    /// A team number track.
    Team(&'a TeamTrack),
}

/// What [`MainWindow::from_columns`] does with each entry it decodes.
enum Mode<'f> {
    /// Keeps every entry in the window.
    Keep,
    /// Builds nothing (the checks only).
    Check,
    /// Hands each entry to the function and keeps none.
    Visit(&'f mut dyn FnMut(WindowPart<'_>)),
}

/// Splits `total` keys into curves by `counts`, checking the sum.
fn check_sum(
    set: &'static str,
    col: &'static str,
    counts: impl Iterator<Item = usize>,
    lens: &[(&'static str, usize)],
) -> Result<usize, DecodeError> {
    let total: usize = counts.sum();
    check_lens(set, total, lens).map_err(|e| {
        semantic(
            e.path,
            0,
            format!("{} (counts in `{col}` add up to {total})", e.kind),
        )
    })?;
    Ok(total)
}

/// The three escape curves of a position, velocity, angle or offset; a missing narrow
/// column reads as zeros (no escapes), with nothing allocated for it.
struct Escape3<'a>([Option<EscapeDecoder<'a>>; 3]);

impl<'a> Escape3<'a> {
    fn new(n: [&'a [i16]; 3], w: [&'a [i32]; 3]) -> Self {
        Self([0, 1, 2].map(|i| (!n[i].is_empty()).then(|| EscapeDecoder::new(n[i], w[i]))))
    }
    fn curve(
        &mut self,
        k: usize,
        set: &'static str,
        out: &mut [Vec<i32>; 3],
    ) -> Result<(), DecodeError> {
        for (d, o) in self.0.iter_mut().zip(out.iter_mut()) {
            match d {
                Some(d) => d
                    .curve(k, o)
                    .map_err(|m| semantic(fpath(&[PathSeg::Field(set)]), 0, m))?,
                None => {
                    o.clear();
                    o.resize(k, 0);
                }
            }
        }
        Ok(())
    }
}

fn wrap3(cols: [&[u16]; 3], at: usize, k: usize, out: &mut [Vec<u16>; 3]) {
    for (c, o) in cols.iter().zip(out.iter_mut()) {
        if c.is_empty() {
            o.clear();
            o.resize(k, 0);
        } else {
            wrap_decode(&c[at..at + k], o);
        }
    }
}

fn times(col: &[u16], at: usize, k: usize) -> Vec<u32> {
    if col.is_empty() {
        vec![0; k]
    } else {
        time_decode(&col[at..at + k])
    }
}

impl MainWindow {
    /// Decodes a main chunk's bytes (decompressed) for window `index` spanning `start..=end`.
    /// The columns are read where they lie in `bytes` ([`parse_chunk`]).
    ///
    /// Errors: the directory or a column set is bad, per-entry columns disagree in length, key
    /// columns do not match the counts, or an escape has no wide value.
    pub fn from_chunk(
        bytes: &[u8],
        index: usize,
        start: u32,
        end: u32,
    ) -> Result<Self, DecodeError> {
        Self::read_chunk(bytes, index, start, end, &mut Mode::Keep)
    }

    /// Checks a main chunk's bytes (decompressed) as [`MainWindow::from_chunk`] reads them,
    /// with the same errors, keeping nothing: one unit, track or projectile at a time is
    /// decoded and dropped, so memory is the chunk and one curve (at most 65,535 keys).
    ///
    /// Errors: as for [`MainWindow::from_chunk`].
    pub fn check_chunk(
        bytes: &[u8],
        index: usize,
        start: u32,
        end: u32,
    ) -> Result<(), DecodeError> {
        Self::read_chunk(bytes, index, start, end, &mut Mode::Check).map(drop)
    }

    /// Reads a main chunk's bytes (decompressed) as [`MainWindow::from_chunk`] does, with the
    /// same errors, handing each entry to `f` as it is decoded and keeping none: first the
    /// counts, then every unit, every projectile and every team number track in stored
    /// order. Memory: the chunk and one entry.
    ///
    /// Errors: as for [`MainWindow::from_chunk`]; `f` has seen the entries before the error.
    pub fn visit_chunk(
        bytes: &[u8],
        index: usize,
        start: u32,
        end: u32,
        mut f: impl FnMut(WindowPart<'_>),
    ) -> Result<(), DecodeError> {
        Self::read_chunk(bytes, index, start, end, &mut Mode::Visit(&mut f)).map(drop)
    }

    fn read_chunk(
        bytes: &[u8],
        index: usize,
        start: u32,
        end: u32,
        mode: &mut Mode<'_>,
    ) -> Result<Self, DecodeError> {
        let c = parse_chunk(bytes)?;
        let u = UnitsView::from_chunk(&c)?;
        let t = TransformKeysView::from_chunk(&c)?;
        let s = StatusKeysView::from_chunk(&c)?;
        let g = TargetTracksView::from_chunk(&c)?;
        let p = PoseTracksView::from_chunk(&c)?;
        let q = BuildQueueView::from_chunk(&c)?;
        let j = ProjectilesView::from_chunk(&c)?;
        let n = TeamNumbersView::from_chunk(&c)?;
        Self::from_columns(&u, &t, &s, &g, &p, &q, &j, &n, (index, start, end), mode)
    }

    /// The window from its column sets; unless `mode` keeps them, every entry is decoded (so
    /// every error is found) and dropped, and the window comes back empty.
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    fn from_columns(
        u: &UnitsView,
        t: &TransformKeysView,
        s: &StatusKeysView,
        g: &TargetTracksView,
        p: &PoseTracksView,
        q: &BuildQueueView,
        j: &ProjectilesView,
        nc: &TeamNumbersView,
        (index, start, end): (usize, u32, u32),
        mode: &mut Mode<'_>,
    ) -> Result<Self, DecodeError> {
        let keep = matches!(mode, Mode::Keep);
        let build = !matches!(mode, Mode::Check);
        let ulens = [
            ("unit_id", u.unit_id.len()),
            ("serial", u.serial.len()),
            ("def", u.def.len()),
            ("team", u.team.len()),
            ("flags", u.flags.len()),
            ("first", u.first.len()),
            ("last", u.last.len()),
            ("transform_count", u.transform_count.len()),
            ("status_count", u.status_count.len()),
            ("target_track_count", u.target_track_count.len()),
            ("pose_track_count", u.pose_track_count.len()),
            ("queue_count", u.queue_count.len()),
        ];
        let nu = ulens.iter().map(|l| l.1).max().unwrap_or(0);
        check_lens("units", nu, &ulens)?;
        let cnt16 = |v: &[u16], i: usize| v.get(i).copied().unwrap_or(0) as usize;
        // transform keys
        let nt = check_sum(
            "transform_keys",
            "units.transform_count",
            (0..nu).map(|i| cnt16(&u.transform_count, i)),
            &[
                ("time", t.time.len()),
                ("x", t.x.len()),
                ("y", t.y.len()),
                ("z", t.z.len()),
                ("rot_dropped", t.rot_dropped.len()),
                ("rot_a", t.rot_a.len()),
                ("rot_b", t.rot_b.len()),
                ("rot_c", t.rot_c.len()),
            ],
        )?;
        let ns_total = check_sum(
            "status_keys",
            "units.status_count",
            (0..nu).map(|i| cnt16(&u.status_count, i)),
            &[
                ("time", s.time.len()),
                ("health", s.health.len()),
                ("build", s.build.len()),
                ("flags", s.flags.len()),
            ],
        )?;
        let ng = check_sum(
            "target_tracks",
            "units.target_track_count",
            (0..nu).map(|i| u.target_track_count.get(i).copied().unwrap_or(0) as usize),
            &[("weapon", g.weapon.len()), ("key_count", g.key_count.len())],
        )?;
        let ngk = check_sum(
            "target_tracks",
            "target_tracks.key_count",
            (0..ng).map(|i| cnt16(&g.key_count, i)),
            &[
                ("time", g.time.len()),
                ("kind", g.kind.len()),
                ("reference", g.reference.len()),
                ("power", g.power.len()),
            ],
        )?;
        let np = check_sum(
            "pose_tracks",
            "units.pose_track_count",
            (0..nu).map(|i| cnt16(&u.pose_track_count, i)),
            &[("piece", p.piece.len()), ("key_count", p.key_count.len())],
        )?;
        let npk = check_sum(
            "pose_tracks",
            "pose_tracks.key_count",
            (0..np).map(|i| cnt16(&p.key_count, i)),
            &[
                ("time", p.time.len()),
                ("ax", p.ax.len()),
                ("ay", p.ay.len()),
                ("az", p.az.len()),
                ("ox", p.ox.len()),
                ("oy", p.oy.len()),
                ("oz", p.oz.len()),
            ],
        )?;
        let nq = check_sum(
            "build_queue",
            "units.queue_count",
            (0..nu).map(|i| cnt16(&u.queue_count, i)),
            &[("time", q.time.len()), ("item_count", q.item_count.len())],
        )?;
        let nqi = check_sum(
            "build_queue",
            "build_queue.item_count",
            (0..nq).map(|i| q.item_count.get(i).copied().unwrap_or(0) as usize),
            &[
                ("def", q.def.len()),
                ("x", q.x.len()),
                ("z", q.z.len()),
                ("facing", q.facing.len()),
            ],
        )?;
        let jlens = [
            ("serial", j.serial.len()),
            ("weapon", j.weapon.len()),
            ("team", j.team.len()),
            ("flags", j.flags.len()),
            ("owner", j.owner.len()),
            ("first", j.first.len()),
            ("last", j.last.len()),
            ("key_count", j.key_count.len()),
        ];
        let nj = jlens.iter().map(|l| l.1).max().unwrap_or(0);
        check_lens("projectiles", nj, &jlens)?;
        let njk = check_sum(
            "projectiles",
            "projectiles.key_count",
            (0..nj).map(|i| cnt16(&j.key_count, i)),
            &[
                ("time", j.time.len()),
                ("x", j.x.len()),
                ("y", j.y.len()),
                ("z", j.z.len()),
                ("vx", j.vx.len()),
                ("vy", j.vy.len()),
                ("vz", j.vz.len()),
            ],
        )?;
        let nlens = [
            ("team", nc.team.len()),
            ("code", nc.code.len()),
            ("key_count", nc.key_count.len()),
        ];
        let nn = nlens.iter().map(|l| l.1).max().unwrap_or(0);
        check_lens("team_numbers", nn, &nlens)?;
        let nnk = check_sum(
            "team_numbers",
            "team_numbers.key_count",
            (0..nn).map(|i| cnt16(&nc.key_count, i)),
            &[("time", nc.time.len()), ("value", nc.value.len())],
        )?;

        // Spec rules that also keep memory in step with the stored bytes: every unit has at
        // least one transform key and one status key, every track and projectile at least one
        // key, and keys and items have their time (or definition) column.
        let need = |ok: bool,
                    set: &'static str,
                    col: &'static str,
                    msg: &str|
         -> Result<(), DecodeError> {
            if ok {
                Ok(())
            } else {
                Err(semantic(
                    fpath(&[PathSeg::Field(set), PathSeg::Field(col)]),
                    0,
                    msg.to_owned(),
                ))
            }
        };
        for i in 0..nu {
            if cnt16(&u.transform_count, i) == 0 {
                need(
                    false,
                    "units",
                    "transform_count",
                    &format!("unit {i} has no transform key (every unit has at least one)"),
                )?;
            }
            if cnt16(&u.status_count, i) == 0 {
                need(
                    false,
                    "units",
                    "status_count",
                    &format!("unit {i} has no status key (every unit has at least one)"),
                )?;
            }
        }
        for i in 0..ng {
            if cnt16(&g.key_count, i) == 0 {
                need(
                    false,
                    "target_tracks",
                    "key_count",
                    &format!("target track {i} has no key"),
                )?;
            }
        }
        for i in 0..np {
            if cnt16(&p.key_count, i) == 0 {
                need(
                    false,
                    "pose_tracks",
                    "key_count",
                    &format!("pose track {i} has no key"),
                )?;
            }
        }
        for i in 0..nj {
            if cnt16(&j.key_count, i) == 0 {
                need(
                    false,
                    "projectiles",
                    "key_count",
                    &format!("projectile {i} has no key"),
                )?;
            }
        }
        for i in 0..nn {
            if cnt16(&nc.key_count, i) == 0 {
                need(
                    false,
                    "team_numbers",
                    "key_count",
                    &format!("team number track {i} has no key"),
                )?;
            }
        }
        need(
            nt == 0 || t.time.len() == nt,
            "transform_keys",
            "time",
            "keys without their time column",
        )?;
        need(
            ns_total == 0 || s.time.len() == ns_total,
            "status_keys",
            "time",
            "keys without their time column",
        )?;
        need(
            ngk == 0 || g.time.len() == ngk,
            "target_tracks",
            "time",
            "keys without their time column",
        )?;
        need(
            npk == 0 || p.time.len() == npk,
            "pose_tracks",
            "time",
            "keys without their time column",
        )?;
        need(
            nq == 0 || q.time.len() == nq,
            "build_queue",
            "time",
            "keys without their time column",
        )?;
        need(
            nqi == 0 || q.def.len() == nqi,
            "build_queue",
            "def",
            "items without their definition column",
        )?;
        need(
            njk == 0 || j.time.len() == njk,
            "projectiles",
            "time",
            "keys without their time column",
        )?;
        need(
            nnk == 0 || nc.time.len() == nnk,
            "team_numbers",
            "time",
            "keys without their time column",
        )?;

        if let Mode::Visit(f) = mode {
            f(WindowPart::Counts {
                units: nu,
                projectiles: nj,
                teams: nn,
            });
        }
        let mut tpos = Escape3::new([&t.x, &t.y, &t.z], [&t.x_wide, &t.y_wide, &t.z_wide]);
        let mut pang = Escape3::new([&p.ax, &p.ay, &p.az], [&p.ax_wide, &p.ay_wide, &p.az_wide]);
        let mut poff = Escape3::new([&p.ox, &p.oy, &p.oz], [&p.ox_wide, &p.oy_wide, &p.oz_wide]);
        let mut v3 = [Vec::new(), Vec::new(), Vec::new()];
        let mut w3 = [Vec::new(), Vec::new(), Vec::new()];
        let mut r3 = [Vec::new(), Vec::new(), Vec::new()];
        let (mut ti, mut si, mut gi, mut gki, mut gpi, mut pi, mut pki, mut qi, mut qii) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0);
        let mut units = Vec::with_capacity(if keep { nu } else { 0 });
        for i in 0..nu {
            let k = cnt16(&u.transform_count, i);
            tpos.curve(k, "transform_keys", &mut v3)?;
            wrap3([&t.rot_a, &t.rot_b, &t.rot_c], ti, k, &mut r3);
            let tt = times(&t.time, ti, k);
            let transforms = (0..k)
                .map(|x| TransformKey {
                    offset: tt[x],
                    pos: [v3[0][x], v3[1][x], v3[2][x]],
                    rot_dropped: at_or(&t.rot_dropped, ti + x),
                    rot: [r3[0][x] as i16, r3[1][x] as i16, r3[2][x] as i16],
                })
                .collect();
            ti += k;
            let k = cnt16(&u.status_count, i);
            let st = times(&s.time, si, k);
            let mut h = Vec::new();
            let mut b = Vec::new();
            if s.health.is_empty() {
                h = vec![0; k];
            } else {
                wrap_decode(&s.health[si..si + k], &mut h);
            }
            if s.build.is_empty() {
                b = vec![0; k];
            } else {
                wrap_decode(&s.build[si..si + k], &mut b);
            }
            let status = (0..k)
                .map(|x| StatusKey {
                    offset: st[x],
                    health: h[x],
                    build: b[x],
                    flags: at_or(&s.flags, si + x),
                })
                .collect();
            si += k;
            let k = u.target_track_count.get(i).copied().unwrap_or(0) as usize;
            let mut targets = Vec::with_capacity(if build { k } else { 0 });
            for _ in 0..k {
                let kk = cnt16(&g.key_count, gi);
                let tt = times(&g.time, gki, kk);
                let mut keys = Vec::with_capacity(kk);
                for x in 0..kk {
                    let kind = at_or(&g.kind, gki + x);
                    let pos = if kind >= 128 {
                        if gpi >= g.x.len().max(g.y.len()).max(g.z.len()) {
                            return Err(semantic(
                                fpath(&[PathSeg::Field("target_tracks"), PathSeg::Field("x")]),
                                0,
                                "a position target has no entry in columns 46 to 48",
                            ));
                        }
                        let v = [at_or(&g.x, gpi), at_or(&g.y, gpi), at_or(&g.z, gpi)];
                        gpi += 1;
                        Some(v)
                    } else {
                        None
                    };
                    keys.push(TargetKey {
                        offset: tt[x],
                        kind,
                        reference: at_or(&g.reference, gki + x),
                        power: at_or(&g.power, gki + x),
                        pos,
                    });
                }
                if build {
                    targets.push(TargetTrack {
                        weapon: at_or(&g.weapon, gi),
                        keys,
                    });
                }
                gi += 1;
                gki += kk;
            }
            let k = cnt16(&u.pose_track_count, i);
            let mut poses = Vec::with_capacity(if build { k } else { 0 });
            for _ in 0..k {
                let kk = cnt16(&p.key_count, pi);
                pang.curve(kk, "pose_tracks", &mut v3)?;
                poff.curve(kk, "pose_tracks", &mut w3)?;
                let tt = times(&p.time, pki, kk);
                pi += 1;
                pki += kk;
                if !build {
                    continue;
                }
                poses.push(PoseTrack {
                    piece: at_or(&p.piece, pi - 1),
                    keys: (0..kk)
                        .map(|x| PoseKey {
                            offset: tt[x],
                            angles: [v3[0][x], v3[1][x], v3[2][x]],
                            offsets: [w3[0][x], w3[1][x], w3[2][x]],
                        })
                        .collect(),
                });
            }
            let k = cnt16(&u.queue_count, i);
            let qt = times(&q.time, qi, k);
            let mut queue = Vec::with_capacity(if build { k } else { 0 });
            for (x, &off) in qt.iter().enumerate() {
                let m = q.item_count.get(qi + x).copied().unwrap_or(0) as usize;
                if !build {
                    qii += m;
                    continue;
                }
                let items = (0..m)
                    .map(|y| QueueItem {
                        def: at_or(&q.def, qii + y),
                        x: at_or(&q.x, qii + y),
                        z: at_or(&q.z, qii + y),
                        facing: at_or(&q.facing, qii + y),
                    })
                    .collect();
                qii += m;
                queue.push(QueueKey { offset: off, items });
            }
            qi += k;
            if !build {
                continue;
            }
            let unit = Unit {
                unit_id: at_or(&u.unit_id, i),
                serial: at_or(&u.serial, i),
                def: at_or(&u.def, i),
                team: at_or(&u.team, i),
                flags: at_or(&u.flags, i),
                first: at_or(&u.first, i),
                last: at_or(&u.last, i),
                transforms,
                status,
                targets,
                poses,
                queue,
            };
            match mode {
                Mode::Visit(f) => f(WindowPart::Unit(&unit)),
                _ => units.push(unit),
            }
        }
        let mut ppos = Escape3::new([&j.x, &j.y, &j.z], [&j.x_wide, &j.y_wide, &j.z_wide]);
        let mut pvel = Escape3::new([&j.vx, &j.vy, &j.vz], [&j.vx_wide, &j.vy_wide, &j.vz_wide]);
        let mut ji = 0;
        let mut projectiles = Vec::with_capacity(if keep { nj } else { 0 });
        for i in 0..nj {
            let k = cnt16(&j.key_count, i);
            ppos.curve(k, "projectiles", &mut v3)?;
            pvel.curve(k, "projectiles", &mut w3)?;
            let tt = times(&j.time, ji, k);
            ji += k;
            if !build {
                continue;
            }
            let projectile = Projectile {
                serial: at_or(&j.serial, i),
                weapon: at_or(&j.weapon, i),
                team: at_or(&j.team, i),
                flags: at_or(&j.flags, i),
                owner: at_or(&j.owner, i),
                first: at_or(&j.first, i),
                last: at_or(&j.last, i),
                keys: (0..k)
                    .map(|x| ProjectileKey {
                        offset: tt[x],
                        pos: [v3[0][x], v3[1][x], v3[2][x]],
                        vel: [w3[0][x], w3[1][x], w3[2][x]],
                    })
                    .collect(),
            };
            match mode {
                Mode::Visit(f) => f(WindowPart::Projectile(&projectile)),
                _ => projectiles.push(projectile),
            }
        }
        let mut teams = Vec::with_capacity(if keep { nn } else { 0 });
        let mut ki = 0;
        for i in 0..nn {
            let k = cnt16(&nc.key_count, i);
            if !build {
                ki += k;
                continue;
            }
            let tt = times(&nc.time, ki, k);
            let track = TeamTrack {
                team: at_or(&nc.team, i),
                code: at_or(&nc.code, i),
                keys: (0..k).map(|x| (tt[x], at_or(&nc.value, ki + x))).collect(),
            };
            ki += k;
            match mode {
                Mode::Visit(f) => f(WindowPart::Team(&track)),
                _ => teams.push(track),
            }
        }
        Ok(Self {
            index,
            start,
            end,
            units,
            projectiles,
            teams,
        })
    }

    /// Lays the window out as a main chunk body (not yet compressed), with the column codecs:
    /// first key of every escape curve escaped, wrapping differences from 0 per curve, times
    /// from the window start. Count columns whose value is 0 for every unit are left out.
    ///
    /// Errors: a value that does not fit its column (named), keys out of order, a count above
    /// its column's range, or a chunk over 16,777,215 bytes.
    pub fn to_chunk(&self) -> Result<Vec<u8>, EncodeError> {
        let mut b = cbtk_columns::ChunkBuilder::new();
        let cols = self.to_column_sets()?;
        cols.0.put(&mut b)?;
        cols.1.put(&mut b)?;
        cols.2.put(&mut b)?;
        cols.3.put(&mut b)?;
        cols.4.put(&mut b)?;
        cols.5.put(&mut b)?;
        cols.6.put(&mut b)?;
        cols.7.put(&mut b)?;
        build_chunk(b)
    }

    /// The window's column sets (units, transform, status, targets, poses, queues,
    /// projectiles, team numbers).
    ///
    /// Errors: as for [`MainWindow::to_chunk`].
    #[allow(clippy::type_complexity)]
    pub fn to_column_sets(
        &self,
    ) -> Result<
        (
            raw::UnitsColumns,
            raw::TransformKeysColumns,
            raw::StatusKeysColumns,
            raw::TargetTracksColumns,
            raw::PoseTracksColumns,
            raw::BuildQueueColumns,
            raw::ProjectilesColumns,
            raw::TeamNumbersColumns,
        ),
        EncodeError,
    > {
        use cbtk_columns::{time_encode, wrap_encode, EscapeEncoder};
        let fit16 = |v: usize, what: &str| -> Result<u16, EncodeError> {
            u16::try_from(v).map_err(|_| enc(format!("{what}: {v} does not fit u16")))
        };
        let codec = |e: cbtk_columns::CodecError, what: String| enc(format!("{what}: {e}"));
        let mut u = raw::UnitsColumns::default();
        let mut t = raw::TransformKeysColumns::default();
        let mut s = raw::StatusKeysColumns::default();
        let mut g = raw::TargetTracksColumns::default();
        let mut p = raw::PoseTracksColumns::default();
        let mut q = raw::BuildQueueColumns::default();
        let mut j = raw::ProjectilesColumns::default();
        let mut n = raw::TeamNumbersColumns::default();
        let (mut tx, mut ty, mut tz) = (
            EscapeEncoder::default(),
            EscapeEncoder::default(),
            EscapeEncoder::default(),
        );
        let mut pa = [
            EscapeEncoder::default(),
            EscapeEncoder::default(),
            EscapeEncoder::default(),
        ];
        let mut po = [
            EscapeEncoder::default(),
            EscapeEncoder::default(),
            EscapeEncoder::default(),
        ];
        let (mut any_g, mut any_p, mut any_q) = (false, false, false);
        for (ui, x) in self.units.iter().enumerate() {
            if x.serial > LUA_MAX {
                return Err(enc(format!(
                    "units[{ui}].serial {} is above 16,777,215",
                    x.serial
                )));
            }
            u.unit_id.push(x.unit_id);
            u.serial.push(x.serial);
            u.def.push(x.def);
            u.team.push(x.team);
            u.flags.push(x.flags);
            u.first.push(x.first);
            u.last.push(x.last);
            u.transform_count
                .push(fit16(x.transforms.len(), "transform keys")?);
            u.status_count.push(fit16(x.status.len(), "status keys")?);
            u.target_track_count.push(
                u8::try_from(x.targets.len()).map_err(|_| enc("more than 255 target tracks"))?,
            );
            u.pose_track_count
                .push(fit16(x.poses.len(), "pose tracks")?);
            u.queue_count.push(fit16(x.queue.len(), "queue keys")?);
            any_g |= !x.targets.is_empty();
            any_p |= !x.poses.is_empty();
            any_q |= !x.queue.is_empty();
            let fr: Vec<u32> = x.transforms.iter().map(|k| k.offset).collect();
            time_encode(&fr, 0, &mut t.time)
                .map_err(|e| codec(e, format!("units[{ui}].transforms")))?;
            for (enc3, ax) in [(&mut tx, 0), (&mut ty, 1), (&mut tz, 2)] {
                let v: Vec<i32> = x.transforms.iter().map(|k| k.pos[ax]).collect();
                enc3.curve(&v)
                    .map_err(|e| codec(e, format!("units[{ui}].transforms.pos")))?;
            }
            for k in &x.transforms {
                if k.rot_dropped > 3 {
                    return Err(enc(format!(
                        "units[{ui}]: dropped component {} is not 0..=3",
                        k.rot_dropped
                    )));
                }
                t.rot_dropped.push(k.rot_dropped);
            }
            for (col, ax) in [(&mut t.rot_a, 0), (&mut t.rot_b, 1), (&mut t.rot_c, 2)] {
                let v: Vec<u16> = x.transforms.iter().map(|k| k.rot[ax] as u16).collect();
                wrap_encode(&v, col);
            }
            let fr: Vec<u32> = x.status.iter().map(|k| k.offset).collect();
            time_encode(&fr, 0, &mut s.time)
                .map_err(|e| codec(e, format!("units[{ui}].status")))?;
            wrap_encode(
                &x.status.iter().map(|k| k.health).collect::<Vec<_>>(),
                &mut s.health,
            );
            wrap_encode(
                &x.status.iter().map(|k| k.build).collect::<Vec<_>>(),
                &mut s.build,
            );
            s.flags.extend(x.status.iter().map(|k| k.flags));
            for tr in &x.targets {
                g.weapon.push(tr.weapon);
                g.key_count.push(fit16(tr.keys.len(), "target keys")?);
                let fr: Vec<u32> = tr.keys.iter().map(|k| k.offset).collect();
                time_encode(&fr, 0, &mut g.time)
                    .map_err(|e| codec(e, format!("units[{ui}].targets")))?;
                for k in &tr.keys {
                    if k.reference > LUA_MAX {
                        return Err(enc(format!(
                            "units[{ui}]: target reference {} above 16,777,215",
                            k.reference
                        )));
                    }
                    g.kind.push(k.kind);
                    g.reference.push(k.reference);
                    g.power.push(k.power);
                    match (k.kind >= 128, k.pos) {
                        (true, Some(pp)) => {
                            if pp.iter().any(|v| v.unsigned_abs() > LUA_MAX) {
                                return Err(enc(format!(
                                    "units[{ui}]: target position beyond 16,777,215 steps"
                                )));
                            }
                            g.x.push(pp[0]);
                            g.y.push(pp[1]);
                            g.z.push(pp[2]);
                        }
                        (true, None) => {
                            return Err(enc(format!(
                                "units[{ui}]: target kind {} needs a position",
                                k.kind
                            )))
                        }
                        (false, Some(_)) => {
                            return Err(enc(format!(
                                "units[{ui}]: target kind {} has no position",
                                k.kind
                            )))
                        }
                        (false, None) => {}
                    }
                }
            }
            for tr in &x.poses {
                p.piece.push(tr.piece);
                p.key_count.push(fit16(tr.keys.len(), "pose keys")?);
                let fr: Vec<u32> = tr.keys.iter().map(|k| k.offset).collect();
                time_encode(&fr, 0, &mut p.time)
                    .map_err(|e| codec(e, format!("units[{ui}].poses")))?;
                for ax in 0..3 {
                    let v: Vec<i32> = tr.keys.iter().map(|k| k.angles[ax]).collect();
                    pa[ax]
                        .curve(&v)
                        .map_err(|e| codec(e, format!("units[{ui}].poses.angles")))?;
                    let v: Vec<i32> = tr.keys.iter().map(|k| k.offsets[ax]).collect();
                    po[ax]
                        .curve(&v)
                        .map_err(|e| codec(e, format!("units[{ui}].poses.offsets")))?;
                }
            }
            let fr: Vec<u32> = x.queue.iter().map(|k| k.offset).collect();
            time_encode(&fr, 0, &mut q.time).map_err(|e| codec(e, format!("units[{ui}].queue")))?;
            for k in &x.queue {
                q.item_count.push(
                    u8::try_from(k.items.len()).map_err(|_| enc("more than 255 queue items"))?,
                );
                for it in &k.items {
                    if it.x.unsigned_abs() > LUA_MAX || it.z.unsigned_abs() > LUA_MAX {
                        return Err(enc(format!(
                            "units[{ui}]: queue position beyond 16,777,215 steps"
                        )));
                    }
                    q.def.push(it.def);
                    q.x.push(it.x);
                    q.z.push(it.z);
                    q.facing.push(it.facing);
                }
            }
        }
        if !any_g {
            u.target_track_count.clear();
        }
        if !any_p {
            u.pose_track_count.clear();
        }
        if !any_q {
            u.queue_count.clear();
        }
        (t.x, t.x_wide) = (tx.narrow, tx.wide);
        (t.y, t.y_wide) = (ty.narrow, ty.wide);
        (t.z, t.z_wide) = (tz.narrow, tz.wide);
        let [a0, a1, a2] = pa;
        (p.ax, p.ax_wide, p.ay, p.ay_wide, p.az, p.az_wide) =
            (a0.narrow, a0.wide, a1.narrow, a1.wide, a2.narrow, a2.wide);
        let [o0, o1, o2] = po;
        (p.ox, p.ox_wide, p.oy, p.oy_wide, p.oz, p.oz_wide) =
            (o0.narrow, o0.wide, o1.narrow, o1.wide, o2.narrow, o2.wide);
        let mut jp = [
            EscapeEncoder::default(),
            EscapeEncoder::default(),
            EscapeEncoder::default(),
        ];
        let mut jv = [
            EscapeEncoder::default(),
            EscapeEncoder::default(),
            EscapeEncoder::default(),
        ];
        for (pi, x) in self.projectiles.iter().enumerate() {
            if x.serial > LUA_MAX {
                return Err(enc(format!(
                    "projectiles[{pi}].serial {} is above 16,777,215",
                    x.serial
                )));
            }
            j.serial.push(x.serial);
            j.weapon.push(x.weapon);
            j.team.push(x.team);
            j.flags.push(x.flags);
            j.owner.push(x.owner);
            j.first.push(x.first);
            j.last.push(x.last);
            j.key_count.push(fit16(x.keys.len(), "projectile keys")?);
            let fr: Vec<u32> = x.keys.iter().map(|k| k.offset).collect();
            time_encode(&fr, 0, &mut j.time).map_err(|e| codec(e, format!("projectiles[{pi}]")))?;
            for ax in 0..3 {
                let v: Vec<i32> = x.keys.iter().map(|k| k.pos[ax]).collect();
                jp[ax]
                    .curve(&v)
                    .map_err(|e| codec(e, format!("projectiles[{pi}].pos")))?;
                let v: Vec<i32> = x.keys.iter().map(|k| k.vel[ax]).collect();
                jv[ax]
                    .curve(&v)
                    .map_err(|e| codec(e, format!("projectiles[{pi}].vel")))?;
            }
        }
        let [a0, a1, a2] = jp;
        (j.x, j.x_wide, j.y, j.y_wide, j.z, j.z_wide) =
            (a0.narrow, a0.wide, a1.narrow, a1.wide, a2.narrow, a2.wide);
        let [o0, o1, o2] = jv;
        (j.vx, j.vx_wide, j.vy, j.vy_wide, j.vz, j.vz_wide) =
            (o0.narrow, o0.wide, o1.narrow, o1.wide, o2.narrow, o2.wide);
        let mut last: Option<(u8, u16)> = None;
        for (ti, x) in self.teams.iter().enumerate() {
            if last.is_some_and(|l| (x.team, x.code) <= l) {
                return Err(enc(format!(
                    "teams[{ti}]: tracks are not in rising order of team and code, each once"
                )));
            }
            last = Some((x.team, x.code));
            n.team.push(x.team);
            n.code.push(x.code);
            n.key_count.push(fit16(x.keys.len(), "team number keys")?);
            let fr: Vec<u32> = x.keys.iter().map(|k| k.0).collect();
            time_encode(&fr, 0, &mut n.time).map_err(|e| codec(e, format!("teams[{ti}]")))?;
            for k in &x.keys {
                if !k.1.is_finite() {
                    return Err(enc(format!("teams[{ti}]: value {} is not finite", k.1)));
                }
                n.value.push(k.1);
            }
        }
        Ok((u, t, s, g, p, q, j, n))
    }
}

impl TerrainRow {
    /// Reads a terrain chunk's rows; `start` is the window's first frame.
    ///
    /// Errors: columns that disagree in length.
    pub fn from_columns(c: &raw::TerrainRowsColumns, start: u32) -> Result<Vec<Self>, DecodeError> {
        Self::from_view(&TerrainRowsView::of(c), start)
    }

    /// The column lengths of a terrain chunk agree (all a check of the rows needs).
    pub(crate) fn check_view(c: &TerrainRowsView) -> Result<usize, DecodeError> {
        let lens = [
            ("time", c.time.len()),
            ("x", c.x.len()),
            ("z", c.z.len()),
            ("before", c.before.len()),
            ("change", c.change.len()),
        ];
        let n = lens.iter().map(|l| l.1).max().unwrap_or(0);
        check_lens("terrain_rows", n, &lens)?;
        Ok(n)
    }

    /// [`TerrainRow::from_columns`] from a view.
    pub(crate) fn from_view(c: &TerrainRowsView, start: u32) -> Result<Vec<Self>, DecodeError> {
        let mut rows = Vec::with_capacity(Self::check_view(c)?);
        Self::visit_view(c, start, |r| rows.push(*r))?;
        Ok(rows)
    }

    /// [`TerrainRow::from_view`] handing each row to `f` in stored order, keeping none;
    /// gives the number of rows.
    pub(crate) fn visit_view(
        c: &TerrainRowsView,
        start: u32,
        mut f: impl FnMut(&TerrainRow),
    ) -> Result<usize, DecodeError> {
        let n = Self::check_view(c)?;
        let (mut fr, mut x, mut z, mut h) = (start as u64, 0u16, 0u16, 0i64);
        for i in 0..n {
            fr += at_or(&c.time, i) as u64;
            x = x.wrapping_add(at_or(&c.x, i));
            z = z.wrapping_add(at_or(&c.z, i));
            h += at_or(&c.before, i) as i64;
            let before = h.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
            f(&TerrainRow {
                frame: fr.min(u32::MAX as u64) as u32,
                x,
                z,
                before,
                after: before.saturating_add(at_or(&c.change, i)),
            });
        }
        Ok(n)
    }

    /// A terrain chunk body from rows sorted by frame, z, x; `start` is the window's first
    /// frame.
    ///
    /// Errors: rows out of order or before `start`, a change of 0, a height or difference
    /// beyond 16,777,215, or a chunk over 16,777,215 bytes.
    pub fn to_chunk(rows: &[Self], start: u32) -> Result<Vec<u8>, EncodeError> {
        let mut c = raw::TerrainRowsColumns::default();
        let (mut f, mut x, mut z, mut h) = (start, 0u16, 0u16, 0i64);
        let mut prev: Option<(u32, u16, u16)> = None;
        for (i, r) in rows.iter().enumerate() {
            if r.frame < f || prev.is_some_and(|p| (r.frame, r.z, r.x) <= p) {
                return Err(enc(format!(
                    "terrain row {i}: rows are sorted by frame, z, x, one per point and frame"
                )));
            }
            prev = Some((r.frame, r.z, r.x));
            let dt = r.frame - f;
            let ch = r.after as i64 - r.before as i64;
            let dh = r.before as i64 - h;
            if dt > 65535
                || ch == 0
                || ch.unsigned_abs() > LUA_MAX as u64
                || dh.unsigned_abs() > LUA_MAX as u64
                || r.before.unsigned_abs() > LUA_MAX
                || r.after.unsigned_abs() > LUA_MAX
            {
                return Err(enc(format!("terrain row {i}: a value does not fit (time {dt}, change {ch}, height difference {dh})")));
            }
            c.time.push(dt as u16);
            c.x.push(r.x.wrapping_sub(x));
            c.z.push(r.z.wrapping_sub(z));
            c.before.push(dh as i32);
            c.change.push(ch as i32);
            f = r.frame;
            x = r.x;
            z = r.z;
            h = r.before as i64;
        }
        let mut b = cbtk_columns::ChunkBuilder::new();
        c.put(&mut b)?;
        build_chunk(b)
    }
}
