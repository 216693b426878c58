//! CBTK v1 columnar replay tracks: the semantic API over the generated raw types.
//!
//! - [`Track`]: the header and the window index, read without touching a window; every chunk
//!   is found by block number x 64 and inflated on demand.
//! - [`MainWindow`] and its parts: one window's keys as the reader sees them, decoded from the
//!   generated column sets ([`raw::UnitsColumns`] and the others) with the column codecs of
//!   [`statepack_runtime::cbtk_columns`]; [`MainWindow::to_chunk`] lays them out again.
//! - [`MainWindow::sample`]: a frame's full state (units and projectiles alive, transform,
//!   status, targets, pose tracks, build queues, projectiles on their cubic, team numbers).
//! - [`Player`]: seeks across windows, moving terrain forward or backward and reading only
//!   the terrain chunks in between.
//! - [`writer`]: thinning writer from recorded samples, with the spec's writer rules.
//!
//! Layout: `schema/cbtrack_v1.ksy`. Decisions where the spec is silent: `docs/formats/cbtrack.md`.

use crate::generated::cbtrack_v1 as raw;
use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};
use statepack_runtime::cbtk_columns::{
    self, time_decode, wrap_decode, ColumnChunk, DirEntry, EscapeDecoder, LUA_MAX,
};
use statepack_runtime::curve::{hermite, hermite_velocity, nlerp_d};
use statepack_runtime::io::{
    ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, FieldPath,
    PathSeg,
};
use statepack_runtime::smallest3;

pub mod matchgen;
pub mod writer;

pub use raw::{CbtrackV1, WindowEntry};

/// The four bytes every CBTK file starts with.
pub const MAGIC: &[u8; 4] = b"CBTK";
/// The header size a version 1 writer uses.
pub const HEADER_SIZE: usize = 96;
/// Projectile weapon definition of a projectile that has none (debris).
pub const NO_WEAPON: u16 = 65535;
/// Owner index of a projectile whose unit is not in the window.
pub const NO_OWNER: u16 = 65535;
/// First code of a rules parameter among team numbers.
pub const RULES_PARAM_BASE: u16 = 256;

fn semantic(path: FieldPath, offset: u64, msg: impl Into<String>) -> DecodeError {
    DecodeError::at(path, offset, DecodeErrorKind::Semantic(msg.into()))
}

fn fpath(segs: &[PathSeg]) -> FieldPath {
    FieldPath::from_segments(segs.iter().cloned())
}

fn enc(msg: impl Into<String>) -> EncodeError {
    EncodeError::new(EncodeErrorKind::Semantic(msg.into()))
}

/// Which chunk of the file a chunk error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChunkKind {
    /// The info chunk.
    Info,
    /// The features chunk.
    Features,
    /// A window's main chunk.
    Main,
    /// A window's terrain chunk.
    Terrain,
}

/// An opened track: the raw header and index, and the bytes chunks are read from.
#[derive(Debug, Clone)]
pub struct Track<'a> {
    /// The raw layer (header fields, index, chunk area).
    pub raw: CbtrackV1,
    bytes: &'a [u8],
    chunk_area: usize,
}

impl<'a> Track<'a> {
    /// Reads the header and the index (no chunk is touched). The magic and the format version
    /// are checked by the raw layer and named with the value found; the index is found at the
    /// stated header size; the number of windows must follow from the frame span and the
    /// window length, and the last frame may not come before the first.
    ///
    /// Errors: [`DecodeError`] with the field path and byte offset.
    pub fn open(bytes: &'a [u8]) -> Result<Self, DecodeError> {
        let raw = CbtrackV1::decode(bytes)?;
        if raw.last_frame < raw.first_frame {
            return Err(semantic(
                fpath(&[PathSeg::Field("last_frame")]),
                16,
                format!(
                    "last frame {} is before the first frame {}",
                    raw.last_frame, raw.first_frame
                ),
            ));
        }
        let want = windows_for(raw.first_frame, raw.last_frame, raw.window_length);
        if raw.index.len() as u64 != want {
            return Err(semantic(
                fpath(&[PathSeg::Field("num_windows")]),
                24,
                format!(
                    "{} windows stated, the frame span {}..={} in windows of {} needs {want}",
                    raw.index.len(),
                    raw.first_frame,
                    raw.last_frame,
                    raw.window_length
                ),
            ));
        }
        if raw.position_shift > 24 || raw.velocity_shift > 24 {
            return Err(semantic(
                fpath(&[PathSeg::Field("position_shift")]),
                32,
                "a shift above 24 leaves no whole step a reader can hold",
            ));
        }
        let chunk_area = raw.header_size as usize + 16 * raw.index.len();
        check_chunk_ranges(&raw, chunk_area as u64, bytes.len() as u64)?;
        Ok(Self {
            raw,
            bytes,
            chunk_area,
        })
    }

    /// The header's values as a [`Header`].
    pub fn header(&self) -> Header {
        Header::from_raw(&self.raw)
    }

    /// Number of windows.
    pub fn num_windows(&self) -> usize {
        self.raw.index.len()
    }

    /// The compressed bytes of the chunk at `block` with `len` bytes, checked to lie in the
    /// chunk area. `field` names the header or index field in errors.
    fn chunk_bytes(
        &self,
        block: u32,
        len: u32,
        path: FieldPath,
        at: u64,
    ) -> Result<&'a [u8], DecodeError> {
        let start = block as u64 * 64;
        let end = start + len as u64;
        if start < self.chunk_area as u64 || end > self.bytes.len() as u64 {
            return Err(semantic(
                path,
                at,
                format!(
                    "chunk at block {block} ({start}..{end}) is outside the chunk area {}..{}",
                    self.chunk_area,
                    self.bytes.len()
                ),
            ));
        }
        Ok(&self.bytes[start as usize..end as usize])
    }

    /// Inflates a chunk and checks its directory. Offsets in errors are file offsets of the
    /// chunk's first byte (a chunk's own offsets are given in the message).
    fn inflate(
        &self,
        block: u32,
        len: u32,
        path: FieldPath,
        at: u64,
    ) -> Result<Vec<u8>, DecodeError> {
        let z = self.chunk_bytes(block, len, path.clone(), at)?;
        cbtk_columns::inflate(z, LUA_MAX as usize).map_err(|m| {
            semantic(
                path,
                block as u64 * 64,
                format!("chunk does not decompress: {m}"),
            )
        })
    }

    /// The decompressed bytes of the info chunk.
    ///
    /// Errors: the chunk is outside the file or does not decompress.
    pub fn info_bytes(&self) -> Result<Vec<u8>, DecodeError> {
        self.inflate(
            self.raw.info_block,
            self.raw.info_len,
            fpath(&[PathSeg::Field("info_block")]),
            36,
        )
    }

    /// The info chunk.
    ///
    /// Errors: the chunk is missing, outside the file, does not decompress, or breaks a rule.
    pub fn info(&self) -> Result<Info, DecodeError> {
        let b = self.info_bytes()?;
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "info"))?;
        Info::from_columns(&raw::InfoColumns::from_chunk(&c).map_err(|e| in_chunk(e, "info"))?)
            .map_err(|e| in_chunk(e, "info"))
    }

    /// The features chunk.
    ///
    /// Errors: as for [`Track::info`].
    pub fn features(&self) -> Result<Vec<Feature>, DecodeError> {
        let b = self.inflate(
            self.raw.features_block,
            self.raw.features_len,
            fpath(&[PathSeg::Field("features_block")]),
            44,
        )?;
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "features"))?;
        Feature::from_columns(
            &raw::FeaturesColumns::from_chunk(&c).map_err(|e| in_chunk(e, "features"))?,
        )
        .map_err(|e| in_chunk(e, "features"))
    }

    fn index_path(k: usize, field: &'static str) -> FieldPath {
        fpath(&[
            PathSeg::Field("index"),
            PathSeg::Index(k),
            PathSeg::Field(field),
        ])
    }

    fn index_at(&self, k: usize) -> u64 {
        (self.raw.header_size as usize + 16 * k) as u64
    }

    /// The decompressed main chunk of window `k`. A chunk that fails is an error for that
    /// window only.
    ///
    /// Errors: `k` out of range, the chunk outside the file, or not decompressing.
    pub fn main_bytes(&self, k: usize) -> Result<Vec<u8>, DecodeError> {
        let e = self.window_entry(k)?;
        self.inflate(
            e.main_block,
            e.main_len,
            Self::index_path(k, "main_block"),
            self.index_at(k),
        )
    }

    fn window_entry(&self, k: usize) -> Result<&WindowEntry, DecodeError> {
        self.raw.index.get(k).ok_or_else(|| {
            semantic(
                fpath(&[PathSeg::Field("index")]),
                self.index_at(k),
                format!("window {k} does not exist ({} windows)", self.num_windows()),
            )
        })
    }

    /// Window `k`'s main chunk, decoded.
    ///
    /// Errors: as for [`Track::main_bytes`], or a column rule broken.
    pub fn window(&self, k: usize) -> Result<MainWindow, DecodeError> {
        let b = self.main_bytes(k)?;
        let (start, end) = self.header().window_span(k);
        MainWindow::from_chunk(&b, k, start, end).map_err(|e| e.in_index(k).in_field("windows"))
    }

    /// Window `k`'s terrain rows (empty when the window has no terrain chunk). Frames in the
    /// rows are absolute.
    ///
    /// Errors: as for [`Track::window`].
    pub fn terrain(&self, k: usize) -> Result<Vec<TerrainRow>, DecodeError> {
        let e = self.window_entry(k)?;
        if e.terrain_len == 0 {
            return Ok(Vec::new());
        }
        let b = self.inflate(
            e.terrain_block,
            e.terrain_len,
            Self::index_path(k, "terrain_block"),
            self.index_at(k) + 8,
        )?;
        let (start, _) = self.header().window_span(k);
        let c = parse_chunk(&b).map_err(|e| in_chunk(e, "terrain"))?;
        let cols = raw::TerrainRowsColumns::from_chunk(&c).map_err(|e| in_chunk(e, "terrain"))?;
        TerrainRow::from_columns(&cols, start)
            .map_err(|e| in_chunk(e, "terrain").in_index(k).in_field("terrain"))
    }

    /// The window holding `frame` (the spec's step 1: `floor((f - first) / length)`, the last
    /// window when past the end).
    ///
    /// Errors: `frame` is before the first frame or after the last, or not finite.
    pub fn window_of(&self, frame: f64) -> Result<usize, DecodeError> {
        self.header().window_of(frame).ok_or_else(|| {
            semantic(
                fpath(&[PathSeg::Field("frame")]),
                0,
                format!(
                    "frame {frame} is outside the track's frames {}..={}",
                    self.raw.first_frame, self.raw.last_frame
                ),
            )
        })
    }
}

/// Every chunk lies in the chunk area and no two chunks share a byte: each is its own zlib
/// stream (so each stored byte is inflated once).
fn check_chunk_ranges(raw: &CbtrackV1, area: u64, len: u64) -> Result<(), DecodeError> {
    let mut r: Vec<(u64, u64, FieldPath, u64)> = Vec::with_capacity(2 + 2 * raw.index.len());
    r.push((
        raw.info_block as u64 * 64,
        raw.info_len as u64,
        fpath(&[PathSeg::Field("info_block")]),
        36,
    ));
    r.push((
        raw.features_block as u64 * 64,
        raw.features_len as u64,
        fpath(&[PathSeg::Field("features_block")]),
        44,
    ));
    for (k, e) in raw.index.iter().enumerate() {
        let at = raw.header_size as u64 + 16 * k as u64;
        r.push((
            e.main_block as u64 * 64,
            e.main_len as u64,
            Track::index_path(k, "main_block"),
            at,
        ));
        if e.terrain_len > 0 {
            r.push((
                e.terrain_block as u64 * 64,
                e.terrain_len as u64,
                Track::index_path(k, "terrain_block"),
                at + 8,
            ));
        }
    }
    for (start, n, path, at) in &r {
        if *start < area || start + n > len || *n == 0 {
            return Err(semantic(
                path.clone(),
                *at,
                format!(
                    "chunk {start}..{} is empty or outside the chunk area {area}..{len}",
                    start + n
                ),
            ));
        }
    }
    r.sort_by_key(|x| x.0);
    for w in r.windows(2) {
        if w[0].0 + w[0].1 > w[1].0 {
            return Err(semantic(
                w[1].2.clone(),
                w[1].3,
                format!(
                    "chunk at {} overlaps the chunk at {}..{}",
                    w[1].0,
                    w[0].0,
                    w[0].0 + w[0].1
                ),
            ));
        }
    }
    Ok(())
}

fn in_chunk(e: DecodeError, name: &'static str) -> DecodeError {
    e.in_field(name)
}

/// Number of windows for a frame span: the span divided by the window length, rounded up, at
/// least 1.
pub fn windows_for(first: u32, last: u32, len: u32) -> u64 {
    let span = last.saturating_sub(first) as u64;
    span.div_ceil(len.max(1) as u64).max(1)
}

/// Parses a decompressed chunk's directory with the generated raw layer and checks it.
///
/// Errors: the directory does not fit the bytes, or a rule of `ColumnChunk::new` is broken.
pub fn parse_chunk(bytes: &[u8]) -> Result<ColumnChunk<'_>, DecodeError> {
    let mut r = ByteReader::new(bytes);
    let dir = raw::ColumnDirectory::read_from(&mut r).map_err(|e| e.in_field("directory"))?;
    let entries = dir
        .columns
        .iter()
        .map(|c| DirEntry {
            id: c.id,
            code: c.type_code,
            offset: c.offset,
            count: c.count,
        })
        .collect();
    ColumnChunk::new(bytes, entries)
}

/// Lays out a chunk body (directory, data, 4 zero bytes) from a builder through the raw layer.
///
/// Errors: the chunk would pass 16,777,215 bytes.
pub fn build_chunk(b: cbtk_columns::ChunkBuilder) -> Result<Vec<u8>, EncodeError> {
    let (entries, data) = b.finish()?;
    let body = raw::ChunkBody {
        directory: raw::ColumnDirectory {
            columns: entries
                .iter()
                .map(|e| raw::ColumnEntry {
                    id: e.id,
                    type_code: e.code,
                    offset: e.offset,
                    count: e.count,
                })
                .collect(),
        },
        data,
    };
    let mut w = ByteWriter::with_capacity(body.encoded_len());
    body.write_to(&mut w)?;
    Ok(w.into_bytes())
}

/// The header's values with their units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Recorder version.
    pub recorder_version: u16,
    /// Simulation frames per second.
    pub frames_per_second: u16,
    /// First frame recorded.
    pub first_frame: u32,
    /// Last frame recorded.
    pub last_frame: u32,
    /// Window length in frames (1..=65,535).
    pub window_length: u32,
    /// Number of windows.
    pub num_windows: u32,
    /// Tolerance in elmos.
    pub tolerance_elmos: f32,
    /// Position step is 1 / 2^position_shift elmo.
    pub position_shift: u8,
    /// Velocity step is 1 / 2^velocity_shift elmo per frame.
    pub velocity_shift: u8,
    /// Rotation bits (8..=16).
    pub rotation_bits: u8,
    /// Frames between the recorder's unit samples (information only).
    pub sample_interval: u8,
    /// Units, projectiles and features in the match.
    pub num_units: u32,
    /// Projectiles in the match.
    pub num_projectiles: u32,
    /// Features in the match.
    pub num_features: u32,
    /// The replay's game id.
    pub game_id: [u8; 16],
    /// Resource tolerance.
    pub resource_tolerance: f32,
    /// Resource fraction.
    pub resource_fraction: f32,
}

impl Header {
    /// The values of a raw header.
    pub fn from_raw(r: &CbtrackV1) -> Self {
        let mut game_id = [0; 16];
        let n = r.game_id.len().min(16);
        game_id[..n].copy_from_slice(&r.game_id[..n]);
        Self {
            recorder_version: r.recorder_version,
            frames_per_second: r.frames_per_second,
            first_frame: r.first_frame,
            last_frame: r.last_frame,
            window_length: r.window_length,
            num_windows: r.index.len() as u32,
            tolerance_elmos: r.tolerance,
            position_shift: r.position_shift,
            velocity_shift: r.velocity_shift,
            rotation_bits: r.rotation_bits,
            sample_interval: r.sample_interval,
            num_units: r.num_units,
            num_projectiles: r.num_projectiles,
            num_features: r.num_features,
            game_id,
            resource_tolerance: r.resource_tolerance,
            resource_fraction: r.resource_fraction,
        }
    }

    /// Position step in elmos.
    pub fn pos_step(&self) -> f64 {
        1.0 / (1u64 << self.position_shift.min(62)) as f64
    }

    /// Velocity step in elmos per frame.
    pub fn vel_step(&self) -> f64 {
        1.0 / (1u64 << self.velocity_shift.min(62)) as f64
    }

    /// First and last frame of window `k`.
    pub fn window_span(&self, k: usize) -> (u32, u32) {
        let start = self.first_frame as u64 + k as u64 * self.window_length as u64;
        let end = (start + self.window_length as u64).min(self.last_frame as u64);
        (start as u32, end.max(start) as u32)
    }

    /// The window holding `frame`, or `None` outside the track.
    pub fn window_of(&self, frame: f64) -> Option<usize> {
        if !frame.is_finite() || frame < self.first_frame as f64 || frame > self.last_frame as f64 {
            return None;
        }
        let k = ((frame - self.first_frame as f64) / self.window_length as f64).floor() as usize;
        Some(k.min(self.num_windows.max(1) as usize - 1))
    }

    /// What a thinned team number sample may be from the track:
    /// `max(resource tolerance, resource fraction x |sample|)`.
    pub fn value_allowance(&self, sample: f64) -> f64 {
        (self.resource_tolerance as f64).max(self.resource_fraction as f64 * sample.abs())
    }
}

// ---------------------------------------------------------------- info and features

/// The info chunk: names, teams and the map.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Info {
    /// Track text: engine version, game, map, writing program.
    pub texts: Vec<String>,
    /// Unit definition names.
    pub unit_defs: Vec<String>,
    /// Weapon definition names.
    pub weapon_defs: Vec<String>,
    /// Feature definition names.
    pub feature_defs: Vec<String>,
    /// For each unit definition with posed pieces: its index and its posed piece names.
    pub posed: Vec<(u16, Vec<String>)>,
    /// Teams.
    pub teams: Vec<TeamInfo>,
    /// Map size along x and z in elmos (empty when not given).
    pub map_size: Vec<u32>,
    /// Footprint across each unit definition, elmos (empty before recorder version 3).
    pub footprint_x: Vec<u16>,
    /// Footprint along each unit definition's facing, elmos.
    pub footprint_z: Vec<u16>,
    /// Team rules parameter names.
    pub team_params: Vec<String>,
    /// Game rules parameter names.
    pub game_params: Vec<String>,
}

/// One team of the info chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TeamInfo {
    /// Team id.
    pub id: u8,
    /// Ally team.
    pub ally: u8,
    /// Flags; bit 0 set for an AI team.
    pub flags: u8,
    /// Red, green, blue.
    pub colour: [u8; 3],
    /// Side name.
    pub side: String,
    /// Leader name.
    pub leader: String,
}

fn strings(lens: &[u16], bytes: &[u8], what: &'static str) -> Result<Vec<String>, DecodeError> {
    let mut out = Vec::with_capacity(lens.len().min(bytes.len() + 1));
    let mut at = 0usize;
    for (i, &l) in lens.iter().enumerate() {
        let end = at + l as usize;
        let Some(b) = bytes.get(at..end) else {
            return Err(semantic(
                fpath(&[PathSeg::Field(what), PathSeg::Index(i)]),
                0,
                format!(
                    "string {i} needs bytes {at}..{end}, the bytes column has {}",
                    bytes.len()
                ),
            ));
        };
        out.push(String::from_utf8(b.to_vec()).map_err(|e| {
            semantic(
                fpath(&[PathSeg::Field(what), PathSeg::Index(i)]),
                0,
                format!("not UTF-8: {e}"),
            )
        })?);
        at = end;
    }
    Ok(out)
}

fn put_strings(v: &[String]) -> Result<(Vec<u16>, Vec<u8>), EncodeError> {
    let mut lens = Vec::with_capacity(v.len());
    let mut bytes = Vec::new();
    for s in v {
        lens.push(
            u16::try_from(s.len())
                .map_err(|_| enc(format!("string of {} bytes does not fit u16", s.len())))?,
        );
        bytes.extend_from_slice(s.as_bytes());
    }
    Ok((lens, bytes))
}

impl Info {
    /// Reads the info chunk's column set.
    ///
    /// Errors: a string list whose lengths run past its bytes, text that is not UTF-8, or
    /// posed piece counts that run past the names.
    pub fn from_columns(c: &raw::InfoColumns) -> Result<Self, DecodeError> {
        let pieces = strings(&c.piece_lens, &c.piece_bytes, "piece_names")?;
        let mut posed = Vec::new();
        let mut at = 0usize;
        for (i, &d) in c.posed_defs.iter().enumerate() {
            let n = c.posed_counts.get(i).copied().unwrap_or(0) as usize;
            let Some(names) = pieces.get(at..at + n) else {
                return Err(semantic(
                    fpath(&[PathSeg::Field("posed_counts"), PathSeg::Index(i)]),
                    0,
                    "posed piece counts run past the piece names",
                ));
            };
            posed.push((d, names.to_vec()));
            at += n;
        }
        let sides = strings(&c.side_lens, &c.side_bytes, "side_names")?;
        let leaders = strings(&c.leader_lens, &c.leader_bytes, "leader_names")?;
        let teams = c
            .team_ids
            .iter()
            .enumerate()
            .map(|(i, &id)| TeamInfo {
                id,
                ally: c.team_allies.get(i).copied().unwrap_or(0),
                flags: c.team_flags.get(i).copied().unwrap_or(0),
                colour: [0, 1, 2].map(|j| c.team_colours.get(3 * i + j).copied().unwrap_or(0)),
                side: sides.get(i).cloned().unwrap_or_default(),
                leader: leaders.get(i).cloned().unwrap_or_default(),
            })
            .collect();
        Ok(Self {
            texts: strings(&c.text_lens, &c.text_bytes, "texts")?,
            unit_defs: strings(&c.unit_def_lens, &c.unit_def_bytes, "unit_defs")?,
            weapon_defs: strings(&c.weapon_def_lens, &c.weapon_def_bytes, "weapon_defs")?,
            feature_defs: strings(&c.feature_def_lens, &c.feature_def_bytes, "feature_defs")?,
            posed,
            teams,
            map_size: c.map_size.clone(),
            footprint_x: c.footprint_x.clone(),
            footprint_z: c.footprint_z.clone(),
            team_params: strings(&c.team_param_lens, &c.team_param_bytes, "team_params")?,
            game_params: strings(&c.game_param_lens, &c.game_param_bytes, "game_params")?,
        })
    }

    /// The info chunk's column set.
    ///
    /// Errors: a string longer than 65,535 bytes, a count above 65,535 or a value above
    /// 16,777,215.
    pub fn to_columns(&self) -> Result<raw::InfoColumns, EncodeError> {
        let mut c = raw::InfoColumns::default();
        (c.text_lens, c.text_bytes) = put_strings(&self.texts)?;
        (c.unit_def_lens, c.unit_def_bytes) = put_strings(&self.unit_defs)?;
        (c.weapon_def_lens, c.weapon_def_bytes) = put_strings(&self.weapon_defs)?;
        (c.feature_def_lens, c.feature_def_bytes) = put_strings(&self.feature_defs)?;
        let mut pieces = Vec::new();
        for (d, names) in &self.posed {
            c.posed_defs.push(*d);
            c.posed_counts.push(
                u16::try_from(names.len()).map_err(|_| enc("more than 65,535 posed pieces"))?,
            );
            pieces.extend(names.iter().cloned());
        }
        (c.piece_lens, c.piece_bytes) = put_strings(&pieces)?;
        let sides: Vec<String> = self.teams.iter().map(|t| t.side.clone()).collect();
        let leaders: Vec<String> = self.teams.iter().map(|t| t.leader.clone()).collect();
        for t in &self.teams {
            c.team_ids.push(t.id);
            c.team_allies.push(t.ally);
            c.team_flags.push(t.flags);
            c.team_colours.extend_from_slice(&t.colour);
        }
        (c.side_lens, c.side_bytes) = put_strings(&sides)?;
        (c.leader_lens, c.leader_bytes) = put_strings(&leaders)?;
        if let Some(v) = self.map_size.iter().find(|&&v| v > LUA_MAX) {
            return Err(enc(format!("map size {v} is above 16,777,215")));
        }
        c.map_size = self.map_size.clone();
        c.footprint_x = self.footprint_x.clone();
        c.footprint_z = self.footprint_z.clone();
        (c.team_param_lens, c.team_param_bytes) = put_strings(&self.team_params)?;
        (c.game_param_lens, c.game_param_bytes) = put_strings(&self.game_params)?;
        Ok(c)
    }
}

/// One feature of the features chunk.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Feature {
    /// The engine's feature id.
    pub feature_id: u16,
    /// Feature definition.
    pub def: u16,
    /// Team, 255 for none.
    pub team: u8,
    /// Bit 0: there before the first frame; bit 1: still there after the last.
    pub flags: u8,
    /// First frame it exists.
    pub first_frame: u32,
    /// Last frame it exists.
    pub last_frame: u32,
    /// Position in position steps.
    pub pos: [i32; 3],
    /// Rotation: dropped component (0..=3).
    pub rot_dropped: u8,
    /// Rotation: the three kept codes.
    pub rot: [i16; 3],
}

fn at_or<T: Copy + Default>(v: &[T], i: usize) -> T {
    v.get(i).copied().unwrap_or_default()
}

fn check_lens(
    what: &'static str,
    n: usize,
    cols: &[(&'static str, usize)],
) -> Result<(), DecodeError> {
    for &(name, len) in cols {
        if len != 0 && len != n {
            return Err(semantic(
                fpath(&[PathSeg::Field(what), PathSeg::Field(name)]),
                0,
                format!("column has {len} values where the set has {n} entries (or none)"),
            ));
        }
    }
    Ok(())
}

impl Feature {
    /// Reads the features chunk's column set.
    ///
    /// Errors: columns of one entry each that disagree in length.
    pub fn from_columns(c: &raw::FeaturesColumns) -> Result<Vec<Self>, DecodeError> {
        let lens = [
            ("feature_id", c.feature_id.len()),
            ("def", c.def.len()),
            ("team", c.team.len()),
            ("flags", c.flags.len()),
            ("first_frame", c.first_frame.len()),
            ("last_frame", c.last_frame.len()),
            ("x", c.x.len()),
            ("y", c.y.len()),
            ("z", c.z.len()),
            ("rot_dropped", c.rot_dropped.len()),
            ("rot_a", c.rot_a.len()),
            ("rot_b", c.rot_b.len()),
            ("rot_c", c.rot_c.len()),
        ];
        let n = lens.iter().map(|l| l.1).max().unwrap_or(0);
        check_lens("features", n, &lens)?;
        Ok((0..n)
            .map(|i| Feature {
                feature_id: at_or(&c.feature_id, i),
                def: at_or(&c.def, i),
                team: at_or(&c.team, i),
                flags: at_or(&c.flags, i),
                first_frame: at_or(&c.first_frame, i),
                last_frame: at_or(&c.last_frame, i),
                pos: [at_or(&c.x, i), at_or(&c.y, i), at_or(&c.z, i)],
                rot_dropped: at_or(&c.rot_dropped, i),
                rot: [
                    at_or(&c.rot_a, i) as i16,
                    at_or(&c.rot_b, i) as i16,
                    at_or(&c.rot_c, i) as i16,
                ],
            })
            .collect())
    }

    /// The features chunk's column set.
    ///
    /// Errors: a frame or a position beyond 16,777,215 (in size).
    pub fn to_columns(f: &[Self]) -> Result<raw::FeaturesColumns, EncodeError> {
        let mut c = raw::FeaturesColumns::default();
        for x in f {
            if x.first_frame > LUA_MAX
                || x.last_frame > LUA_MAX
                || x.pos.iter().any(|p| p.unsigned_abs() > LUA_MAX)
            {
                return Err(enc(format!(
                    "feature {}: a frame or position is beyond 16,777,215",
                    x.feature_id
                )));
            }
            c.feature_id.push(x.feature_id);
            c.def.push(x.def);
            c.team.push(x.team);
            c.flags.push(x.flags);
            c.first_frame.push(x.first_frame);
            c.last_frame.push(x.last_frame);
            c.x.push(x.pos[0]);
            c.y.push(x.pos[1]);
            c.z.push(x.pos[2]);
            c.rot_dropped.push(x.rot_dropped);
            c.rot_a.push(x.rot[0] as u16);
            c.rot_b.push(x.rot[1] as u16);
            c.rot_c.push(x.rot[2] as u16);
        }
        Ok(c)
    }

    /// True when the feature exists at `frame` (first <= f <= last).
    pub fn exists_at(&self, frame: f64) -> bool {
        self.first_frame as f64 <= frame && frame <= self.last_frame as f64
    }
}

// ---------------------------------------------------------------- main chunk

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

struct Escape3<'a>(EscapeDecoder<'a>, EscapeDecoder<'a>, EscapeDecoder<'a>);

impl<'a> Escape3<'a> {
    fn new(n: [&'a [i16]; 3], w: [&'a [i32]; 3], total: usize, zeros: &'a [i16]) -> Self {
        let pick = |s: &'a [i16]| if s.is_empty() { &zeros[..total] } else { s };
        Self(
            EscapeDecoder::new(pick(n[0]), w[0]),
            EscapeDecoder::new(pick(n[1]), w[1]),
            EscapeDecoder::new(pick(n[2]), w[2]),
        )
    }
    fn curve(
        &mut self,
        k: usize,
        set: &'static str,
        out: &mut [Vec<i32>; 3],
    ) -> Result<(), DecodeError> {
        for (d, o) in [&mut self.0, &mut self.1, &mut self.2]
            .into_iter()
            .zip(out.iter_mut())
        {
            d.curve(k, o)
                .map_err(|m| semantic(fpath(&[PathSeg::Field(set)]), 0, m))?;
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
    ///
    /// Errors: the directory or a column set is bad, per-entry columns disagree in length, key
    /// columns do not match the counts, or an escape has no wide value.
    pub fn from_chunk(
        bytes: &[u8],
        index: usize,
        start: u32,
        end: u32,
    ) -> Result<Self, DecodeError> {
        let c = parse_chunk(bytes)?;
        let u = raw::UnitsColumns::from_chunk(&c)?;
        let t = raw::TransformKeysColumns::from_chunk(&c)?;
        let s = raw::StatusKeysColumns::from_chunk(&c)?;
        let g = raw::TargetTracksColumns::from_chunk(&c)?;
        let p = raw::PoseTracksColumns::from_chunk(&c)?;
        let q = raw::BuildQueueColumns::from_chunk(&c)?;
        let j = raw::ProjectilesColumns::from_chunk(&c)?;
        let n = raw::TeamNumbersColumns::from_chunk(&c)?;
        Self::from_columns(&u, &t, &s, &g, &p, &q, &j, &n, index, start, end)
    }

    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    fn from_columns(
        u: &raw::UnitsColumns,
        t: &raw::TransformKeysColumns,
        s: &raw::StatusKeysColumns,
        g: &raw::TargetTracksColumns,
        p: &raw::PoseTracksColumns,
        q: &raw::BuildQueueColumns,
        j: &raw::ProjectilesColumns,
        nc: &raw::TeamNumbersColumns,
        index: usize,
        start: u32,
        end: u32,
    ) -> Result<Self, DecodeError> {
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
            need(
                cnt16(&u.transform_count, i) >= 1,
                "units",
                "transform_count",
                &format!("unit {i} has no transform key (every unit has at least one)"),
            )?;
            need(
                cnt16(&u.status_count, i) >= 1,
                "units",
                "status_count",
                &format!("unit {i} has no status key (every unit has at least one)"),
            )?;
        }
        for i in 0..ng {
            need(
                cnt16(&g.key_count, i) >= 1,
                "target_tracks",
                "key_count",
                &format!("target track {i} has no key"),
            )?;
        }
        for i in 0..np {
            need(
                cnt16(&p.key_count, i) >= 1,
                "pose_tracks",
                "key_count",
                &format!("pose track {i} has no key"),
            )?;
        }
        for i in 0..nj {
            need(
                cnt16(&j.key_count, i) >= 1,
                "projectiles",
                "key_count",
                &format!("projectile {i} has no key"),
            )?;
        }
        for i in 0..nn {
            need(
                cnt16(&nc.key_count, i) >= 1,
                "team_numbers",
                "key_count",
                &format!("team number track {i} has no key"),
            )?;
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

        let zeros = vec![0i16; nt.max(npk).max(njk)];
        let mut tpos = Escape3::new(
            [&t.x, &t.y, &t.z],
            [&t.x_wide, &t.y_wide, &t.z_wide],
            nt,
            &zeros,
        );
        let mut pang = Escape3::new(
            [&p.ax, &p.ay, &p.az],
            [&p.ax_wide, &p.ay_wide, &p.az_wide],
            npk,
            &zeros,
        );
        let mut poff = Escape3::new(
            [&p.ox, &p.oy, &p.oz],
            [&p.ox_wide, &p.oy_wide, &p.oz_wide],
            npk,
            &zeros,
        );
        let mut v3 = [Vec::new(), Vec::new(), Vec::new()];
        let mut w3 = [Vec::new(), Vec::new(), Vec::new()];
        let mut r3 = [Vec::new(), Vec::new(), Vec::new()];
        let (mut ti, mut si, mut gi, mut gki, mut gpi, mut pi, mut pki, mut qi, mut qii) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0);
        let mut units = Vec::with_capacity(nu);
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
            let mut targets = Vec::with_capacity(k);
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
                targets.push(TargetTrack {
                    weapon: at_or(&g.weapon, gi),
                    keys,
                });
                gi += 1;
                gki += kk;
            }
            let k = cnt16(&u.pose_track_count, i);
            let mut poses = Vec::with_capacity(k);
            for _ in 0..k {
                let kk = cnt16(&p.key_count, pi);
                pang.curve(kk, "pose_tracks", &mut v3)?;
                poff.curve(kk, "pose_tracks", &mut w3)?;
                let tt = times(&p.time, pki, kk);
                poses.push(PoseTrack {
                    piece: at_or(&p.piece, pi),
                    keys: (0..kk)
                        .map(|x| PoseKey {
                            offset: tt[x],
                            angles: [v3[0][x], v3[1][x], v3[2][x]],
                            offsets: [w3[0][x], w3[1][x], w3[2][x]],
                        })
                        .collect(),
                });
                pi += 1;
                pki += kk;
            }
            let k = cnt16(&u.queue_count, i);
            let qt = times(&q.time, qi, k);
            let mut queue = Vec::with_capacity(k);
            for (x, &off) in qt.iter().enumerate() {
                let m = q.item_count.get(qi + x).copied().unwrap_or(0) as usize;
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
            units.push(Unit {
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
            });
        }
        let mut ppos = Escape3::new(
            [&j.x, &j.y, &j.z],
            [&j.x_wide, &j.y_wide, &j.z_wide],
            njk,
            &zeros,
        );
        let mut pvel = Escape3::new(
            [&j.vx, &j.vy, &j.vz],
            [&j.vx_wide, &j.vy_wide, &j.vz_wide],
            njk,
            &zeros,
        );
        let mut ji = 0;
        let mut projectiles = Vec::with_capacity(nj);
        for i in 0..nj {
            let k = cnt16(&j.key_count, i);
            ppos.curve(k, "projectiles", &mut v3)?;
            pvel.curve(k, "projectiles", &mut w3)?;
            let tt = times(&j.time, ji, k);
            projectiles.push(Projectile {
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
            });
            ji += k;
        }
        let mut teams = Vec::with_capacity(nn);
        let mut ki = 0;
        for i in 0..nn {
            let k = cnt16(&nc.key_count, i);
            let tt = times(&nc.time, ki, k);
            teams.push(TeamTrack {
                team: at_or(&nc.team, i),
                code: at_or(&nc.code, i),
                keys: (0..k).map(|x| (tt[x], at_or(&nc.value, ki + x))).collect(),
            });
            ki += k;
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
        let lens = [
            ("time", c.time.len()),
            ("x", c.x.len()),
            ("z", c.z.len()),
            ("before", c.before.len()),
            ("change", c.change.len()),
        ];
        let n = lens.iter().map(|l| l.1).max().unwrap_or(0);
        check_lens("terrain_rows", n, &lens)?;
        let (mut f, mut x, mut z, mut h) = (start as u64, 0u16, 0u16, 0i64);
        Ok((0..n)
            .map(|i| {
                f += at_or(&c.time, i) as u64;
                x = x.wrapping_add(at_or(&c.x, i));
                z = z.wrapping_add(at_or(&c.z, i));
                h += at_or(&c.before, i) as i64;
                let before = h.clamp(i32::MIN as i64, i32::MAX as i64) as i32;
                TerrainRow {
                    frame: f.min(u32::MAX as u64) as u32,
                    x,
                    z,
                    before,
                    after: before.saturating_add(at_or(&c.change, i)),
                }
            })
            .collect())
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

// ---------------------------------------------------------------- sampling

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

use statepack_runtime::quant::lerp;

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
    /// The state at absolute `frame` (which must be in this window) from this window alone.
    /// Terrain and features are left empty (see [`Player`]).
    pub fn sample(&self, h: &Header, frame: f64) -> FrameState {
        let t = frame - self.start as f64;
        let ps = h.pos_step();
        let vs = h.vel_step();
        let units = self
            .units
            .iter()
            .filter(|u| u.exists_at(t))
            .map(|u| {
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
            })
            .collect();
        let projectiles = self
            .projectiles
            .iter()
            .filter(|p| p.exists_at(t))
            .map(|p| {
                let (pos, vel) = p.at(t, ps, vs);
                ProjectileState {
                    serial: p.serial,
                    weapon: p.weapon,
                    team: p.team,
                    owner: p.owner,
                    pos_elmos: pos.to_array(),
                    vel_elmos_per_frame: vel.to_array(),
                }
            })
            .collect();
        let teams = self
            .teams
            .iter()
            .map(|tr| TeamValue {
                team: tr.team,
                code: tr.code,
                value: tr.at(t),
            })
            .collect();
        FrameState {
            frame,
            window: self.index,
            units,
            projectiles,
            teams,
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
#[derive(Debug)]
pub struct Player<'a> {
    track: Track<'a>,
    header: Header,
    features: Vec<Feature>,
    window: Option<MainWindow>,
    shown: f64,
    heights: std::collections::BTreeMap<(u16, u16), i32>,
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
        let features = track.features()?;
        Ok(Self {
            shown: header.first_frame as f64,
            track,
            header,
            features,
            window: None,
            heights: Default::default(),
            started: false,
            reads: ChunkReads::default(),
        })
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The opened track.
    pub fn track(&self) -> &Track<'a> {
        &self.track
    }

    /// Applies terrain rows to move from the frame shown to `frame`: forward sets each row's
    /// point to its height after, for rows after the shown frame up to `frame`, in order;
    /// backward sets heights before, in reverse order. Rows at the track's first frame count
    /// as applied from the start (window 0 holds them, and they are in place at the first
    /// frame).
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
        let mut rows = Vec::new();
        for k in lo..=hi {
            if self.track.raw.index[k].terrain_len == 0 {
                continue;
            }
            let r = self.track.terrain(k)?;
            self.reads.terrain += 1;
            rows.extend(r.into_iter().filter(|r| {
                let f = r.frame as f64;
                f > from && f <= to
            }));
        }
        if b > a {
            for r in rows {
                self.heights.insert((r.x, r.z), r.after);
            }
        } else {
            for r in rows.into_iter().rev() {
                self.heights.insert((r.x, r.z), r.before);
            }
        }
        self.shown = frame;
        Ok(())
    }

    /// The full state at `frame`: reads the frame's window's main chunk if it is not the one
    /// loaded, and the terrain chunks between the frame last shown and this one.
    ///
    /// Errors: the frame is outside the track, or a chunk it needs is bad.
    pub fn sample(&mut self, frame: f64) -> Result<FrameState, DecodeError> {
        let k = self.track.window_of(frame)?;
        if self.window.as_ref().map(|w| w.index) != Some(k) {
            self.window = Some(self.track.window(k)?);
            self.reads.main += 1;
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
                let rows = self.track.terrain(0)?;
                self.reads.terrain += 1;
                for r in rows.iter().filter(|r| r.frame == self.header.first_frame) {
                    self.heights.insert((r.x, r.z), r.after);
                }
            }
        }
        self.move_terrain(frame)?;
        let w = self.window.as_ref().expect("loaded above");
        let mut st = w.sample(&self.header, frame);
        st.features = (0..self.features.len())
            .filter(|&i| self.features[i].exists_at(frame))
            .collect();
        let ps = self.header.pos_step();
        st.terrain = self
            .heights
            .iter()
            .map(|(&(x, z), &h)| (x, z, h as f64 * ps))
            .collect();
        Ok(st)
    }
}

// ---------------------------------------------------------------- registry

/// Full decode: header and index, info and features chunks, every window's main and terrain
/// chunk. Each window is decoded and dropped before the next, so memory stays within one
/// window.
///
/// Errors: the first problem found.
pub fn decode_all(bytes: &[u8]) -> Result<(), DecodeError> {
    let t = Track::open(bytes)?;
    t.info()?;
    t.features()?;
    for k in 0..t.num_windows() {
        t.window(k)?;
        t.terrain(k)?;
    }
    Ok(())
}

/// The worked example's window as keys (one unit, three transform keys, one status key).
pub fn worked_example_window() -> MainWindow {
    let k = |offset, x, y, rb| TransformKey {
        offset,
        pos: [x, y, 6400],
        rot_dropped: 3,
        rot: [0, rb, 0],
    };
    MainWindow {
        index: 0,
        start: 0,
        end: 900,
        units: vec![Unit {
            unit_id: 7983,
            serial: 0,
            def: 0,
            team: 0,
            flags: 2,
            first: 0,
            last: 900,
            transforms: vec![
                k(0, 5792, 1764, 0),
                k(300, 5792, 1764, 0),
                k(420, 6272, 1770, 1447),
            ],
            status: vec![StatusKey {
                offset: 0,
                health: 65535,
                build: 65535,
                flags: 1,
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A small track built in code: the worked example's window as a whole one-window file.
pub fn worked_example_file() -> Vec<u8> {
    let w = worked_example_window();
    let chunk = w.to_chunk().expect("the example fits");
    let params = writer::FileParams {
        first_frame: 0,
        last_frame: 900,
        window_length: 900,
        tolerance: 0.5,
        position_shift: 3,
        velocity_shift: 11,
        rotation_bits: 12,
        ..writer::FileParams::default()
    };
    let mut out = std::io::Cursor::new(Vec::new());
    let mut fw = writer::FileWriter::new(&mut out, params, &Info::default(), &[]).expect("writes");
    fw.push_window(&chunk, None).expect("writes");
    fw.finish(1, 0).expect("writes");
    out.into_inner()
}

/// The same track with `blocks` x 64 bytes of unknown header fields after byte 96, as a later
/// writer may add: the header size grows and every block number moves on by `blocks`.
///
/// Errors: the input is not a track, or the header would pass 65,535 bytes.
pub fn with_header_extra(bytes: &[u8], blocks: u32, fill: u8) -> Result<Vec<u8>, String> {
    let mut raw = CbtrackV1::decode(bytes).map_err(|e| e.to_string())?;
    let extra = 64 * blocks as usize;
    raw.header_size = u16::try_from(raw.header_size as usize + extra)
        .map_err(|_| "header over 65,535 bytes".to_string())?;
    raw.header_extra.extend(std::iter::repeat_n(fill, extra));
    raw.info_block += blocks;
    raw.features_block += blocks;
    for e in &mut raw.index {
        e.main_block += blocks;
        if e.terrain_len > 0 {
            e.terrain_block += blocks;
        }
    }
    raw.encode().map_err(|e| e.to_string())
}

/// The registry entry.
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec {
    name: "cbtrack",
    title: "CBTK v1",
    schema: "cbtrack_v1",
    detect: |b| b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b)),
    decode_raw: |b| CbtrackV1::decode(b).map(|_| ()),
    decode_traced: |b| {
        let (r, t) = CbtrackV1::decode_traced(b);
        (r.map(|_| ()), t)
    },
    decode_full: decode_all,
    reencode: |b| {
        let raw = CbtrackV1::decode(b).map_err(|e| e.to_string())?;
        raw.encode().map_err(|e| e.to_string())
    },
    to_json: |b| {
        let raw = CbtrackV1::decode(b).map_err(|e| e.to_string())?;
        serde_json::to_value(&raw).map_err(|e| e.to_string())
    },
    from_json: |v| {
        let raw: CbtrackV1 = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
        raw.encode().map_err(|e| e.to_string())
    },
    samples: || {
        vec![
            ("worked_example.cbtrack".into(), worked_example_file()),
            ("small_match.cbtrack".into(), matchgen::small_sample_file()),
        ]
    },
};
