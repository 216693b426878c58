//! A window's main chunk held as its inflated bytes, read one entry at a time.

use super::*;

/// One window's main chunk as [`Track::window`] hands it over: the chunk's inflated bytes,
/// checked once when it is made, read again on every call. Nothing per entry is kept, so its
/// memory is the inflated chunk: at most [`MAX_CHUNK_RATIO`] (64) bytes per stored byte.
///
/// Entries come one at a time and are dropped after the call that hands them over
/// ([`WindowChunk::visit`], [`WindowChunk::sample_each`]): memory is then the chunk and one
/// entry. [`WindowChunk::decode`] and [`WindowChunk::sample`] collect every entry or state
/// into owned values; they allocate per item returned (about 27 bytes per inflated byte
/// for the smallest units, 44 for their states), so they are for tracks one trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowChunk {
    index: usize,
    start: u32,
    end: u32,
    bytes: Vec<u8>,
}

/// One item of a frame's state, as [`WindowChunk::sample_each`] and
/// [`Player::sample_each`] hand it over, borrowed for the call.
#[derive(Debug, Clone, Copy)]
pub enum FramePart<'a> {
    /// A unit alive at the frame.
    Unit(&'a UnitState),
    /// A projectile alive at the frame.
    Projectile(&'a ProjectileState),
    /// A team number track's value.
    Team(&'a TeamValue),
    /// A feature that exists at the frame: its index in the features chunk
    /// ([`Player::sample_each`] only).
    Feature(usize),
    /// A heightmap point the track has changed so far: x, z and its height in elmos
    /// ([`Player::sample_each`] only; in order of x, then z).
    Height(u16, u16, f64),
}

impl WindowChunk {
    /// Takes the inflated main chunk of window `index`, spanning frames `start..=end`, and
    /// checks it as [`MainWindow::from_chunk`] reads it ([`MainWindow::check_chunk`]: one
    /// curve at a time, nothing kept).
    ///
    /// Errors: as for [`MainWindow::from_chunk`].
    pub fn new(bytes: Vec<u8>, index: usize, start: u32, end: u32) -> Result<Self, DecodeError> {
        MainWindow::check_chunk(&bytes, index, start, end)?;
        Ok(Self {
            index,
            start,
            end,
            bytes,
        })
    }

    /// Window number.
    pub fn index(&self) -> usize {
        self.index
    }

    /// First frame of the window.
    pub fn start(&self) -> u32 {
        self.start
    }

    /// Last frame of the window.
    pub fn end(&self) -> u32 {
        self.end
    }

    /// The inflated chunk (directory and columns).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Hands each entry to `f` as it is decoded ([`MainWindow::visit_chunk`]): first the
    /// counts, then every unit, projectile and team number track in stored order. Memory:
    /// the chunk and one entry.
    ///
    /// Errors: none for a chunk checked by [`WindowChunk::new`]; the decode errors of
    /// [`MainWindow::from_chunk`] otherwise.
    pub fn visit(&self, f: impl FnMut(WindowPart<'_>)) -> Result<(), DecodeError> {
        MainWindow::visit_chunk(&self.bytes, self.index, self.start, self.end, f)
    }

    /// Every entry decoded into an owned [`MainWindow`]. Allocates per entry and key (about
    /// 27 bytes per inflated byte at most): use [`WindowChunk::visit`] to read a track one
    /// does not trust within the chunk's own size.
    ///
    /// Errors: as for [`WindowChunk::visit`].
    pub fn decode(&self) -> Result<MainWindow, DecodeError> {
        MainWindow::from_chunk(&self.bytes, self.index, self.start, self.end)
    }

    /// The state at absolute `frame` (in this window) from this window alone, handed to `f`
    /// one item at a time: every unit alive ([`Unit::state_at`]), every projectile alive
    /// ([`Projectile::state_at`]), every team number ([`TeamTrack::value_at`]), in stored
    /// order. Each state is dropped after its call: memory is the chunk, one entry and its
    /// state. Features and terrain are not in a window (see [`Player::sample_each`]).
    ///
    /// Errors: as for [`WindowChunk::visit`].
    pub fn sample_each(
        &self,
        h: &Header,
        frame: f64,
        mut f: impl FnMut(FramePart<'_>),
    ) -> Result<(), DecodeError> {
        let t = frame - self.start as f64;
        self.visit(|part| match part {
            WindowPart::Counts { .. } => {}
            WindowPart::Unit(u) => {
                if u.exists_at(t) {
                    f(FramePart::Unit(&u.state_at(h, t)));
                }
            }
            WindowPart::Projectile(p) => {
                if p.exists_at(t) {
                    f(FramePart::Projectile(&p.state_at(h, t)));
                }
            }
            WindowPart::Team(n) => f(FramePart::Team(&n.value_at(t))),
        })
    }

    /// Which row of the window's `transform_keys` column set gave the transform of the unit
    /// with serial `serial` at absolute `frame`, as [`MainWindow::transform_row`] finds it,
    /// reading one unit at a time. `None` when the unit is not in this window, has no
    /// transform key, or the chunk does not decode.
    pub fn transform_row(&self, serial: u32, frame: f64) -> Option<usize> {
        let t = frame - self.start as f64;
        let (mut before, mut row) = (0usize, None);
        self.visit(|part| {
            let WindowPart::Unit(u) = part else { return };
            if row.is_none() && u.serial == serial && !u.transforms.is_empty() {
                let (i, _, _) = bracket(|x| u.transforms[x].offset, u.transforms.len(), t);
                row = Some(before + i);
            }
            before += u.transforms.len();
        })
        .ok()?;
        row
    }

    /// What [`WindowChunk::decode`] allocates, in bytes, found from the chunk's count columns
    /// without decoding it: every unit, key, track, item, projectile and team number track
    /// at its size in memory, and 32 bytes for each list the allocator keeps apart.
    pub fn decoded_size(&self) -> usize {
        use std::mem::size_of;
        let Ok(c) = parse_chunk(&self.bytes) else {
            return usize::MAX;
        };
        let (Ok(u), Ok(g), Ok(p), Ok(q), Ok(j), Ok(n)) = (
            UnitsView::from_chunk(&c),
            TargetTracksView::from_chunk(&c),
            PoseTracksView::from_chunk(&c),
            BuildQueueView::from_chunk(&c),
            ProjectilesView::from_chunk(&c),
            TeamNumbersView::from_chunk(&c),
        ) else {
            return usize::MAX;
        };
        let sum16 = |v: &[u16]| v.iter().map(|&x| x as usize).sum::<usize>();
        let sum8 = |v: &[u8]| v.iter().map(|&x| x as usize).sum::<usize>();
        let list = 32;
        let nu = u.transform_count.len().max(u.serial.len());
        let (ng, np, nq) = (
            sum8(&u.target_track_count),
            sum16(&u.pose_track_count),
            sum16(&u.queue_count),
        );
        let (nj, nn) = (j.key_count.len(), n.key_count.len());
        nu * (size_of::<Unit>() + 5 * list)
            + sum16(&u.transform_count) * size_of::<TransformKey>()
            + sum16(&u.status_count) * size_of::<StatusKey>()
            + ng * (size_of::<TargetTrack>() + list)
            + sum16(&g.key_count) * size_of::<TargetKey>()
            + np * (size_of::<PoseTrack>() + list)
            + sum16(&p.key_count) * size_of::<PoseKey>()
            + nq * (size_of::<QueueKey>() + list)
            + sum8(&q.item_count) * size_of::<QueueItem>()
            + nj * (size_of::<Projectile>() + list)
            + sum16(&j.key_count) * size_of::<ProjectileKey>()
            + nn * (size_of::<TeamTrack>() + list)
            + sum16(&n.key_count) * size_of::<(u32, f32)>()
            + 3 * list
    }

    /// [`WindowChunk::sample_each`] collected into a [`FrameState`] (the same as
    /// [`MainWindow::sample`] of [`WindowChunk::decode`]); features and terrain are left
    /// empty. Allocates one state per unit and projectile alive (about 44 bytes per
    /// inflated byte for the smallest units).
    ///
    /// Errors: as for [`WindowChunk::visit`].
    pub fn sample(&self, h: &Header, frame: f64) -> Result<FrameState, DecodeError> {
        let mut st = FrameState {
            frame,
            window: self.index,
            units: Vec::new(),
            projectiles: Vec::new(),
            teams: Vec::new(),
            features: Vec::new(),
            terrain: Vec::new(),
        };
        self.sample_each(h, frame, |part| st.push(part))?;
        Ok(st)
    }
}

impl FrameState {
    /// Adds one item of [`WindowChunk::sample_each`] or [`Player::sample_each`] to its list.
    pub fn push(&mut self, part: FramePart<'_>) {
        match part {
            FramePart::Unit(u) => self.units.push(u.clone()),
            FramePart::Projectile(p) => self.projectiles.push(p.clone()),
            FramePart::Team(n) => self.teams.push(n.clone()),
            FramePart::Feature(i) => self.features.push(i),
            FramePart::Height(x, z, h) => self.terrain.push((x, z, h)),
        }
    }
}
