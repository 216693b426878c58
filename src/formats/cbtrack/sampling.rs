//! Sampling: a frame's state from one window, and the player that seeks across windows.

use super::*;

/// A unit's state at a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnitState {
    /// Serial number.
    pub serial: u32,
    /// The engine's unit id.
    pub unit_id: u16,
    /// Unit definition.
    pub def: u16,
    /// Team.
    pub team: u8,
    /// Position in elmos.
    pub pos_elmos: [f64; 3],
    /// Rotation (x, y, z, w).
    pub rot: [f64; 4],
    /// Front direction.
    pub front: [f64; 3],
    /// Health as a fraction of the maximum (0..=1).
    pub health: f64,
    /// Build progress (0..=1).
    pub build: f64,
    /// Status flags; bit 0: switched on.
    pub flags: u8,
    /// The target of each target track.
    pub targets: Vec<TargetState>,
    /// The six values of each pose track.
    pub pieces: Vec<PieceState>,
    /// The build queue.
    pub queue: Vec<QueueItem>,
}

/// A target at a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetState {
    /// Weapon number from 1, 0 for builder work.
    pub weapon: u8,
    /// Kind; an unknown kind reads as 0 (nothing).
    pub kind: u8,
    /// Reference.
    pub reference: u32,
    /// Build power, 255 for full.
    pub power: u8,
    /// Position in elmos for kinds 128 and 129.
    pub pos_elmos: Option<[f64; 3]>,
}

/// A piece's six values at a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PieceState {
    /// Piece index.
    pub piece: u16,
    /// Angles about x, y, z in 65,536ths of a turn (not reduced to one turn).
    pub angles: [f64; 3],
    /// Offsets from the rest position in elmos.
    pub offsets_elmos: [f64; 3],
}

/// A projectile's state at a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectileState {
    /// Serial number.
    pub serial: u32,
    /// Weapon definition, 65,535 for none.
    pub weapon: u16,
    /// Team, 255 for none.
    pub team: u8,
    /// Firing unit's index in the window, 65,535 for none.
    pub owner: u16,
    /// Position in elmos.
    pub pos_elmos: [f64; 3],
    /// Velocity in elmos per frame (the cubic's slope).
    pub vel_elmos_per_frame: [f64; 3],
}

/// A team number at a frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeamValue {
    /// Team id, 255 for the game's.
    pub team: u8,
    /// Code.
    pub code: u16,
    /// Value, or `None` for a rules parameter not set yet.
    pub value: Option<f64>,
}

/// Everything at one frame.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameState {
    /// The frame (may be between two frames).
    pub frame: f64,
    /// The window it was read from.
    pub window: usize,
    /// Units alive.
    pub units: Vec<UnitState>,
    /// Projectiles alive.
    pub projectiles: Vec<ProjectileState>,
    /// Team numbers with a track in the window.
    pub teams: Vec<TeamValue>,
    /// Features that exist (indices into the features chunk).
    pub features: Vec<usize>,
    /// Heightmap points the track has changed so far, with their height in elmos.
    pub terrain: Vec<(u16, u16, f64)>,
}

/// The keys either side of `t` in `offsets` (sorted): `(i, j, s)` with `s` the fraction from
/// key i to key j; `i == j` before the first key, after the last, or on a key.
pub fn bracket(offsets: impl Fn(usize) -> u32, n: usize, t: f64) -> (usize, usize, f64) {
    if n == 0 {
        return (0, 0, 0.0);
    }
    // first key with offset > t
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if offsets(mid) as f64 <= t {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if lo == 0 {
        return (0, 0, 0.0);
    }
    if lo == n {
        return (n - 1, n - 1, 0.0);
    }
    let (a, b) = (offsets(lo - 1) as f64, offsets(lo) as f64);
    if t <= a || b <= a {
        return (lo - 1, lo - 1, 0.0);
    }
    (lo - 1, lo, (t - a) / (b - a))
}

use statepack_codecs::quant::lerp;

fn step_before(offsets: impl Fn(usize) -> u32, n: usize, t: f64) -> Option<usize> {
    let (i, _, _) = bracket(&offsets, n, t);
    if n == 0 {
        None
    } else {
        Some(i)
    }
}

/// Rotation of a transform key.
pub fn key_rotation(k: &TransformKey, bits: u8) -> DQuat {
    smallest3::decode(k.rot_dropped, k.rot.map(|v| v as i32), bits)
}

impl Unit {
    /// Whether the unit exists at offset `t` (first <= t <= last).
    pub fn exists_at(&self, t: f64) -> bool {
        self.first as f64 <= t && t <= self.last as f64
    }

    /// Position (position steps) and rotation at offset `t`.
    pub fn transform_at(&self, t: f64, bits: u8) -> (DVec3, DQuat) {
        let k = &self.transforms;
        if k.is_empty() {
            return (DVec3::ZERO, DQuat::IDENTITY);
        }
        let (i, j, s) = bracket(|x| k[x].offset, k.len(), t);
        let pa = DVec3::from(k[i].pos.map(|v| v as f64));
        let pb = DVec3::from(k[j].pos.map(|v| v as f64));
        let qa = key_rotation(&k[i], bits);
        let qb = key_rotation(&k[j], bits);
        (pa + (pb - pa) * s, nlerp_d(qa, qb, s))
    }

    /// Health and build progress (65,535ths) and flags at offset `t`.
    pub fn status_at(&self, t: f64) -> (f64, f64, u8) {
        let k = &self.status;
        if k.is_empty() {
            return (0.0, 0.0, 0);
        }
        let (i, j, s) = bracket(|x| k[x].offset, k.len(), t);
        (
            lerp(k[i].health as f64, k[j].health as f64, s),
            lerp(k[i].build as f64, k[j].build as f64, s),
            k[i].flags,
        )
    }
}

impl PoseTrack {
    /// Angles (65,536ths of a turn) and offsets (position steps) at offset `t`.
    pub fn at(&self, t: f64) -> ([f64; 3], [f64; 3]) {
        let k = &self.keys;
        if k.is_empty() {
            return ([0.0; 3], [0.0; 3]);
        }
        let (i, j, s) = bracket(|x| k[x].offset, k.len(), t);
        (
            [0, 1, 2].map(|a| lerp(k[i].angles[a] as f64, k[j].angles[a] as f64, s)),
            [0, 1, 2].map(|a| lerp(k[i].offsets[a] as f64, k[j].offsets[a] as f64, s)),
        )
    }
}

impl Projectile {
    /// Whether the projectile exists at offset `t`.
    pub fn exists_at(&self, t: f64) -> bool {
        self.first as f64 <= t && t <= self.last as f64
    }

    /// Position (elmos) and velocity (elmos per frame) at offset `t` on the cubic.
    pub fn at(&self, t: f64, pos_step: f64, vel_step: f64) -> (DVec3, DVec3) {
        let k = &self.keys;
        if k.is_empty() {
            return (DVec3::ZERO, DVec3::ZERO);
        }
        let (i, j, s) = bracket(|x| k[x].offset, k.len(), t);
        let p = |x: usize| DVec3::from(k[x].pos.map(|v| v as f64)) * pos_step;
        let v = |x: usize| DVec3::from(k[x].vel.map(|v| v as f64)) * vel_step;
        if i == j {
            return (p(i), v(i));
        }
        let n = (k[j].offset - k[i].offset) as f64;
        (
            hermite(p(i), v(i), p(j), v(j), n, s),
            hermite_velocity(p(i), v(i), p(j), v(j), n, s),
        )
    }
}

impl TeamTrack {
    /// Value at offset `t`: linear between keys, held before the first key and after the
    /// last, except that a rules parameter (code 256 and up) is not set before its first key.
    pub fn at(&self, t: f64) -> Option<f64> {
        let k = &self.keys;
        if k.is_empty() || (self.code >= RULES_PARAM_BASE && t < k[0].0 as f64) {
            return None;
        }
        let (i, j, s) = bracket(|x| k[x].0, k.len(), t);
        Some(lerp(k[i].1 as f64, k[j].1 as f64, s))
    }
}

impl MainWindow {
    /// Which row of the window's `transform_keys` column set gave the transform of the unit
    /// with serial `serial` at absolute `frame`: the unit's last key at or before the frame
    /// (its first key before it), counted over the whole set (units are stored one after
    /// another, each with `transform_count` rows). `None` when the unit is not in this
    /// window or has no transform key.
    pub fn transform_row(&self, serial: u32, frame: f64) -> Option<usize> {
        let t = frame - self.start as f64;
        let at = self.units.iter().position(|u| u.serial == serial)?;
        let u = &self.units[at];
        if u.transforms.is_empty() {
            return None;
        }
        let (i, _, _) = bracket(|x| u.transforms[x].offset, u.transforms.len(), t);
        let before: usize = self.units[..at].iter().map(|u| u.transforms.len()).sum();
        Some(before + i)
    }
}

impl Unit {
    /// The unit's state at `t` frames from its window's first frame (it must exist then):
    /// transform, status, targets, pieces and build queue, positions in elmos.
    pub fn state_at(&self, h: &Header, t: f64) -> UnitState {
        let u = self;
        let ps = h.pos_step();
        let (p, q) = u.transform_at(t, h.rotation_bits);
        let (hp, bp, flags) = u.status_at(t);
        let targets = u
            .targets
            .iter()
            .filter_map(|tr| {
                let i = step_before(|x| tr.keys[x].offset, tr.keys.len(), t)?;
                let k = tr.keys[i];
                if (k.offset as f64) > t {
                    return None;
                }
                let known = matches!(k.kind, 0 | 1 | 2 | 4 | 16..=20 | 128 | 129);
                Some(TargetState {
                    weapon: tr.weapon,
                    kind: if known { k.kind } else { 0 },
                    reference: if known { k.reference } else { 0 },
                    power: k.power,
                    pos_elmos: if known {
                        k.pos.map(|p| p.map(|v| v as f64 * ps))
                    } else {
                        None
                    },
                })
            })
            .collect();
        let pieces = u
            .poses
            .iter()
            .map(|tr| {
                let (a, o) = tr.at(t);
                PieceState {
                    piece: tr.piece,
                    angles: a,
                    offsets_elmos: o.map(|v| v * ps),
                }
            })
            .collect();
        let queue = step_before(|x| u.queue[x].offset, u.queue.len(), t)
            .filter(|&i| u.queue[i].offset as f64 <= t)
            .map(|i| u.queue[i].items.clone())
            .unwrap_or_default();
        let front = smallest3::front(q);
        UnitState {
            serial: u.serial,
            unit_id: u.unit_id,
            def: u.def,
            team: u.team,
            pos_elmos: (p * ps).to_array(),
            rot: [q.x, q.y, q.z, q.w],
            front: front.to_array(),
            health: hp / 65535.0,
            build: bp / 65535.0,
            flags,
            targets,
            pieces,
            queue,
        }
    }
}

impl Projectile {
    /// The projectile's state at `t` frames from its window's first frame (it must exist
    /// then): position and velocity in elmos and elmos per frame.
    pub fn state_at(&self, h: &Header, t: f64) -> ProjectileState {
        let p = self;
        let (ps, vs) = (h.pos_step(), h.vel_step());
        let (pos, vel) = p.at(t, ps, vs);
        ProjectileState {
            serial: p.serial,
            weapon: p.weapon,
            team: p.team,
            owner: p.owner,
            pos_elmos: pos.to_array(),
            vel_elmos_per_frame: vel.to_array(),
        }
    }
}

impl TeamTrack {
    /// The track's value at `t` frames from its window's first frame.
    pub fn value_at(&self, t: f64) -> TeamValue {
        TeamValue {
            team: self.team,
            code: self.code,
            value: self.at(t),
        }
    }
}

impl MainWindow {
    /// [`MainWindow::sample`] handed to `f` one item at a time, in the order of
    /// [`WindowChunk::sample_each`].
    pub fn sample_each(&self, h: &Header, frame: f64, mut f: impl FnMut(FramePart<'_>)) {
        let t = frame - self.start as f64;
        for u in self.units.iter().filter(|u| u.exists_at(t)) {
            f(FramePart::Unit(&u.state_at(h, t)));
        }
        for p in self.projectiles.iter().filter(|p| p.exists_at(t)) {
            f(FramePart::Projectile(&p.state_at(h, t)));
        }
        for n in &self.teams {
            f(FramePart::Team(&n.value_at(t)));
        }
    }

    /// The state at absolute `frame` (which must be in this window) from this window alone.
    /// Terrain and features are left empty (see [`Player`]).
    pub fn sample(&self, h: &Header, frame: f64) -> FrameState {
        let t = frame - self.start as f64;
        FrameState {
            frame,
            window: self.index,
            units: self
                .units
                .iter()
                .filter(|u| u.exists_at(t))
                .map(|u| u.state_at(h, t))
                .collect(),
            projectiles: self
                .projectiles
                .iter()
                .filter(|p| p.exists_at(t))
                .map(|p| p.state_at(h, t))
                .collect(),
            teams: self.teams.iter().map(|tr| tr.value_at(t)).collect(),
            features: Vec::new(),
            terrain: Vec::new(),
        }
    }
}

/// Counts of chunks a [`Player`] has inflated, for checking that a seek reads only what it
/// needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkReads {
    /// Main chunks inflated.
    pub main: usize,
    /// Terrain chunks inflated.
    pub terrain: usize,
}

/// Plays a track: samples any frame, keeps the window it last read, and moves terrain
/// forward or backward from the frame last shown.
///
/// Memory: the last window's inflated main chunk ([`WindowChunk`], at most
/// [`MAX_CHUNK_RATIO`] bytes per stored byte; with it the window decoded
/// ([`WindowChunk::decode`]) when that, the chunk and the features chunk take at most 64
/// bytes per input byte ([`WindowChunk::decoded_size`]), so frames of a window are sampled
/// without decoding it again; otherwise each frame decodes the window's entries one at a time), the features chunk's inflated bytes (its first
/// and last frame columns are read where they lie on each sample), and the height of every heightmap point the track
/// has changed up to the frame shown. [`Player::sample_each`] hands a frame's state over one
/// item at a time; [`Player::sample`] collects it.
#[derive(Debug)]
pub struct Player<'a> {
    track: Track<'a>,
    header: Header,
    features: Vec<u8>,
    window: Option<WindowChunk>,
    /// The loaded window decoded, when that, its chunk and the features chunk take at most
    /// 64 bytes per input byte.
    decoded: Option<MainWindow>,
    shown: f64,
    heights: std::collections::BTreeMap<(u16, u16), (i32, u64)>,
    moves: u64,
    started: bool,
    /// Chunks inflated so far.
    pub reads: ChunkReads,
}

impl<'a> Player<'a> {
    /// Opens a track (header, index, features chunk); the current frame is the first frame,
    /// with no terrain row applied.
    ///
    /// Errors: the header, index or features chunk is bad.
    pub fn new(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let track = Track::open(bytes)?;
        let header = track.header();
        let features = track.features_bytes()?;
        read_features_of(&features, 0, None)?;
        Ok(Self {
            shown: header.first_frame as f64,
            track,
            header,
            features,
            window: None,
            decoded: None,
            heights: Default::default(),
            moves: 0,
            started: false,
            reads: ChunkReads::default(),
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The window whose main chunk [`Player::sample_each`] (or [`Player::sample`]) read last,
    /// if any.
    pub fn loaded_window(&self) -> Option<&WindowChunk> {
        self.window.as_ref()
    }

    /// The opened track.
    pub fn track(&self) -> &Track<'a> {
        &self.track
    }

    /// Applies terrain rows to move from the frame shown to `frame`: forward sets each row's
    /// point to its height after, for rows after the shown frame up to `frame`, in order;
    /// backward sets heights before, in reverse order (so each point takes the height before
    /// its first row moved: rows are read forward, one at a time, and a point already set in
    /// this move keeps its value). Rows at the track's first frame count as applied from the
    /// start (window 0 holds them, and they are in place at the first frame).
    fn move_terrain(&mut self, frame: f64) -> Result<(), DecodeError> {
        let a = self.shown;
        let b = frame;
        if a == b {
            return Ok(());
        }
        let first = self.header.first_frame as f64;
        let ka = self.track.window_of(a.max(first))?;
        let kb = self.track.window_of(b.max(first))?;
        let (lo, hi) = (ka.min(kb), ka.max(kb));
        // Rows with frame in (min, max] move; at the first frame rows are in place.
        let (from, to) = (a.min(b), a.max(b));
        self.moves += 1;
        let (mv, forward) = (self.moves, b > a);
        for k in lo..=hi {
            if self.track.raw.index[k].terrain_len == 0 {
                continue;
            }
            let heights = &mut self.heights;
            self.track.visit_terrain(k, |r| {
                let f = r.frame as f64;
                if !(f > from && f <= to) {
                    return;
                }
                if forward {
                    heights.insert((r.x, r.z), (r.after, mv));
                } else {
                    let e = heights.entry((r.x, r.z)).or_insert((r.before, mv));
                    if e.1 != mv {
                        *e = (r.before, mv);
                    }
                }
            })?;
            self.reads.terrain += 1;
        }
        self.shown = frame;
        Ok(())
    }

    /// The full state at `frame`, handed to `f` one item at a time ([`FramePart`]): every
    /// unit alive, projectile alive and team number of the frame's window
    /// ([`WindowChunk::sample_each`]), then every feature that exists, then every heightmap
    /// point changed so far with its height. Reads the frame's window's main chunk if it is
    /// not the one loaded, and the terrain chunks between the frame last shown and this one.
    /// Each state is dropped after its call: beyond what the player keeps, memory is one
    /// entry and its state.
    ///
    /// Errors: the frame is outside the track, or a chunk it needs is bad; after an error
    /// `f` may have seen part of the frame.
    pub fn sample_each(
        &mut self,
        frame: f64,
        mut f: impl FnMut(FramePart<'_>),
    ) -> Result<(), DecodeError> {
        let k = self.track.window_of(frame)?;
        if self.window.as_ref().map(|w| w.index()) != Some(k) {
            self.window = None;
            self.decoded = None;
            let w = self.track.window(k)?;
            self.reads.main += 1;
            // Decoded once when it fits, with what the player keeps, in 64 bytes per input
            // byte; otherwise each frame is decoded from the chunk.
            let budget = MAX_CHUNK_RATIO * self.track.bytes().len();
            let kept = w.bytes().len() + self.features.len();
            if kept.saturating_add(w.decoded_size()) <= budget {
                self.decoded = Some(w.decode()?);
            }
            self.window = Some(w);
        }
        if !self.started {
            self.started = true;
            // Rows on the first frame itself are in place at the first frame.
            if self
                .track
                .raw
                .index
                .first()
                .is_some_and(|e| e.terrain_len > 0)
            {
                let (first, heights) = (self.header.first_frame, &mut self.heights);
                self.track.visit_terrain(0, |r| {
                    if r.frame == first {
                        heights.insert((r.x, r.z), (r.after, 0));
                    }
                })?;
                self.reads.terrain += 1;
            }
        }
        self.move_terrain(frame)?;
        if let Some(d) = &self.decoded {
            d.sample_each(&self.header, frame, &mut f);
        } else if let Some(w) = &self.window {
            w.sample_each(&self.header, frame, &mut f)?;
        }
        let c = parse_chunk(&self.features).map_err(|e| e.in_field("features"))?;
        let v = FeaturesView::from_chunk(&c).map_err(|e| e.in_field("features"))?;
        // Both frame columns are there, one value per feature (checked at `new`).
        for (i, (&a, &b)) in v.first_frame.iter().zip(v.last_frame.iter()).enumerate() {
            if a as f64 <= frame && frame <= b as f64 {
                f(FramePart::Feature(i));
            }
        }
        let ps = self.header.pos_step();
        for (&(x, z), &(h, _)) in &self.heights {
            f(FramePart::Height(x, z, h as f64 * ps));
        }
        Ok(())
    }

    /// [`Player::sample_each`] collected into a [`FrameState`]. Allocates one state per unit
    /// and projectile alive, one index per feature and one entry per changed point (about
    /// 44 bytes per inflated byte of the window for the smallest units): for tracks one
    /// trusts, or use [`Player::sample_each`].
    ///
    /// Errors: as for [`Player::sample_each`].
    pub fn sample(&mut self, frame: f64) -> Result<FrameState, DecodeError> {
        let mut st = FrameState {
            frame,
            window: 0,
            units: Vec::new(),
            projectiles: Vec::new(),
            teams: Vec::new(),
            features: Vec::new(),
            terrain: Vec::new(),
        };
        self.sample_each(frame, |part| st.push(part))?;
        st.window = self.window.as_ref().map_or(0, |w| w.index());
        Ok(st)
    }
}
