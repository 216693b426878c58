//! The CBTK v1 writer: file layout ([`FileWriter`]) and the thinning writer
//! ([`ThinningWriter`]) that turns recorded samples into keys by the spec's "Rules for a
//! writer" and "What the tolerance measures", window by window.
//!
//! Every window is made from the samples of that window alone (plus, for each curve, the
//! sample just before the window's first frame and just after its last frame when no sample
//! falls on the edge). Because the samples on and next to a window edge are always keys, no
//! segment between two keys crosses an edge, so thinning window by window gives the same keys
//! as thinning the whole match with those keys forced, and memory is bounded by one window.
//!
//! After a window is laid out it is decoded again from its chunk bytes and every recorded
//! sample of the window is measured against what the reader gives; a sample further than the
//! tolerance stops the writer with an error naming it ([`WriteError::Tolerance`]).

use super::*;
use glam::{DMat3, DQuat, DVec3};
use statepack_codecs::smallest3;
use statepack_codecs::thin::select_keys;
use statepack_runtime::cbtk_columns::{deflate, LUA_MAX};
use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};

/// Header values a file is written with.
#[derive(Debug, Clone, PartialEq)]
pub struct FileParams {
    /// Recorder version (4: team numbers present).
    pub recorder_version: u16,
    /// Frames per second (30).
    pub frames_per_second: u16,
    /// First frame recorded.
    pub first_frame: u32,
    /// Last frame recorded.
    pub last_frame: u32,
    /// Window length in frames (900).
    pub window_length: u32,
    /// Tolerance in elmos.
    pub tolerance: f32,
    /// Position shift.
    pub position_shift: u8,
    /// Velocity shift.
    pub velocity_shift: u8,
    /// Rotation bits.
    pub rotation_bits: u8,
    /// Frames between unit samples (information only).
    pub sample_interval: u8,
    /// The replay's game id.
    pub game_id: [u8; 16],
    /// Resource tolerance.
    pub resource_tolerance: f32,
    /// Resource fraction.
    pub resource_fraction: f32,
    /// zlib level (0..=9); any level reads the same.
    pub zlib_level: u32,
}

impl Default for FileParams {
    fn default() -> Self {
        Self {
            recorder_version: 4,
            frames_per_second: 30,
            first_frame: 0,
            last_frame: 0,
            window_length: 900,
            tolerance: 0.5,
            position_shift: 3,
            velocity_shift: 11,
            rotation_bits: 12,
            sample_interval: 1,
            game_id: [0; 16],
            resource_tolerance: 0.5,
            resource_fraction: 1.0 / 1024.0,
            zlib_level: 9,
        }
    }
}

/// Why a track could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A value does not fit where the spec puts it (named).
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// Writing failed.
    #[error("cannot write: {0}")]
    Io(#[from] std::io::Error),
    /// The input is not a recording this writer can take.
    #[error("{0}")]
    Input(String),
    /// A recorded sample is further from the track than the tolerance.
    #[error("{0}")]
    Tolerance(String),
    /// The window just written does not read back (a writer bug, reported, never ignored).
    #[error("window {0} does not read back: {1}")]
    ReadBack(usize, DecodeError),
}

/// The position step rule: the largest power-of-two step whose rounding (step x sqrt(3) / 2)
/// is at most a quarter of the tolerance. Returns the shift.
pub fn position_shift_for(tolerance: f64) -> u8 {
    (0..=24u8)
        .find(|s| (1.0 / (1u64 << s) as f64) * 3f64.sqrt() / 2.0 <= tolerance / 4.0)
        .unwrap_or(24)
}

/// The velocity step rule: the largest power-of-two step with window length x step x
/// sqrt(3) / 8 at most a quarter of the tolerance. Returns the shift.
pub fn velocity_shift_for(tolerance: f64, window_length: u32) -> u8 {
    (0..=24u8)
        .find(|s| {
            window_length as f64 * (1.0 / (1u64 << s) as f64) * 3f64.sqrt() / 8.0 <= tolerance / 4.0
        })
        .unwrap_or(24)
}

/// The rotation bits rule: the smallest width (8..=16) at which sqrt(6) / (2^(bits-1) - 1)
/// times the largest unit radius is at most a quarter of the tolerance (16 when none is).
pub fn rotation_bits_for(tolerance: f64, max_radius: f64) -> u8 {
    (8..=16u8)
        .find(|&b| smallest3::turn_bound_rad(b) * max_radius <= tolerance / 4.0)
        .unwrap_or(16)
}

/// Writes the file layout: header and index (written last, at the start), info and
/// features chunks, then each window's main chunk and terrain chunk, every chunk on a 64-byte
/// block.
pub struct FileWriter<'w, W: Write + Seek> {
    out: &'w mut W,
    params: FileParams,
    pos: u64,
    num_windows: usize,
    index: Vec<raw::WindowEntry>,
    info: (u32, u32),
    features: (u32, u32),
    num_features: u32,
    /// Compressed bytes of every main chunk so far.
    pub main_bytes: u64,
    /// Compressed bytes of every terrain chunk so far.
    pub terrain_bytes: u64,
    /// Largest main chunk so far, decompressed.
    pub largest_main: usize,
    /// Sum of main chunks before compression.
    pub main_raw_bytes: u64,
    /// Info chunk bytes (compressed).
    pub info_bytes: u64,
    /// Features chunk bytes (compressed).
    pub features_bytes: u64,
}

impl<'w, W: Write + Seek> FileWriter<'w, W> {
    /// Starts a file: reserves the header and index, writes the info and features chunks.
    ///
    /// Errors: a parameter out of range (window length, steps, rotation bits, frames above
    /// 16,777,215), a chunk that does not fit, or an I/O error.
    pub fn new(
        out: &'w mut W,
        params: FileParams,
        info: &Info,
        features: &[Feature],
    ) -> Result<Self, WriteError> {
        if !(1..=65535).contains(&params.window_length)
            || !(8..=16).contains(&params.rotation_bits)
            || params.position_shift > 24
            || params.velocity_shift > 24
            || params.last_frame < params.first_frame
            || params.last_frame > LUA_MAX
        {
            return Err(WriteError::Input(format!(
                "header parameters out of range: window length {}, rotation bits {}, frames {}..={}",
                params.window_length, params.rotation_bits, params.first_frame, params.last_frame
            )));
        }
        let num_windows =
            windows_for(params.first_frame, params.last_frame, params.window_length) as usize;
        let start = (HEADER_SIZE + 16 * num_windows) as u64;
        out.seek(SeekFrom::Start(0))?;
        out.write_all(&vec![0u8; start as usize])?;
        let mut w = Self {
            out,
            params,
            pos: start,
            num_windows,
            index: Vec::with_capacity(num_windows),
            info: (0, 0),
            features: (0, 0),
            num_features: u32::try_from(features.len())
                .map_err(|_| WriteError::Input("too many features".into()))?,
            main_bytes: 0,
            terrain_bytes: 0,
            largest_main: 0,
            main_raw_bytes: 0,
            info_bytes: 0,
            features_bytes: 0,
        };
        let mut b = cbtk_columns::ChunkBuilder::new();
        info.to_columns()?.put(&mut b)?;
        let body = build_chunk(b)?;
        w.info = w.chunk(&body)?;
        w.info_bytes = w.info.1 as u64;
        let mut b = cbtk_columns::ChunkBuilder::new();
        Feature::to_columns(features)?.put(&mut b)?;
        let body = build_chunk(b)?;
        w.features = w.chunk(&body)?;
        w.features_bytes = w.features.1 as u64;
        Ok(w)
    }

    /// Compresses and writes one chunk on the next block ([`compress_within_ratio`]);
    /// returns (block, length).
    fn chunk(&mut self, body: &[u8]) -> Result<(u32, u32), WriteError> {
        if body.len() > LUA_MAX as usize {
            return Err(WriteError::Encode(enc(format!(
                "decompressed chunk is {} bytes, more than 16,777,215",
                body.len()
            ))));
        }
        let z = compress_within_ratio(body, self.params.zlib_level);
        let pad = (64 - self.pos % 64) % 64;
        self.out.write_all(&vec![0u8; pad as usize])?;
        self.pos += pad;
        let block = self.pos / 64;
        if block > LUA_MAX as u64 || z.len() > LUA_MAX as usize {
            return Err(WriteError::Encode(enc(format!(
                "chunk at block {block} of {} bytes: block numbers and lengths are at most 16,777,215",
                z.len()
            ))));
        }
        self.out.write_all(&z)?;
        self.pos += z.len() as u64;
        Ok((block as u32, z.len() as u32))
    }

    /// Writes the next window's main chunk body and, when terrain changed, its terrain chunk
    /// body (both decompressed; they are compressed here).
    ///
    /// Errors: more windows than the frame span has, a chunk that does not fit, I/O.
    pub fn push_window(&mut self, main: &[u8], terrain: Option<&[u8]>) -> Result<(), WriteError> {
        if self.index.len() >= self.num_windows {
            return Err(WriteError::Input(format!(
                "more than {} windows",
                self.num_windows
            )));
        }
        let (mb, ml) = self.chunk(main)?;
        self.main_bytes += ml as u64;
        self.main_raw_bytes += main.len() as u64;
        self.largest_main = self.largest_main.max(main.len());
        let (tb, tl) = match terrain {
            Some(t) => {
                let r = self.chunk(t)?;
                self.terrain_bytes += r.1 as u64;
                r
            }
            None => (0, 0),
        };
        self.index.push(raw::WindowEntry {
            main_block: mb,
            main_len: ml,
            terrain_block: tb,
            terrain_len: tl,
        });
        Ok(())
    }

    /// Writes the header and the index at the start; returns the file's length.
    ///
    /// Errors: a window missing, a count above 16,777,215, I/O.
    pub fn finish(self, num_units: u32, num_projectiles: u32) -> Result<u64, WriteError> {
        if self.index.len() != self.num_windows {
            return Err(WriteError::Input(format!(
                "{} windows written, the frame span needs {}",
                self.index.len(),
                self.num_windows
            )));
        }
        for (v, what) in [
            (num_units, "number of units"),
            (num_projectiles, "number of projectiles"),
            (self.num_features, "number of features"),
            (self.num_windows as u32, "number of windows"),
        ] {
            if v > LUA_MAX {
                return Err(WriteError::Encode(enc(format!(
                    "{what} {v} is above 16,777,215"
                ))));
            }
        }
        let p = &self.params;
        let raw = CbtkHead {
            format_version: 1,
            header_size: HEADER_SIZE as u16,
            recorder_version: p.recorder_version,
            frames_per_second: p.frames_per_second,
            first_frame: p.first_frame,
            last_frame: p.last_frame,
            window_length: p.window_length,
            tolerance: p.tolerance,
            position_shift: p.position_shift,
            velocity_shift: p.velocity_shift,
            rotation_bits: p.rotation_bits,
            sample_interval: p.sample_interval,
            info_block: self.info.0,
            info_len: self.info.1,
            features_block: self.features.0,
            features_len: self.features.1,
            num_units,
            num_projectiles,
            num_features: self.num_features,
            game_id: p.game_id.to_vec(),
            resource_tolerance: p.resource_tolerance,
            resource_fraction: p.resource_fraction,
            reserved: vec![0; 8],
            header_extra: Vec::new(),
            index: self.index,
        };
        let mut w = ByteWriter::with_capacity(raw.encoded_len());
        raw.write_to(&mut w).map_err(|e| e.in_field("head"))?;
        let head = w.into_bytes();
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&head)?;
        self.out.seek(SeekFrom::Start(self.pos))?;
        Ok(self.pos)
    }
}

// ---------------------------------------------------------------- recorded input

/// One recorded unit sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnitSample {
    /// Frame.
    pub frame: u32,
    /// Position in elmos.
    pub pos: DVec3,
    /// Rotation (built from front and up with [`smallest3::from_front_up`]).
    pub rot: DQuat,
}

/// One recorded status sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatusSample {
    /// Frame.
    pub frame: u32,
    /// Health as a fraction of the maximum (clamped to 0..=1 when stored).
    pub health: f64,
    /// Build progress (clamped to 0..=1).
    pub build: f64,
    /// Flags.
    pub flags: u8,
}

/// One recorded piece sample, relative to the parent piece.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PieceSample {
    /// Frame.
    pub frame: u32,
    /// Rotation relative to the parent.
    pub rot: DQuat,
    /// Offset from the rest position, elmos.
    pub offset: DVec3,
}

/// A recorded piece.
#[derive(Debug, Clone, PartialEq)]
pub struct PieceInput {
    /// Index into the posed piece names of the unit's definition.
    pub piece: u16,
    /// Reach in elmos (the unit's radius for a piece with no geometry).
    pub reach: f64,
    /// Samples in frame order.
    pub samples: Vec<PieceSample>,
}

/// A target key as recorded (a change of target); references to units and projectiles are
/// serial numbers, which the writer turns into indices in the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TargetInputKey {
    /// Frame of the change.
    pub frame: u32,
    /// Kind.
    pub kind: u8,
    /// Serial of the unit or projectile, index of the feature, or 0.
    pub reference: u32,
    /// Build power as the engine's count out of 15 (stored times 17); 0 for a weapon.
    pub power15: u8,
    /// Position in elmos for kinds 128 and 129.
    pub pos: Option<DVec3>,
}

/// One recorded build queue item: unit definition, position x and z in elmos, facing 0..=3.
pub type QueueItemElmos = (u16, f64, f64, u8);

/// A recorded unit.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UnitInput {
    /// The engine's unit id.
    pub unit_id: u16,
    /// Serial number.
    pub serial: u32,
    /// Unit definition.
    pub def: u16,
    /// Team.
    pub team: u8,
    /// Radius in elmos (weights rotation error).
    pub radius: f64,
    /// First frame it exists.
    pub first_frame: u32,
    /// Last frame it exists.
    pub last_frame: u32,
    /// Transform samples in frame order.
    pub samples: Vec<UnitSample>,
    /// Status samples in frame order.
    pub status: Vec<StatusSample>,
    /// Target changes per weapon (weapon number, keys in frame order).
    pub targets: Vec<(u8, Vec<TargetInputKey>)>,
    /// Pieces.
    pub pieces: Vec<PieceInput>,
    /// Build queue changes (frame, the whole queue; positions in elmos as x, z).
    pub queue: Vec<(u32, Vec<QueueItemElmos>)>,
}

/// One recorded projectile sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProjectileSample {
    /// Frame.
    pub frame: u32,
    /// Position in elmos.
    pub pos: DVec3,
    /// Velocity in elmos per frame.
    pub vel: DVec3,
}

/// A recorded projectile.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProjectileInput {
    /// Serial number.
    pub serial: u32,
    /// Weapon definition, 65,535 for none.
    pub weapon: u16,
    /// Team, 255 for none.
    pub team: u8,
    /// Serial of the firing unit.
    pub owner: Option<u32>,
    /// First frame it exists.
    pub first_frame: u32,
    /// Last frame it exists.
    pub last_frame: u32,
    /// Samples in frame order (first and last frame included).
    pub samples: Vec<ProjectileSample>,
}

/// A recorded team number: the value on every frame it was read (from the frame first set,
/// for a rules parameter).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TeamInput {
    /// Team id, 255 for the game's.
    pub team: u8,
    /// Code.
    pub code: u16,
    /// Samples (frame, value) in frame order.
    pub samples: Vec<(u32, f32)>,
}

/// One recorded terrain change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TerrainChange {
    /// Frame.
    pub frame: u32,
    /// Heightmap x.
    pub x: u16,
    /// Heightmap z.
    pub z: u16,
    /// The map's own height at the point, elmos (used for a point's first row only: rule 3).
    pub map_height: f64,
    /// Height after the change, elmos.
    pub after: f64,
}

/// What one window is made from: every unit, projectile and team number that exists in the
/// window, with its samples in the window (and the neighbours just outside it), and the
/// terrain changes of the window.
#[derive(Debug, Clone, Default)]
pub struct WindowInput {
    /// Units.
    pub units: Vec<UnitInput>,
    /// Projectiles.
    pub projectiles: Vec<ProjectileInput>,
    /// Team numbers.
    pub teams: Vec<TeamInput>,
    /// Terrain changes.
    pub terrain: Vec<TerrainChange>,
}

/// A rotation the writer can store: finite, and long enough to normalise (a recorded
/// rotation need not be exactly unit length; one shorter than 1e-6 has no direction).
fn storable_rotation(q: DQuat) -> bool {
    q.is_finite() && q.length() >= 1e-6
}

/// Checks every recorded sample of a window before anything is thinned: positions, piece
/// offsets and projectile velocities finite, rotations finite and not of zero length. The
/// quantizers would otherwise store a NaN or infinite value as a wrapped or saturated code,
/// and a zero-length rotation as the identity, without a word.
///
/// Errors: [`WriteError::Input`] naming the unit (serial), piece or projectile, the frame and
/// the value.
pub fn check_samples(input: &WindowInput) -> Result<(), WriteError> {
    let bad = |what: String| Err(WriteError::Input(what));
    for u in &input.units {
        for x in &u.samples {
            if !x.pos.is_finite() {
                return bad(format!(
                    "unit serial {} at frame {}: position {} is not finite",
                    u.serial, x.frame, x.pos
                ));
            }
            if !storable_rotation(x.rot) {
                return bad(format!(
                    "unit serial {} at frame {}: rotation {} is not a finite rotation of non-zero length",
                    u.serial, x.frame, x.rot
                ));
            }
        }
        for p in &u.pieces {
            for x in &p.samples {
                if !x.offset.is_finite() {
                    return bad(format!(
                        "unit serial {} piece {} at frame {}: offset {} is not finite",
                        u.serial, p.piece, x.frame, x.offset
                    ));
                }
                if !storable_rotation(x.rot) {
                    return bad(format!(
                        "unit serial {} piece {} at frame {}: rotation {} is not a finite rotation of non-zero length",
                        u.serial, p.piece, x.frame, x.rot
                    ));
                }
            }
        }
    }
    for p in &input.projectiles {
        for x in &p.samples {
            if !(x.pos.is_finite() && x.vel.is_finite()) {
                return bad(format!(
                    "projectile serial {} at frame {}: position {} or velocity {} is not finite",
                    p.serial, x.frame, x.pos, x.vel
                ));
            }
        }
    }
    Ok(())
}

/// Keys written and worst errors, over the windows written so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Windows written.
    pub windows: u64,
    /// Unit entries written (a unit once per window).
    pub unit_entries: u64,
    /// Unit transform samples read.
    pub unit_samples: u64,
    /// Transform keys written.
    pub transform_keys: u64,
    /// Transform keys thinning kept, over the match (a key on a window edge counted once,
    /// keys added at window edges not counted).
    pub kept_transform: u64,
    /// Status keys kept, counted as `kept_transform`.
    pub kept_status: u64,
    /// Pose keys kept (before tracks at rest are left out), counted as `kept_transform`.
    pub kept_pose: u64,
    /// Projectile keys kept, counted as `kept_transform`.
    pub kept_projectile: u64,
    /// Team number keys kept (before zero tracks are left out), counted as `kept_transform`.
    pub kept_team: u64,
    /// Status keys written.
    pub status_keys: u64,
    /// Target tracks and keys written.
    pub target_keys: u64,
    /// Piece samples read.
    pub piece_samples: u64,
    /// Pose tracks written.
    pub pose_tracks: u64,
    /// Pose keys written.
    pub pose_keys: u64,
    /// Build queue keys written.
    pub queue_keys: u64,
    /// Projectile samples read.
    pub projectile_samples: u64,
    /// Projectile entries written.
    pub projectile_entries: u64,
    /// Projectile keys written.
    pub projectile_keys: u64,
    /// Team number samples read.
    pub team_samples: u64,
    /// Team number keys written.
    pub team_keys: u64,
    /// Terrain rows written.
    pub terrain_rows: u64,
    /// Furthest unit sample from the track (elmos: distance + radius x angle).
    pub worst_unit: f64,
    /// Furthest piece sample (elmos: offset distance + reach x angle).
    pub worst_piece: f64,
    /// Furthest projectile sample (elmos).
    pub worst_projectile: f64,
    /// Worst projectile velocity error at a sample (elmos per frame; no tolerance).
    pub worst_projectile_velocity: f64,
    /// Furthest health or build sample in steps of 1/65,535.
    pub worst_status_steps: f64,
    /// Furthest thinned team number sample, as a fraction of what it was allowed.
    pub worst_team_ratio: f64,
}

impl Stats {
    /// Adds the counts of `o` and keeps the larger of each worst error.
    pub fn merge(&mut self, o: &Stats) {
        self.windows += o.windows;
        self.unit_entries += o.unit_entries;
        self.unit_samples += o.unit_samples;
        self.transform_keys += o.transform_keys;
        self.kept_transform += o.kept_transform;
        self.kept_status += o.kept_status;
        self.kept_pose += o.kept_pose;
        self.kept_projectile += o.kept_projectile;
        self.kept_team += o.kept_team;
        self.status_keys += o.status_keys;
        self.target_keys += o.target_keys;
        self.piece_samples += o.piece_samples;
        self.pose_tracks += o.pose_tracks;
        self.pose_keys += o.pose_keys;
        self.queue_keys += o.queue_keys;
        self.projectile_samples += o.projectile_samples;
        self.projectile_entries += o.projectile_entries;
        self.projectile_keys += o.projectile_keys;
        self.team_samples += o.team_samples;
        self.team_keys += o.team_keys;
        self.terrain_rows += o.terrain_rows;
        self.worst_unit = self.worst_unit.max(o.worst_unit);
        self.worst_piece = self.worst_piece.max(o.worst_piece);
        self.worst_projectile = self.worst_projectile.max(o.worst_projectile);
        self.worst_projectile_velocity = self
            .worst_projectile_velocity
            .max(o.worst_projectile_velocity);
        self.worst_status_steps = self.worst_status_steps.max(o.worst_status_steps);
        self.worst_team_ratio = self.worst_team_ratio.max(o.worst_team_ratio);
    }
}

/// `v` in whole steps. `what` names the value in the error (built only on error).
fn round_steps<S: AsRef<str>>(
    v: f64,
    step: f64,
    what: impl FnOnce() -> S,
) -> Result<i32, WriteError> {
    let r = (v / step).round();
    if !r.is_finite() || r.abs() > LUA_MAX as f64 {
        return Err(WriteError::Encode(enc(format!(
            "{} {v} is {r} steps, beyond 16,777,215",
            what().as_ref()
        ))));
    }
    Ok(r as i32)
}

/// Whether `dist + length x angle(a, b) <= tol`, without an arc cosine: the angle between two
/// unit quaternions is at most `lim` exactly when `|a . b| >= cos(lim / 2)`, and
/// `1 - x²/2 <= cos x <= 1 - x²/2 + x⁴/24` decides nearly every case without a cosine. `b` is
/// only computed when the distance leaves room for an angle.
#[inline]
fn within(dist: f64, length: f64, a: DQuat, b: impl FnOnce() -> DQuat, tol: f64) -> bool {
    if dist > tol {
        return false;
    }
    if length <= 0.0 {
        return true;
    }
    let lim = (tol - dist) / length;
    if lim >= std::f64::consts::PI {
        return true;
    }
    let b = b();
    let d = a.dot(b).abs();
    let x = lim / 2.0;
    let x2 = x * x;
    let lower = 1.0 - x2 / 2.0;
    let upper = lower + x2 * x2 / 24.0;
    const EPS: f64 = 1e-12;
    if d >= upper + EPS {
        return true;
    }
    if d <= lower - EPS {
        return false;
    }
    // Close to the limit: the exact measure.
    dist + length * smallest3::angle_between(a, b) <= tol
}

/// `dist + length x angle(a, b)` when it may be more than `worst`, else `None` (decided
/// without an arc cosine as in [`within`]).
#[inline]
fn error_above(dist: f64, length: f64, a: DQuat, b: DQuat, worst: f64) -> Option<f64> {
    if dist <= worst && length > 0.0 {
        let x = (worst - dist) / length / 2.0;
        if x < std::f64::consts::FRAC_PI_2 {
            let x2 = x * x;
            let upper = 1.0 - x2 / 2.0 + x2 * x2 / 24.0;
            if a.dot(b).abs() >= upper + 1e-12 {
                return None;
            }
        } else {
            return None;
        }
    }
    Some(dist + length * smallest3::angle_between(a, b))
}

/// Index bounds of samples belonging to window `[start, end]`: the samples in it plus the
/// one just before (when none sits on `start`) and just after (when none sits on `end`).
fn clip<T>(v: &[T], frame: impl Fn(&T) -> u32, start: u32, end: u32) -> std::ops::Range<usize> {
    let lo = v.partition_point(|s| frame(s) < start);
    let hi = v.partition_point(|s| frame(s) <= end);
    let lo = if lo > 0 && (lo == v.len() || frame(&v[lo]) != start) {
        lo - 1
    } else {
        lo
    };
    let hi = if hi < v.len() && (hi == 0 || frame(&v[hi - 1]) != end) {
        hi + 1
    } else {
        hi
    };
    lo..hi.max(lo)
}

/// Drops the middle of every three keys in a row with the same value, and a last key equal to
/// the one before it.
fn drop_middle_equal<K: Clone>(keys: &mut Vec<K>, same: impl Fn(&K, &K) -> bool) {
    if keys.len() < 2 {
        return;
    }
    let mut out: Vec<K> = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        let n = out.len();
        if n >= 2 && same(&out[n - 1], &out[n - 2]) && same(&out[n - 1], k) && i > 0 {
            out[n - 1] = k.clone();
        } else {
            out.push(k.clone());
        }
    }
    // A last key equal to the one before adds nothing: a reader holds the value after it.
    let n = out.len();
    if n >= 2 && same(&out[n - 1], &out[n - 2]) {
        out.pop();
    }
    *keys = out;
}

/// Piece angles in the engine's order (R = Ry * Rx * Rz), radians, nearest to `prev`: of the
/// two sets `(x, y, z)` and `(π - x, y + π, z + π)`, each moved by whole turns towards `prev`,
/// the one nearest. When the angle about x is a quarter turn, z is kept from `prev`.
pub fn piece_angles(q: DQuat, prev: Option<[f64; 3]>) -> [f64; 3] {
    use std::f64::consts::{PI, TAU};
    let m = DMat3::from_quat(q.normalize());
    let r = |i: usize, j: usize| m.col(j)[i];
    let sx = (-r(1, 2)).clamp(-1.0, 1.0);
    let x = sx.asin();
    let (y, z) = if sx.abs() > 1.0 - 1e-12 {
        let z = prev.map_or(0.0, |p| p[2]);
        // R = Ry Rx(±π/2) Rz: depends on y ∓ z only; solve y with z fixed.
        let (sz, cz) = z.sin_cos();
        // Rotate back the z turn: M' = R * Rz(-z) = Ry * Rx(x).
        let a = r(0, 0) * cz + r(0, 1) * sz; // M'[0][0] = cos y
        let b = r(2, 0) * cz + r(2, 1) * sz; // M'[2][0] = -sin y
        ((-b).atan2(a), z)
    } else {
        (r(0, 2).atan2(r(2, 2)), r(1, 0).atan2(r(1, 1)))
    };
    let Some(p) = prev else {
        return [x, y, z];
    };
    let near = |v: f64, t: f64| v + ((t - v) / TAU).round() * TAU;
    let a = [near(x, p[0]), near(y, p[1]), near(z, p[2])];
    let b = [near(PI - x, p[0]), near(y + PI, p[1]), near(z + PI, p[2])];
    let d = |s: &[f64; 3]| (0..3).map(|i| (s[i] - p[i]).abs()).sum::<f64>();
    if d(&b) < d(&a) {
        b
    } else {
        a
    }
}

/// The rotation of piece angles (radians) in the engine's order: Ry * Rx * Rz.
pub fn angles_rotation(a: [f64; 3]) -> DQuat {
    DQuat::from_rotation_y(a[1]) * DQuat::from_rotation_x(a[0]) * DQuat::from_rotation_z(a[2])
}

/// 65,536ths of a turn per radian.
pub const COB_PER_RAD: f64 = 65536.0 / std::f64::consts::TAU;

/// The thinning writer: samples in, one window at a time; keys, chunks and checks out.
pub struct ThinningWriter<'w, W: Write + Seek> {
    file: FileWriter<'w, W>,
    header: Header,
    next_window: usize,
    terrain_written: HashMap<(u16, u16), i32>,
    units_seen: u32,
    projectiles_seen: u32,
    /// Keys written and worst errors so far.
    pub stats: Stats,
}

impl<'w, W: Write + Seek> ThinningWriter<'w, W> {
    /// Starts a track with these header values, info and features.
    ///
    /// Errors: as for [`FileWriter::new`].
    pub fn new(
        out: &'w mut W,
        params: FileParams,
        info: &Info,
        features: &[Feature],
    ) -> Result<Self, WriteError> {
        let nw = windows_for(params.first_frame, params.last_frame, params.window_length) as u32;
        let header = Header {
            recorder_version: params.recorder_version,
            frames_per_second: params.frames_per_second,
            first_frame: params.first_frame,
            last_frame: params.last_frame,
            window_length: params.window_length,
            num_windows: nw,
            tolerance_elmos: params.tolerance,
            position_shift: params.position_shift,
            velocity_shift: params.velocity_shift,
            rotation_bits: params.rotation_bits,
            sample_interval: params.sample_interval,
            num_units: 0,
            num_projectiles: 0,
            num_features: features.len() as u32,
            game_id: params.game_id,
            resource_tolerance: params.resource_tolerance,
            resource_fraction: params.resource_fraction,
        };
        Ok(Self {
            file: FileWriter::new(out, params, info, features)?,
            header,
            next_window: 0,
            terrain_written: HashMap::new(),
            units_seen: 0,
            projectiles_seen: 0,
            stats: Stats::default(),
        })
    }

    /// The header the track is written with.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Number of windows the track has.
    pub fn num_windows(&self) -> usize {
        self.header.num_windows as usize
    }

    /// The span of the next window to push.
    pub fn next_span(&self) -> (u32, u32) {
        self.header.window_span(self.next_window)
    }

    /// Thins, lays out, writes and checks the next window.
    ///
    /// Errors: a recorded sample that is not a number the track can hold
    /// ([`check_samples`]: a NaN or infinite position, offset or velocity, a NaN, infinite or
    /// zero-length rotation), a value that does not fit, a reference not in the window, a
    /// recorded sample further than the tolerance (named), or I/O.
    pub fn push(&mut self, input: &WindowInput) -> Result<(), WriteError> {
        let k = self.next_window;
        let (start, end) = self.header.window_span(k);
        check_samples(input)?;
        let window = self.build(input, k, start, end)?;
        let main = window.to_chunk()?;
        let rows = self.terrain_rows(&input.terrain, k, start, end)?;
        let terrain = if rows.is_empty() {
            None
        } else {
            Some(TerrainRow::to_chunk(&rows, start)?)
        };
        // Read the window back from its bytes, as a reader will, and measure every sample.
        let back =
            MainWindow::from_chunk(&main, k, start, end).map_err(|e| WriteError::ReadBack(k, e))?;
        self.check(input, &back, start, end)?;
        self.file.push_window(&main, terrain.as_deref())?;
        self.stats.windows += 1;
        self.stats.terrain_rows += rows.len() as u64;
        for u in &back.units {
            self.stats.unit_entries += 1;
            self.stats.transform_keys += u.transforms.len() as u64;
            self.stats.status_keys += u.status.len() as u64;
            self.stats.target_keys += u.targets.iter().map(|t| t.keys.len() as u64).sum::<u64>();
            self.stats.pose_tracks += u.poses.len() as u64;
            self.stats.pose_keys += u.poses.iter().map(|t| t.keys.len() as u64).sum::<u64>();
            self.stats.queue_keys += u.queue.len() as u64;
        }
        self.stats.projectile_entries += back.projectiles.len() as u64;
        self.stats.projectile_keys += back
            .projectiles
            .iter()
            .map(|p| p.keys.len() as u64)
            .sum::<u64>();
        self.stats.team_keys += back.teams.iter().map(|t| t.keys.len() as u64).sum::<u64>();
        for u in &input.units {
            self.units_seen = self.units_seen.max(u.serial + 1);
        }
        for p in &input.projectiles {
            self.projectiles_seen = self.projectiles_seen.max(p.serial + 1);
        }
        self.next_window += 1;
        Ok(())
    }

    /// Writes the header and index; returns the file writer's figures and the file length.
    ///
    /// Errors: a window was not pushed, or I/O.
    pub fn finish(self) -> Result<(u64, Stats, SectionBytes), WriteError> {
        let sb = SectionBytes {
            main: self.file.main_bytes,
            main_raw: self.file.main_raw_bytes,
            terrain: self.file.terrain_bytes,
            info: self.file.info_bytes,
            features: self.file.features_bytes,
            header_and_index: (HEADER_SIZE + 16 * self.num_windows()) as u64,
            largest_main: self.file.largest_main as u64,
        };
        let len = self.file.finish(self.units_seen, self.projectiles_seen)?;
        Ok((len, self.stats, sb))
    }

    fn build(
        &mut self,
        input: &WindowInput,
        k: usize,
        start: u32,
        end: u32,
    ) -> Result<MainWindow, WriteError> {
        let h = self.header.clone();
        let mut units: Vec<&UnitInput> = input
            .units
            .iter()
            .filter(|u| u.first_frame <= end && u.last_frame >= start)
            .collect();
        units.sort_by_key(|u| u.serial);
        let unit_index: HashMap<u32, usize> = units
            .iter()
            .enumerate()
            .map(|(i, u)| (u.serial, i))
            .collect();
        let mut projs: Vec<&ProjectileInput> = input
            .projectiles
            .iter()
            .filter(|p| p.first_frame <= end && p.last_frame >= start)
            .collect();
        projs.sort_by_key(|p| p.serial);
        let proj_index: HashMap<u32, usize> = projs
            .iter()
            .enumerate()
            .map(|(i, p)| (p.serial, i))
            .collect();
        let cx = WindowContext {
            h: &h,
            k,
            start,
            end,
            ps: h.pos_step(),
            vs: h.vel_step(),
            bits: h.rotation_bits,
            tol: h.tolerance_elmos as f64,
            unit_index,
            proj_index,
        };
        let mut out = MainWindow {
            index: k,
            start,
            end,
            ..Default::default()
        };
        // Units are thinned in parallel (each unit on its own), in order of serial number.
        for part in build_units(&cx, &units) {
            let (v, st) = part?;
            out.units.extend(v);
            self.stats.merge(&st);
        }
        for p in &projs {
            let entry = projectile_entry(&cx, p, &mut self.stats)?;
            out.projectiles.push(entry);
        }
        out.teams = team_tracks(&cx, &input.teams, &mut self.stats)?;
        Ok(out)
    }

    fn terrain_rows(
        &mut self,
        ch: &[TerrainChange],
        k: usize,
        start: u32,
        end: u32,
    ) -> Result<Vec<TerrainRow>, WriteError> {
        let ps = self.header.pos_step();
        let mut v: Vec<&TerrainChange> = ch
            .iter()
            .filter(|c| {
                if k == 0 {
                    c.frame >= start && c.frame <= end
                } else {
                    c.frame > start && c.frame <= end
                }
            })
            .collect();
        // rule 1: one row per point and frame (the last change recorded wins)
        v.sort_by_key(|c| (c.frame, c.z, c.x));
        let mut rows = Vec::new();
        let mut i = 0;
        while i < v.len() {
            let mut j = i;
            while j + 1 < v.len()
                && (v[j + 1].frame, v[j + 1].z, v[j + 1].x) == (v[i].frame, v[i].z, v[i].x)
            {
                j += 1;
            }
            let c = v[j];
            let key = (c.x, c.z);
            let before = match self.terrain_written.get(&key) {
                Some(&b) => b,
                None => round_steps(c.map_height, ps, || "terrain map height")?,
            };
            let after = round_steps(c.after, ps, || "terrain height")?;
            // rule 2: a change that rounds to nothing is not written
            if after != before {
                // rule 3: before is the after of the point's previous row
                rows.push(TerrainRow {
                    frame: c.frame,
                    x: c.x,
                    z: c.z,
                    before,
                    after,
                });
                self.terrain_written.insert(key, after);
            } else {
                self.terrain_written.entry(key).or_insert(before);
            }
            i = j + 1;
        }
        Ok(rows)
    }

    /// Measures every recorded sample in `[start, end]` against the window read back.
    fn check(
        &mut self,
        input: &WindowInput,
        w: &MainWindow,
        start: u32,
        end: u32,
    ) -> Result<(), WriteError> {
        let h = &self.header;
        let tol = h.tolerance_elmos as f64;
        let ps = h.pos_step();
        let bits = h.rotation_bits;
        let by_serial: HashMap<u32, &Unit> = w.units.iter().map(|u| (u.serial, u)).collect();
        // Units are measured in parallel, as they were thinned.
        let check_unit = |u: &UnitInput, wu: &Unit, st: &mut Stats| -> Result<(), WriteError> {
            for x in u.samples.iter().filter(|x| {
                x.frame >= start
                    && x.frame <= end
                    && x.frame >= u.first_frame
                    && x.frame <= u.last_frame
            }) {
                let t = (x.frame - start) as f64;
                let (p, q) = wu.transform_at(t, bits);
                let Some(e) = error_above(
                    (p * ps).distance(x.pos),
                    u.radius,
                    q,
                    x.rot.normalize(),
                    st.worst_unit,
                ) else {
                    continue;
                };
                st.worst_unit = st.worst_unit.max(e);
                if e > tol {
                    return Err(WriteError::Tolerance(format!(
                        "unit {} (serial {}) at frame {}: {e:.8} elmos from the track, tolerance {tol}",
                        u.unit_id, u.serial, x.frame
                    )));
                }
            }
            for x in u.status.iter().filter(|x| {
                x.frame >= start
                    && x.frame <= end
                    && x.frame >= u.first_frame
                    && x.frame <= u.last_frame
            }) {
                let (hh, bb, fl) = wu.status_at((x.frame - start) as f64);
                let e = (hh - x.health.clamp(0.0, 1.0) * 65535.0)
                    .abs()
                    .max((bb - x.build.clamp(0.0, 1.0) * 65535.0).abs());
                st.worst_status_steps = st.worst_status_steps.max(e);
                if e > 1.0 || fl != x.flags {
                    return Err(WriteError::Tolerance(format!(
                        "unit {} (serial {}) status at frame {}: {e:.3} steps from the track (or flags differ)",
                        u.unit_id, u.serial, x.frame
                    )));
                }
            }
            for pc in &u.pieces {
                let tr = wu.poses.iter().find(|t| t.piece == pc.piece);
                for x in pc.samples.iter().filter(|x| {
                    x.frame >= start
                        && x.frame <= end
                        && x.frame >= u.first_frame
                        && x.frame <= u.last_frame
                }) {
                    let (a, o) =
                        tr.map_or(([0.0; 3], [0.0; 3]), |t| t.at((x.frame - start) as f64));
                    let rot = angles_rotation(a.map(|v| v / COB_PER_RAD));
                    let Some(e) = error_above(
                        (DVec3::from(o) * ps).distance(x.offset),
                        pc.reach,
                        rot,
                        x.rot.normalize(),
                        st.worst_piece,
                    ) else {
                        continue;
                    };
                    st.worst_piece = st.worst_piece.max(e);
                    if e > tol {
                        return Err(WriteError::Tolerance(format!(
                            "unit {} (serial {}) piece {} at frame {}: {e:.8} elmos from the track, tolerance {tol}",
                            u.unit_id, u.serial, pc.piece, x.frame
                        )));
                    }
                }
            }
            Ok(())
        };
        let pairs: Vec<(&UnitInput, &Unit)> = input
            .units
            .iter()
            .filter_map(|u| by_serial.get(&u.serial).map(|wu| (u, *wu)))
            .collect();
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(8);
        let per = pairs.len().div_ceil(threads).max(16);
        let parts: Vec<(Result<(), WriteError>, Stats)> = std::thread::scope(|sc| {
            let handles: Vec<_> = pairs
                .chunks(per)
                .map(|c| {
                    let check_unit = &check_unit;
                    sc.spawn(move || {
                        let mut st = Stats::default();
                        let r = c.iter().try_for_each(|(u, wu)| check_unit(u, wu, &mut st));
                        (r, st)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        for (r, st) in parts {
            r?;
            self.stats.merge(&st);
        }
        let pby: HashMap<u32, &Projectile> = w.projectiles.iter().map(|p| (p.serial, p)).collect();
        for p in &input.projectiles {
            let Some(wp) = pby.get(&p.serial) else {
                continue;
            };
            for x in p.samples.iter().filter(|x| {
                x.frame >= start
                    && x.frame <= end
                    && x.frame >= p.first_frame
                    && x.frame <= p.last_frame
            }) {
                let (pos, vel) = wp.at((x.frame - start) as f64, ps, h.vel_step());
                let e = pos.distance(x.pos);
                self.stats.worst_projectile = self.stats.worst_projectile.max(e);
                self.stats.worst_projectile_velocity = self
                    .stats
                    .worst_projectile_velocity
                    .max(vel.distance(x.vel));
                if e > tol {
                    return Err(WriteError::Tolerance(format!(
                        "projectile serial {} at frame {}: {e:.8} elmos from the track, tolerance {tol}",
                        p.serial, x.frame
                    )));
                }
            }
        }
        for tr in &input.teams {
            let wt = w
                .teams
                .iter()
                .find(|t| t.team == tr.team && t.code == tr.code);
            for x in tr.samples.iter().filter(|x| x.0 >= start && x.0 <= end) {
                let v = match wt {
                    Some(t) => t.at((x.0 - start) as f64),
                    None if tr.code < RULES_PARAM_BASE => Some(0.0),
                    None => None,
                };
                let s = x.1 as f64;
                let ok = match v {
                    None => false,
                    Some(v) if is_exact_code(tr.code) => v == s,
                    Some(v) => {
                        let allow = h.value_allowance(s);
                        let ratio = if allow > 0.0 {
                            (v - s).abs() / allow
                        } else if v == s {
                            0.0
                        } else {
                            f64::INFINITY
                        };
                        self.stats.worst_team_ratio = self.stats.worst_team_ratio.max(ratio);
                        ratio <= 1.0
                    }
                };
                if !ok {
                    return Err(WriteError::Tolerance(format!(
                        "team {} code {} at frame {}: the track gives {v:?}, recorded {s}",
                        tr.team, tr.code, x.0
                    )));
                }
            }
        }
        Ok(())
    }
}

/// What every part of one window's thinning reads: the header's steps and tolerance, the
/// window's span, and the place in the window of each unit and projectile serial.
struct WindowContext<'a> {
    /// The track's header.
    h: &'a Header,
    /// Window number.
    k: usize,
    /// First frame of the window.
    start: u32,
    /// Last frame of the window.
    end: u32,
    /// Position step, elmos.
    ps: f64,
    /// Velocity step, elmos per frame.
    vs: f64,
    /// Bits per smallest-three rotation component.
    bits: u8,
    /// Position tolerance, elmos.
    tol: f64,
    /// Unit serial to its index in the window's unit list.
    unit_index: HashMap<u32, usize>,
    /// Projectile serial to its index in the window's projectile list.
    proj_index: HashMap<u32, usize>,
}

impl WindowContext<'_> {
    /// Whether a sample at frame `f` is counted in this window: a frame on a window edge is
    /// in both windows, and its samples are counted in the first.
    fn counted(&self, f: u32) -> bool {
        f >= self.start && (f < self.end || self.end == self.h.last_frame)
    }
}

/// The name of a unit in an error message, followed by `what`.
fn unit_path(u: &UnitInput, what: &str) -> String {
    format!("unit {} (serial {}) {what}", u.unit_id, u.serial)
}

/// Thins every unit of the window, in parallel chunks in order of serial number; each
/// chunk's units with the figures of their thinning.
fn build_units(
    cx: &WindowContext,
    units: &[&UnitInput],
) -> Vec<Result<(Vec<Unit>, Stats), WriteError>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let per = units.len().div_ceil(threads).max(16);
    if units.len() <= per {
        let mut st = Stats::default();
        vec![units
            .iter()
            .map(|u| build_unit(cx, u, &mut st))
            .collect::<Result<Vec<_>, _>>()
            .map(|v| (v, st))]
    } else {
        std::thread::scope(|sc| {
            let handles: Vec<_> = units
                .chunks(per)
                .map(|c| {
                    sc.spawn(move || {
                        let mut st = Stats::default();
                        c.iter()
                            .map(|u| build_unit(cx, u, &mut st))
                            .collect::<Result<Vec<_>, _>>()
                            .map(|v| (v, st))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    }
}

/// One unit's entry in the window: its frames in the window, whether it lives on before or
/// after it, and each of its curves.
fn build_unit(cx: &WindowContext, u: &UnitInput, st: &mut Stats) -> Result<Unit, WriteError> {
    let start = cx.start;
    let end = cx.end;
    let first = u.first_frame.max(start);
    let last = u.last_frame.min(end);
    let mut flags = 0;
    if u.first_frame < start {
        flags |= 1;
    }
    if u.last_frame > end {
        flags |= 2;
    }
    let tk = unit_transform_keys(cx, u, first, last, st)?;
    let sk = unit_status_keys(cx, u, first, last, st)?;
    let targets = unit_target_tracks(cx, u, first, last)?;
    let poses = unit_pose_tracks(cx, u, first, last, st)?;
    let queue = unit_build_queue(cx, u, first, last)?;
    Ok(Unit {
        unit_id: u.unit_id,
        serial: u.serial,
        def: u.def,
        team: u.team,
        flags,
        first: (first - start) as u16,
        last: (last - start) as u16,
        transforms: tk,
        status: sk,
        targets,
        poses,
        queue,
    })
}

/// Transform keys of a unit over frames `first..=last`: thinned on the rounded values, a
/// sample measured by its distance plus radius x angle.
fn unit_transform_keys(
    cx: &WindowContext,
    u: &UnitInput,
    first: u32,
    last: u32,
    st: &mut Stats,
) -> Result<Vec<TransformKey>, WriteError> {
    let (start, ps, bits, tol) = (cx.start, cx.ps, cx.bits, cx.tol);
    let counted = |f: u32| cx.counted(f);
    let path = |what: &str| unit_path(u, what);
    let r = clip(&u.samples, |s| s.frame, first, last);
    let s = &u.samples[r];
    if s.is_empty() {
        return Err(WriteError::Input(path(
            "has no transform sample in its window",
        )));
    }
    st.unit_samples += s.iter().filter(|x| counted(x.frame)).count() as u64;
    let mut rp = Vec::with_capacity(s.len());
    let mut rq = Vec::with_capacity(s.len());
    for x in s {
        let p = [
            round_steps(x.pos.x, ps, || path("position x"))?,
            round_steps(x.pos.y, ps, || path("position y"))?,
            round_steps(x.pos.z, ps, || path("position z"))?,
        ];
        rp.push(p);
        let (d, c) = smallest3::encode(x.rot, bits);
        rq.push((d, c, smallest3::decode(d, c, bits)));
    }
    let radius = u.radius;
    let forced = |i: usize| {
        let f = s[i].frame;
        f <= first || f >= last
    };
    let keys = select_keys(s.len(), &forced, &mut |a, b| {
        let (fa, fb) = (s[a].frame as f64, s[b].frame as f64);
        let pa = DVec3::from(rp[a].map(|v| v as f64)) * ps;
        let pb = DVec3::from(rp[b].map(|v| v as f64)) * ps;
        (a + 1..b).all(|i| {
            let t = (s[i].frame as f64 - fa) / (fb - fa);
            let p = pa + (pb - pa) * t;
            let q = nlerp_d(rq[a].2, rq[b].2, t);
            within(
                p.distance(s[i].pos),
                radius,
                q,
                || s[i].rot.normalize(),
                tol,
            )
        })
    });
    st.kept_transform += keys.iter().filter(|&&i| counted(s[i].frame)).count() as u64;
    let mut tk: Vec<TransformKey> = Vec::new();
    let key_of = |i: usize| TransformKey {
        offset: s[i].frame.saturating_sub(start),
        pos: rp[i],
        rot_dropped: rq[i].0,
        rot: rq[i].1.map(|v| v as i16),
    };
    let interp = |i: usize, j: usize, f: u32| -> TransformKey {
        let t = if s[j].frame == s[i].frame {
            0.0
        } else {
            (f - s[i].frame) as f64 / (s[j].frame - s[i].frame) as f64
        };
        let pa = DVec3::from(rp[i].map(|v| v as f64));
        let pb = DVec3::from(rp[j].map(|v| v as f64));
        let p = pa + (pb - pa) * t;
        let q = nlerp_d(rq[i].2, rq[j].2, t);
        let (d, c) = smallest3::encode(q, bits);
        TransformKey {
            offset: f - start,
            pos: [p.x.round() as i32, p.y.round() as i32, p.z.round() as i32],
            rot_dropped: d,
            rot: c.map(|v| v as i16),
        }
    };
    edge_keys(
        &keys,
        |i| s[i].frame,
        first,
        last,
        &mut tk,
        key_of,
        interp,
        |a, b| a.pos == b.pos && a.rot == b.rot && a.rot_dropped == b.rot_dropped,
    );
    drop_middle_equal(&mut tk, |a, b| {
        a.pos == b.pos && a.rot == b.rot && a.rot_dropped == b.rot_dropped
    });
    Ok(tk)
}

/// Status keys of a unit over frames `first..=last`: health and build progress within one
/// step of 65,535, flags exact.
fn unit_status_keys(
    cx: &WindowContext,
    u: &UnitInput,
    first: u32,
    last: u32,
    st: &mut Stats,
) -> Result<Vec<StatusKey>, WriteError> {
    let start = cx.start;
    let counted = |f: u32| cx.counted(f);
    let path = |what: &str| unit_path(u, what);
    let r = clip(&u.status, |s| s.frame, first, last);
    let ss = &u.status[r];
    let mut sk: Vec<StatusKey> = Vec::new();
    if ss.is_empty() {
        return Err(WriteError::Input(path(
            "has no status sample in its window (every unit has a status key)",
        )));
    }
    {
        let q16 = |v: f64| (v.clamp(0.0, 1.0) * 65535.0).round() as u16;
        let rv: Vec<(u16, u16)> = ss.iter().map(|x| (q16(x.health), q16(x.build))).collect();
        let forced = |i: usize| {
            let f = ss[i].frame;
            f <= first || f >= last || (i > 0 && ss[i].flags != ss[i - 1].flags)
        };
        let keys = select_keys(ss.len(), &forced, &mut |a, b| {
            let (fa, fb) = (ss[a].frame as f64, ss[b].frame as f64);
            (a + 1..b).all(|i| {
                let t = (ss[i].frame as f64 - fa) / (fb - fa);
                let hh = lerp(rv[a].0 as f64, rv[b].0 as f64, t);
                let bb = lerp(rv[a].1 as f64, rv[b].1 as f64, t);
                (hh - ss[i].health.clamp(0.0, 1.0) * 65535.0).abs() <= 1.0
                    && (bb - ss[i].build.clamp(0.0, 1.0) * 65535.0).abs() <= 1.0
                    && ss[i].flags == ss[a].flags
            })
        });
        st.kept_status += keys.iter().filter(|&&i| counted(ss[i].frame)).count() as u64;
        let key_of = |i: usize| StatusKey {
            offset: ss[i].frame.saturating_sub(start),
            health: rv[i].0,
            build: rv[i].1,
            flags: ss[i].flags,
        };
        let interp = |i: usize, j: usize, f: u32| {
            let t = if ss[j].frame == ss[i].frame {
                0.0
            } else {
                (f - ss[i].frame) as f64 / (ss[j].frame - ss[i].frame) as f64
            };
            StatusKey {
                offset: f - start,
                health: lerp(rv[i].0 as f64, rv[j].0 as f64, t).round() as u16,
                build: lerp(rv[i].1 as f64, rv[j].1 as f64, t).round() as u16,
                flags: ss[i].flags,
            }
        };
        edge_keys(
            &keys,
            |i| ss[i].frame,
            first,
            last,
            &mut sk,
            key_of,
            interp,
            |a, b| a.health == b.health && a.build == b.build && a.flags == b.flags,
        );
        drop_middle_equal(&mut sk, |a, b| {
            a.health == b.health && a.build == b.build && a.flags == b.flags
        });
    }
    Ok(sk)
}

/// Target tracks of a unit over frames `first..=last`, one per weapon: held values, with a
/// key at the window's first offset when one is held; unit and projectile references become
/// indices in the window.
fn unit_target_tracks(
    cx: &WindowContext,
    u: &UnitInput,
    first: u32,
    last: u32,
) -> Result<Vec<TargetTrack>, WriteError> {
    let (k, start, ps) = (cx.k, cx.start, cx.ps);
    let (unit_index, proj_index) = (&cx.unit_index, &cx.proj_index);
    let path = |what: &str| unit_path(u, what);
    let mut targets = Vec::new();
    for (weapon, keys) in &u.targets {
        let mut out_keys: Vec<TargetKey> = Vec::new();
        let held = keys.iter().rposition(|x| x.frame <= first);
        let from = held.unwrap_or(0);
        for x in keys[from..].iter().take_while(|x| x.frame <= last) {
            let f = x.frame.max(first);
            let reference = match x.kind {
                1 | 16 | 17 | 20 => *unit_index.get(&x.reference).ok_or_else(|| {
                    WriteError::Input(path(&format!(
                        "targets unit serial {} at frame {}, which is not in window {k}",
                        x.reference, x.frame
                    )))
                })? as u32,
                4 => *proj_index.get(&x.reference).ok_or_else(|| {
                    WriteError::Input(path(&format!(
                        "targets projectile serial {} at frame {}, which is not in window {k}",
                        x.reference, x.frame
                    )))
                })? as u32,
                _ => x.reference,
            };
            let pos = match (x.kind >= 128, x.pos) {
                (true, Some(p)) => Some([
                    round_steps(p.x, ps, || path("target x"))?,
                    round_steps(p.y, ps, || path("target y"))?,
                    round_steps(p.z, ps, || path("target z"))?,
                ]),
                (true, None) => {
                    return Err(WriteError::Input(path(
                        "has a position target without a position",
                    )))
                }
                _ => None,
            };
            let key = TargetKey {
                offset: f - start,
                kind: x.kind,
                reference,
                power: if *weapon == 0 {
                    x.power15.min(15) * 17
                } else {
                    0
                },
                pos,
            };
            if out_keys.last().is_some_and(|l| l.offset == key.offset) {
                out_keys.pop();
            }
            out_keys.push(key);
        }
        if !(out_keys.is_empty() || out_keys.len() == 1 && out_keys[0].kind == 0) {
            targets.push(TargetTrack {
                weapon: *weapon,
                keys: out_keys,
            });
        }
    }
    Ok(targets)
}

/// Pose tracks of a unit's pieces over frames `first..=last`, in order of piece: three
/// angles and three offsets linear, a sample measured by offset distance plus reach x angle;
/// a piece at rest for the whole window has no track.
fn unit_pose_tracks(
    cx: &WindowContext,
    u: &UnitInput,
    first: u32,
    last: u32,
    st: &mut Stats,
) -> Result<Vec<PoseTrack>, WriteError> {
    let (start, ps, tol) = (cx.start, cx.ps, cx.tol);
    let counted = |f: u32| cx.counted(f);
    let path = |what: &str| unit_path(u, what);
    let mut poses = Vec::new();
    for pc in &u.pieces {
        let r = clip(&pc.samples, |s| s.frame, first, last);
        let ps_ = &pc.samples[r.clone()];
        if ps_.is_empty() {
            continue;
        }
        st.piece_samples += ps_.iter().filter(|x| counted(x.frame)).count() as u64;
        // continuous angles from the start of the recording's slice
        let mut prev = None;
        let mut ang = Vec::with_capacity(ps_.len());
        for x in ps_ {
            let a = piece_angles(x.rot, prev);
            prev = Some(a);
            ang.push(a);
        }
        let mut ra = Vec::with_capacity(ps_.len());
        let mut ro = Vec::with_capacity(ps_.len());
        for (x, a) in ps_.iter().zip(&ang) {
            ra.push(a.map(|v| (v * COB_PER_RAD).round() as i64));
            ro.push([
                round_steps(x.offset.x, ps, || path("piece offset x"))?,
                round_steps(x.offset.y, ps, || path("piece offset y"))?,
                round_steps(x.offset.z, ps, || path("piece offset z"))?,
            ]);
        }
        let reach = pc.reach;
        let forced = |i: usize| {
            let f = ps_[i].frame;
            f <= first || f >= last
        };
        let keys = select_keys(ps_.len(), &forced, &mut |a, b| {
            let (fa, fb) = (ps_[a].frame as f64, ps_[b].frame as f64);
            (a + 1..b).all(|i| {
                let t = (ps_[i].frame as f64 - fa) / (fb - fa);
                let an = [0, 1, 2].map(|x| lerp(ra[a][x] as f64, ra[b][x] as f64, t) / COB_PER_RAD);
                let of =
                    DVec3::from([0, 1, 2].map(|x| lerp(ro[a][x] as f64, ro[b][x] as f64, t) * ps));
                within(
                    of.distance(ps_[i].offset),
                    reach,
                    ps_[i].rot.normalize(),
                    || angles_rotation(an),
                    tol,
                )
            })
        });
        st.kept_pose += keys.iter().filter(|&&i| counted(ps_[i].frame)).count() as u64;
        #[derive(Clone)]
        struct PK {
            offset: u32,
            a: [i64; 3],
            o: [i32; 3],
        }
        let mut pk: Vec<PK> = Vec::new();
        let key_of = |i: usize| PK {
            offset: ps_[i].frame.saturating_sub(start),
            a: ra[i],
            o: ro[i],
        };
        let interp = |i: usize, j: usize, f: u32| {
            let t = if ps_[j].frame == ps_[i].frame {
                0.0
            } else {
                (f - ps_[i].frame) as f64 / (ps_[j].frame - ps_[i].frame) as f64
            };
            PK {
                offset: f - start,
                a: [0, 1, 2].map(|x| lerp(ra[i][x] as f64, ra[j][x] as f64, t).round() as i64),
                o: [0, 1, 2].map(|x| lerp(ro[i][x] as f64, ro[j][x] as f64, t).round() as i32),
            }
        };
        edge_keys(
            &keys,
            |i| ps_[i].frame,
            first,
            last,
            &mut pk,
            key_of,
            interp,
            |a, b| a.a == b.a && a.o == b.o,
        );
        drop_middle_equal(&mut pk, |a, b| a.a == b.a && a.o == b.o);
        if pk.iter().all(|x| x.a == [0; 3] && x.o == [0; 3]) {
            continue; // at rest for the whole window: no track
        }
        // whole-turn shift per angle so the first key is in -32768..=32767
        let shift = [0, 1, 2].map(|x| (pk[0].a[x] + 32768).div_euclid(65536) * 65536);
        let mut keys_out = Vec::with_capacity(pk.len());
        for x in &pk {
            let mut a = [0i32; 3];
            for i in 0..3 {
                let v = x.a[i] - shift[i];
                if v.unsigned_abs() > LUA_MAX as u64 {
                    return Err(WriteError::Encode(enc(path(&format!(
                        "piece {} angle {v} is beyond 16,777,215 within one window",
                        pc.piece
                    )))));
                }
                a[i] = v as i32;
            }
            keys_out.push(PoseKey {
                offset: x.offset,
                angles: a,
                offsets: x.o,
            });
        }
        poses.push(PoseTrack {
            piece: pc.piece,
            keys: keys_out,
        });
    }
    poses.sort_by_key(|p| p.piece);
    Ok(poses)
}

/// Build queue keys of a unit over frames `first..=last`: held values.
fn unit_build_queue(
    cx: &WindowContext,
    u: &UnitInput,
    first: u32,
    last: u32,
) -> Result<Vec<QueueKey>, WriteError> {
    let (start, ps) = (cx.start, cx.ps);
    let path = |what: &str| unit_path(u, what);
    let mut queue: Vec<QueueKey> = Vec::new();
    let held = u.queue.iter().rposition(|x| x.0 <= first);
    for (f, items) in u.queue[held.unwrap_or(0)..]
        .iter()
        .take_while(|x| x.0 <= last)
    {
        let items = items
            .iter()
            .map(|&(def, x, z, facing)| {
                Ok(QueueItem {
                    def,
                    x: round_steps(x, ps, || path("queue x"))?,
                    z: round_steps(z, ps, || path("queue z"))?,
                    facing,
                })
            })
            .collect::<Result<Vec<_>, WriteError>>()?;
        let key = QueueKey {
            offset: f.max(&first) - start,
            items,
        };
        if queue.last().is_some_and(|l| l.offset == key.offset) {
            queue.pop();
        }
        queue.push(key);
    }
    if queue.len() == 1 && queue[0].items.is_empty() {
        queue.clear();
    }
    Ok(queue)
}

/// A projectile's entry in the window: a cubic with the velocity as its slope.
fn projectile_entry(
    cx: &WindowContext,
    p: &ProjectileInput,
    st: &mut Stats,
) -> Result<Projectile, WriteError> {
    let (start, end, ps, vs, tol) = (cx.start, cx.end, cx.ps, cx.vs, cx.tol);
    let unit_index = &cx.unit_index;
    let counted = |f: u32| cx.counted(f);
    let first = p.first_frame.max(start);
    let last = p.last_frame.min(end);
    let r = clip(&p.samples, |s| s.frame, first, last);
    let s = &p.samples[r];
    let path = |what: &str| format!("projectile serial {} {what}", p.serial);
    if s.is_empty() {
        return Err(WriteError::Input(path("has no sample in its window")));
    }
    st.projectile_samples += s.iter().filter(|x| counted(x.frame)).count() as u64;
    let mut rp = Vec::with_capacity(s.len());
    let mut rv = Vec::with_capacity(s.len());
    for x in s {
        rp.push([
            round_steps(x.pos.x, ps, || path("x"))?,
            round_steps(x.pos.y, ps, || path("y"))?,
            round_steps(x.pos.z, ps, || path("z"))?,
        ]);
        rv.push([
            round_steps(x.vel.x, vs, || path("vx"))?,
            round_steps(x.vel.y, vs, || path("vy"))?,
            round_steps(x.vel.z, vs, || path("vz"))?,
        ]);
    }
    let pv = |i: usize| DVec3::from(rp[i].map(|v| v as f64)) * ps;
    let vv = |i: usize| DVec3::from(rv[i].map(|v| v as f64)) * vs;
    let forced = |i: usize| {
        let f = s[i].frame;
        f <= first || f >= last
    };
    let keys = select_keys(s.len(), &forced, &mut |a, b| {
        let n = (s[b].frame - s[a].frame) as f64;
        (a + 1..b).all(|i| {
            let t = (s[i].frame - s[a].frame) as f64 / n;
            hermite(pv(a), vv(a), pv(b), vv(b), n, t).distance(s[i].pos) <= tol
        })
    });
    st.kept_projectile += keys.iter().filter(|&&i| counted(s[i].frame)).count() as u64;
    let mut pk: Vec<ProjectileKey> = Vec::new();
    let key_of = |i: usize| ProjectileKey {
        offset: s[i].frame.saturating_sub(start),
        pos: rp[i],
        vel: rv[i],
    };
    let interp = |i: usize, j: usize, f: u32| {
        let n = (s[j].frame - s[i].frame) as f64;
        let t = if n == 0.0 {
            0.0
        } else {
            (f - s[i].frame) as f64 / n
        };
        let pp = hermite(pv(i), vv(i), pv(j), vv(j), n, t) / ps;
        let v = hermite_velocity(pv(i), vv(i), pv(j), vv(j), n, t) / vs;
        ProjectileKey {
            offset: f - start,
            pos: [
                pp.x.round() as i32,
                pp.y.round() as i32,
                pp.z.round() as i32,
            ],
            vel: [v.x.round() as i32, v.y.round() as i32, v.z.round() as i32],
        }
    };
    // a projectile always has a key at both ends: never skip the edge key
    edge_keys(
        &keys,
        |i| s[i].frame,
        first,
        last,
        &mut pk,
        key_of,
        interp,
        |_, _| false,
    );
    let mut flags = 0;
    if p.first_frame < start {
        flags |= 1;
    }
    if p.last_frame > end {
        flags |= 2;
    }
    Ok(Projectile {
        serial: p.serial,
        weapon: p.weapon,
        team: p.team,
        flags,
        owner: p
            .owner
            .and_then(|o| unit_index.get(&o))
            .map_or(NO_OWNER, |&i| i as u16),
        first: (first - start) as u16,
        last: (last - start) as u16,
        keys: pk,
    })
}

/// The window's team number tracks, in order of team and code: exact codes kept exactly,
/// the others within the header's value allowance; a game-state track that is zero for the
/// whole window is left out.
fn team_tracks(
    cx: &WindowContext,
    teams_in: &[TeamInput],
    st: &mut Stats,
) -> Result<Vec<TeamTrack>, WriteError> {
    let (h, start, end) = (cx.h, cx.start, cx.end);
    let counted = |f: u32| cx.counted(f);
    let mut tracks = Vec::new();
    let mut teams: Vec<&TeamInput> = teams_in.iter().collect();
    teams.sort_by_key(|t| (t.team, t.code));
    for w in teams.windows(2) {
        if (w[0].team, w[0].code) == (w[1].team, w[1].code) {
            return Err(WriteError::Input(format!(
                "two tracks for team {} code {}",
                w[0].team, w[0].code
            )));
        }
    }
    for tr in teams {
        let r = clip(&tr.samples, |s| s.0, start, end);
        let s = &tr.samples[r];
        if s.is_empty() || s.iter().all(|x| x.0 > end) {
            continue;
        }
        if let Some(x) = s.iter().find(|x| !x.1.is_finite()) {
            return Err(WriteError::Input(format!(
                "team {} code {} at frame {}: value {} is not finite",
                tr.team, tr.code, x.0, x.1
            )));
        }
        st.team_samples += s.iter().filter(|x| counted(x.0)).count() as u64;
        let exact = is_exact_code(tr.code);
        let forced = |i: usize| s[i].0 <= start || s[i].0 >= end;
        let keys = select_keys(s.len(), &forced, &mut |a, b| {
            let (fa, fb) = (s[a].0 as f64, s[b].0 as f64);
            (a + 1..b).all(|i| {
                let t = (s[i].0 as f64 - fa) / (fb - fa);
                let v = lerp(s[a].1 as f64, s[b].1 as f64, t);
                if exact {
                    v == s[i].1 as f64
                } else {
                    (v - s[i].1 as f64).abs() <= h.value_allowance(s[i].1 as f64)
                }
            })
        });
        st.kept_team += keys.iter().filter(|&&i| counted(s[i].0)).count() as u64;
        let mut tk: Vec<(u32, f32)> = Vec::new();
        let first_frame = s[0].0.max(start);
        let interp = |i: usize, j: usize, f: u32| {
            let t = if s[j].0 == s[i].0 {
                0.0
            } else {
                (f - s[i].0) as f64 / (s[j].0 - s[i].0) as f64
            };
            (f - start, lerp(s[i].1 as f64, s[j].1 as f64, t) as f32)
        };
        edge_keys(
            &keys,
            |i| s[i].0,
            first_frame,
            end,
            &mut tk,
            |i| (s[i].0.saturating_sub(start), s[i].1),
            interp,
            |a, b| a.1 == b.1 && tr.code < RULES_PARAM_BASE,
        );
        drop_middle_equal(&mut tk, |a, b| a.1 == b.1);
        if tr.code < RULES_PARAM_BASE && tk.iter().all(|x| x.1 == 0.0) {
            continue;
        }
        tracks.push(TeamTrack {
            team: tr.team,
            code: tr.code,
            keys: tk,
        });
    }
    Ok(tracks)
}

/// Team number codes kept exactly: storage, share level and rules parameters.
pub fn is_exact_code(code: u16) -> bool {
    matches!(code, 1 | 5 | 17 | 21) || code >= RULES_PARAM_BASE
}

/// Section sizes of a written track.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SectionBytes {
    /// Main chunks, compressed.
    pub main: u64,
    /// Main chunks before compression.
    pub main_raw: u64,
    /// Terrain chunks, compressed.
    pub terrain: u64,
    /// Info chunk.
    pub info: u64,
    /// Features chunk.
    pub features: u64,
    /// Header and index.
    pub header_and_index: u64,
    /// Largest main chunk, decompressed.
    pub largest_main: u64,
}

/// Cuts one curve's selected keys to `[first, last]` of a window: the keys inside, and a key
/// worked out from the segment across an edge when no key sits on it, unless the first (or
/// last) copied key has the same rounded value.
#[allow(clippy::too_many_arguments)]
fn edge_keys<K: Clone>(
    keys: &[usize],
    frame: impl Fn(usize) -> u32,
    first: u32,
    last: u32,
    out: &mut Vec<K>,
    key_of: impl Fn(usize) -> K,
    interp: impl Fn(usize, usize, u32) -> K,
    same: impl Fn(&K, &K) -> bool,
) {
    let inside: Vec<usize> = keys
        .iter()
        .copied()
        .filter(|&i| frame(i) >= first && frame(i) <= last)
        .collect();
    // value at `first` when no key sits there
    if inside.first().is_none_or(|&i| frame(i) != first) {
        let before = keys.iter().copied().rfind(|&i| frame(i) < first);
        let after = keys.iter().copied().find(|&i| frame(i) > first);
        let e = match (before, after) {
            (Some(a), Some(b)) => Some(interp(a, b, first)),
            (Some(a), None) => Some(interp(a, a, first)),
            (None, Some(b)) => Some(interp(b, b, first)),
            (None, None) => None,
        };
        if let Some(e) = e {
            let skip = inside.first().is_some_and(|&i| same(&key_of(i), &e));
            if !skip {
                out.push(e);
            }
        }
    }
    for &i in &inside {
        out.push(key_of(i));
    }
    if inside.last().is_none_or(|&i| frame(i) != last) && last > first {
        let before = keys.iter().copied().rfind(|&i| frame(i) < last);
        let after = keys.iter().copied().find(|&i| frame(i) > last);
        let e = match (before, after) {
            (Some(a), Some(b)) => Some(interp(a, b, last)),
            (Some(a), None) => Some(interp(a, a, last)),
            (None, Some(b)) => Some(interp(b, b, last)),
            (None, None) => None,
        };
        if let Some(e) = e {
            let skip = out.last().is_some_and(|l| same(l, &e));
            if !skip {
                out.push(e);
            }
        }
    }
}

use statepack_codecs::quant::lerp;

/// `body` as a zlib stream that inflates to at most [`super::MAX_CHUNK_RATIO`] times its own
/// length, as readers require: at `level`, else at level 1, else in stored blocks (which
/// never inflate to more than their length).
pub fn compress_within_ratio(body: &[u8], level: u32) -> Vec<u8> {
    for l in [level, 1, 0] {
        let z = deflate(body, l);
        if body.len() <= super::chunk_limit(z.len()) {
            return z;
        }
    }
    deflate(body, 0)
}
