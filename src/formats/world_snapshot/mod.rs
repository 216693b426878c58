//! MsgWorldSnapshot: quantized, bit-packed entity records, encoded once per tick and stitched
//! per peer (spec `world-snapshot-bitpacking.txt`; layout and decisions in
//! `docs/formats/world_snapshot.md`).
//!
//! - [`EntityState`] is an entity as the server simulates it (metres, m/s, rad/s, kg).
//! - [`encode_blob`] quantizes it once per tick into a record without its origin index (a
//!   *blob*): [`EncodedEntity`] holds the full and delta blobs, and the own-entity variants.
//! - [`SnapshotWriter`] stitches blobs into one peer's snapshot: an origin-index varint, then
//!   the blob bytes as they are; origins are deduplicated per snapshot; despawns go in TLVs;
//!   the body is zstd-compressed when that is strictly smaller.
//! - [`decode`] reads a snapshot back (decompressing, checking every cross-field rule) and
//!   [`RecordView::entity`] dequantizes a record against its origin.
//! - [`assembler`] chooses records per client (byte budget, relevance, acks); [`client`] is
//!   the client side (typeIndex / generation cache, stale-generation guard, ack mask). The
//!   bot swarm that drives them is [`crate::sim::wsnap_swarm`]; the hand-written codec of the
//!   same records (speed baseline and cross-check) is `benches/common/wsnap_handcoded.rs`.

use crate::generated::world_snapshot::{
    Despawn, EntityBlob, EntityRecord, EntityRef, Origin, RecordStream, Tlv, TlvBlock,
    WorldSnapshot,
};
use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};
use statepack_codecs::netquant as nq;
use statepack_runtime::bits::leb128_len;
use statepack_runtime::io::{ByteReader, ByteWriter, DecodeError, DecodeErrorKind};

pub mod assembler;
pub mod client;
mod writer;

pub use writer::{stitch, tick_origins, SnapshotWriter};

/// Message type byte of a world snapshot (`W`).
pub const MSG_TYPE: u8 = 0x57;
/// Size of the header.
pub const HEADER_BYTES: usize = 24;
/// Header flag: the body is one zstd frame.
pub const FLAG_ZSTD: u8 = 1;
/// TLV type of a despawn list.
pub const TLV_DESPAWN: u8 = 1;
/// Largest raw body a snapshot may declare (1 MiB): a snapshot is one network message.
pub const MAX_BODY_BYTES: usize = 1 << 20;
/// Largest ratio of raw body to zstd frame accepted on read (64), so that decompression never
/// allocates more than 64 bytes of body per input byte. Real snapshot bodies compress by far
/// less (the swarm's by about 1.1 to 2 times, see `docs/formats/world_snapshot.md`).
pub const MAX_ZSTD_RATIO: usize = 64;
/// zstd level used for bodies.
pub const ZSTD_LEVEL: i32 = 3;
/// Size of the old fixed new/baseline entity entry (MsgEntityEntry), for comparisons.
pub const OLD_ENTRY_BYTES: usize = 88;
/// Size of the old fixed steady-state update (MsgEntityUpdate), for comparisons.
pub const OLD_UPDATE_BYTES: usize = 64;

/// The loadout block of the own entity (64 bits on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Loadout {
    /// Selected weapon station.
    pub selected_station: u8,
    /// Rounds left at the selected station.
    pub station_rounds: u16,
    /// Weapon flags; bit 0 = seeker locked.
    pub weapon_flags: u8,
    /// Mass of the stores still on the rails, kg (sent in 1 kg steps, clamped to 0..=65 535).
    pub payload_mass_kg: f64,
    /// Zero-lift drag coefficient of those stores (sent in 1e-5 steps, clamped to 0..=0.65535).
    pub payload_cd0: f64,
}

/// The 24 bits of small status fields every record carries.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Status {
    /// Damage level 0..=7 (larger values are clamped to 7).
    pub damage_level: u8,
    /// Engine failure flags, five bits (higher bits are dropped).
    pub engine_fail_flags: u8,
    /// Throttle as a fraction 0..=1 (sent as a whole percent; clamped; NaN → 0).
    pub throttle: f64,
    /// Fuel as a fraction 0..=1 (sent as a whole percent; clamped; NaN → 0).
    pub fuel: f64,
    /// Afterburner engaged.
    pub ab_engaged: bool,
    /// Owned by a player (not an AI).
    pub player_owned: bool,
}

/// An entity as the server simulates it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EntityState {
    /// Absolute entity index (slot).
    pub entity_index: u32,
    /// Generation of the slot (changes when the slot is reused).
    pub generation: u16,
    /// Entity type index (client-cached).
    pub type_index: u32,
    /// Faction registry index (client-cached).
    pub faction_index: u16,
    /// Position, metres, in the world frame (planet scale is fine).
    pub position_m: DVec3,
    /// Orientation (any non-zero finite quaternion; normalized when encoded).
    pub orientation: DQuat,
    /// Velocity, m/s (±2000 per axis).
    pub velocity_mps: DVec3,
    /// Body angular rates, rad/s (±20 per axis); sent to the owning peer only.
    pub omega_rad_s: DVec3,
    /// Loadout; sent to the owning peer only.
    pub loadout: Loadout,
    /// Status fields.
    pub status: Status,
}

/// Which fields a blob carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct BlobKind {
    /// Full record: type index, faction index and generation on the wire.
    pub full: bool,
    /// Generation on the wire (always set on full records).
    pub gen_present: bool,
    /// Own entity of the receiving peer: angular rates and loadout on the wire.
    pub own: bool,
}

impl BlobKind {
    /// A full record (generation included).
    pub const FULL: BlobKind = BlobKind {
        full: true,
        gen_present: true,
        own: false,
    };
    /// A steady-state delta record.
    pub const DELTA: BlobKind = BlobKind {
        full: false,
        gen_present: false,
        own: false,
    };

    /// The same kind for the receiving peer's own entity.
    pub const fn own(self) -> BlobKind {
        BlobKind { own: true, ..self }
    }
}

/// The blob (generated type [`EntityBlob`]: the record without its origin index) of `state`
/// quantized against `origin` (normally [`nq::origin_for_pos`] of its position). Never fails:
/// every value is clamped first (see [`statepack_codecs::netquant`]). A full kind always
/// carries the generation.
pub fn blob_of(state: &EntityState, origin: DVec3, kind: BlobKind) -> EntityBlob {
    let p = nq::quantize_offset(state.position_m, origin);
    let (rot_dropped, rot) = nq::smallest_three(state.orientation);
    let v = nq::quantize_velocity(state.velocity_mps);
    let own = kind.own;
    let w = if own {
        nq::quantize_omega(state.omega_rad_s)
    } else {
        [0; 3]
    };
    let l = &state.loadout;
    let s = &state.status;
    let gen_present = kind.full || kind.gen_present;
    EntityBlob {
        entity_index: u64::from(state.entity_index),
        full: kind.full,
        gen_present,
        omega_present: own,
        generation: gen_present.then_some(state.generation),
        type_index: kind.full.then_some(u64::from(state.type_index)),
        faction_index: kind.full.then_some(state.faction_index),
        pos_x: p[0],
        pos_y: p[1],
        pos_z: p[2],
        rot_dropped,
        rot_a: rot[0],
        rot_b: rot[1],
        rot_c: rot[2],
        vel_x: v[0],
        vel_y: v[1],
        vel_z: v[2],
        omega_x: own.then_some(w[0] as i16),
        omega_y: own.then_some(w[1] as i16),
        omega_z: own.then_some(w[2] as i16),
        selected_station: own.then_some(l.selected_station),
        station_rounds: own.then_some(l.station_rounds),
        weapon_flags: own.then_some(l.weapon_flags),
        payload_mass_kg: own.then(|| nq::quantize_mass_kg(l.payload_mass_kg)),
        payload_cd0: own.then(|| nq::quantize_cd0(l.payload_cd0)),
        damage_level: s.damage_level.min(7),
        engine_fail_flags: s.engine_fail_flags & 0x1f,
        throttle_pct: nq::quantize_pct(s.throttle),
        fuel_pct: nq::quantize_pct(s.fuel),
        ab_engaged: s.ab_engaged,
        player_owned: s.player_owned,
        align: Vec::new(),
    }
}

/// The raw record (generated type [`EntityRecord`]) of `state`: `origin_index` in front of
/// [`blob_of`] `state`, `origin`, `kind`. Never fails.
pub fn record_of(
    state: &EntityState,
    origin: DVec3,
    kind: BlobKind,
    origin_index: u32,
) -> EntityRecord {
    EntityRecord {
        origin_index: u64::from(origin_index),
        blob: blob_of(state, origin, kind),
    }
}

/// Appends `blob` to `out` through the generated writer. Returns the number of bytes
/// appended. Errors: the writer's [`EncodeError`](statepack_runtime::io::EncodeError),
/// naming the field (a value out of its range); `out` is then left as it was.
pub fn write_blob_into(
    blob: &EntityBlob,
    out: &mut Vec<u8>,
) -> Result<usize, statepack_runtime::io::EncodeError> {
    let start = out.len();
    let mut w = ByteWriter::from_vec(std::mem::take(out));
    let res = blob.write_to(&mut w);
    *out = w.into_bytes();
    match res {
        Ok(()) => Ok(out.len() - start),
        Err(e) => {
            out.truncate(start);
            Err(e)
        }
    }
}

/// Appends the blob of `state` (its record without the origin index, [`blob_of`]) to `out`,
/// through the generated writer. Returns the blob's length.
pub fn encode_blob_into(
    state: &EntityState,
    origin: DVec3,
    kind: BlobKind,
    out: &mut Vec<u8>,
) -> usize {
    // Every field of the blob is in range by construction (the quantizers clamp), so the
    // writer cannot fail; were it to, nothing is appended and 0 is returned.
    write_blob_into(&blob_of(state, origin, kind), out).unwrap_or(0)
}

/// The blob of `state` as a new vector (see [`encode_blob_into`]).
pub fn encode_blob(state: &EntityState, origin: DVec3, kind: BlobKind) -> Vec<u8> {
    let mut out = Vec::with_capacity(48);
    encode_blob_into(state, origin, kind, &mut out);
    out
}

/// Bytes of a stitched record, computed from the schema without quantizing or encoding an
/// entity: the origin index's LEB128 length plus the generated [`EntityBlob::encoded_len`]
/// of a blob of this kind with these indices (the other fields are fixed-width bit fields,
/// so their values do not change the size). Equal to the real size for every kind (tested).
#[inline]
pub fn estimate_record_bytes(
    origin_index: u32,
    entity_index: u32,
    kind: BlobKind,
    type_index: u32,
) -> usize {
    leb128_len(u64::from(origin_index)) + blob_shape(entity_index, kind, type_index).encoded_len()
}

/// A blob of `kind` with `entity_index` and `type_index` (from [`blob_of`] of a sample state
/// with those indices): the same size as the blob of any entity with these indices, since
/// every other field is a fixed-width bit field or present by `kind` alone.
#[inline]
fn blob_shape(entity_index: u32, kind: BlobKind, type_index: u32) -> EntityBlob {
    let state = EntityState {
        entity_index,
        type_index,
        ..sample_entity(0, kind.own)
    };
    blob_of(&state, nq::origin_for_pos(state.position_m), kind)
}

/// One entity encoded once for a tick: its grid origin and its blobs.
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedEntity {
    /// Entity index.
    pub entity_index: u32,
    /// Generation (for the assembler's full-record decisions).
    pub generation: u16,
    /// Type index (for size estimates).
    pub type_index: u32,
    /// Grid origin of the position.
    pub origin: DVec3,
    /// Full blob.
    pub full: Vec<u8>,
    /// Delta blob.
    pub delta: Vec<u8>,
    /// Full and delta blobs for the owning peer (angular rates and loadout), player-owned
    /// entities only.
    pub own: Option<(Vec<u8>, Vec<u8>)>,
}

impl EncodedEntity {
    /// Encodes `state` once: full and delta blobs, plus the own variants when the entity is
    /// player-owned.
    pub fn new(state: &EntityState) -> Self {
        let origin = nq::origin_for_pos(state.position_m);
        let own = state.status.player_owned.then(|| {
            (
                encode_blob(state, origin, BlobKind::FULL.own()),
                encode_blob(state, origin, BlobKind::DELTA.own()),
            )
        });
        Self {
            entity_index: state.entity_index,
            generation: state.generation,
            type_index: state.type_index,
            origin,
            full: encode_blob(state, origin, BlobKind::FULL),
            delta: encode_blob(state, origin, BlobKind::DELTA),
            own,
        }
    }

    /// The blob of a kind (the own variants fall back to the plain ones for entities that
    /// have none). A delta with the generation is not pre-encoded: kinds with `gen_present`
    /// use the full blob.
    pub fn blob(&self, kind: BlobKind) -> &[u8] {
        let full = kind.full || kind.gen_present;
        match (&self.own, kind.own, full) {
            (Some((f, _)), true, true) => f,
            (Some((_, d)), true, false) => d,
            (_, _, true) => &self.full,
            (_, _, false) => &self.delta,
        }
    }
}

/// Errors of the snapshot writer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SnapshotError {
    /// More distinct grid origins than the 16-bit origin count can hold.
    #[error("more than 65 535 distinct grid origins in one snapshot")]
    TooManyOrigins,
    /// The body would exceed [`MAX_BODY_BYTES`].
    #[error("snapshot body of {0} bytes exceeds the 1 MiB limit")]
    TooLarge(usize),
    /// A blob is not a record of this format.
    #[error("blob is not a world snapshot record: {0}")]
    BadBlob(String),
}

fn semantic(at: u64, msg: String) -> DecodeError {
    DecodeError::new(at, DecodeErrorKind::Semantic(msg))
}

/// The raw layer of a snapshot with its body decompressed: for a zstd body, the frame is
/// decompressed (at most [`MAX_BODY_BYTES`] and [`MAX_ZSTD_RATIO`] times its size), checked
/// to be exactly `uncompressed_bytes` long, and read as a raw body (flags 0). Errors: any
/// raw decode error, or a `Semantic` one for a bad frame.
pub fn raw_uncompressed(bytes: &[u8]) -> Result<WorldSnapshot, DecodeError> {
    let raw = WorldSnapshot::decode(bytes)?;
    let Some(frame) = &raw.zstd_body else {
        return Ok(raw);
    };
    let n = raw.uncompressed_bytes as usize;
    if n > MAX_BODY_BYTES || n > frame.len().saturating_mul(MAX_ZSTD_RATIO) {
        return Err(semantic(
            20,
            format!(
                "uncompressed_bytes {n} exceeds the limit (1 MiB and {MAX_ZSTD_RATIO} times the {}-byte frame)",
                frame.len()
            ),
        )
        .in_field("uncompressed_bytes"));
    }
    let body = decompress(frame, n)?;
    if body.len() != n {
        return Err(semantic(
            HEADER_BYTES as u64,
            format!(
                "zstd frame decompresses to {} bytes, header says {n}",
                body.len()
            ),
        )
        .in_field("zstd_body"));
    }
    let mut whole = bytes[..HEADER_BYTES].to_vec();
    whole[1] = 0;
    whole.extend_from_slice(&body);
    // An error inside the decompressed body is placed at the frame (byte 24 of the input),
    // under `zstd_body`, and names its offset in the raw message rebuilt from it.
    WorldSnapshot::decode(&whole).map_err(|e| {
        let msg = format!(
            "at byte {} of the decompressed message: {}",
            e.offset, e.kind
        );
        let mut d = semantic(HEADER_BYTES as u64, msg);
        d.path = e.path;
        d.in_field("zstd_body")
    })
}

/// The zstd frame of a body, decompressed to at most `n` bytes. Errors: a `Semantic` one under
/// `zstd_body` when the frame does not decompress within `n` bytes.
#[cfg(feature = "zstd")]
fn decompress(frame: &[u8], n: usize) -> Result<Vec<u8>, DecodeError> {
    zstd::bulk::decompress(frame, n).map_err(|e| {
        semantic(
            HEADER_BYTES as u64,
            format!("zstd frame does not decompress to at most {n} bytes: {e}"),
        )
        .in_field("zstd_body")
    })
}

/// A build without the `zstd` feature reads no zstd frame: always a `Semantic` error under
/// `zstd_body` that says so.
#[cfg(not(feature = "zstd"))]
fn decompress(_frame: &[u8], _n: usize) -> Result<Vec<u8>, DecodeError> {
    Err(semantic(
        HEADER_BYTES as u64,
        "the body is a zstd frame, and this build leaves out the cargo feature `zstd`".to_owned(),
    )
    .in_field("zstd_body"))
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Server tick.
    pub tick: u32,
    /// The body was a zstd frame.
    pub compressed: bool,
    /// Origin table.
    pub origins: Vec<DVec3>,
    /// Records in stream order.
    pub records: Vec<EntityRecord>,
    /// Entities to despawn.
    pub despawns: Vec<u32>,
    /// TLVs of other types (type, value), kept as bytes.
    pub other_tlvs: Vec<(u8, Vec<u8>)>,
}

/// An entity as a client rebuilds it from one record.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DecodedEntity {
    /// Entity index.
    pub entity_index: u32,
    /// The record was full.
    pub full: bool,
    /// Generation, when on the wire.
    pub generation: Option<u16>,
    /// Type index, on full records.
    pub type_index: Option<u32>,
    /// Faction index, on full records.
    pub faction_index: Option<u16>,
    /// Position, metres (origin + offset).
    pub position_m: DVec3,
    /// Orientation (unit quaternion).
    pub orientation: DQuat,
    /// Velocity, m/s.
    pub velocity_mps: DVec3,
    /// Angular rates, rad/s, own entity only.
    pub omega_rad_s: Option<DVec3>,
    /// Loadout, own entity only.
    pub loadout: Option<Loadout>,
    /// Status fields (throttle and fuel as fractions of whole percents).
    pub status: Status,
}

/// A record together with the origin table it refers to.
pub struct RecordView<'a> {
    /// The record.
    pub record: &'a EntityRecord,
    /// The snapshot's origin table.
    pub origins: &'a [DVec3],
}

impl RecordView<'_> {
    /// Dequantizes the record. The origin index is checked by [`decode`]; an index out of
    /// range here gives the zero origin.
    pub fn entity(&self) -> DecodedEntity {
        let oi = self.record.origin_index;
        let r = &self.record.blob;
        let origin = self
            .origins
            .get(oi as usize)
            .copied()
            .unwrap_or(DVec3::ZERO);
        let omega = match (r.omega_x, r.omega_y, r.omega_z) {
            (Some(x), Some(y), Some(z)) => {
                Some(nq::dequantize_omega([x.into(), y.into(), z.into()]))
            }
            _ => None,
        };
        let loadout = match (
            r.selected_station,
            r.station_rounds,
            r.weapon_flags,
            r.payload_mass_kg,
            r.payload_cd0,
        ) {
            (Some(s), Some(n), Some(f), Some(m), Some(c)) => Some(Loadout {
                selected_station: s,
                station_rounds: n,
                weapon_flags: f,
                payload_mass_kg: f64::from(m),
                payload_cd0: f64::from(c) * nq::CD0_STEP,
            }),
            _ => None,
        };
        DecodedEntity {
            entity_index: r.entity_index as u32,
            full: r.full,
            generation: r.generation,
            type_index: r.type_index.map(|t| t as u32),
            faction_index: r.faction_index,
            position_m: nq::dequantize_position(origin, [r.pos_x, r.pos_y, r.pos_z]),
            orientation: nq::from_smallest_three(r.rot_dropped, [r.rot_a, r.rot_b, r.rot_c]),
            velocity_mps: nq::dequantize_velocity([r.vel_x, r.vel_y, r.vel_z]),
            omega_rad_s: omega,
            loadout,
            status: Status {
                damage_level: r.damage_level,
                engine_fail_flags: r.engine_fail_flags,
                throttle: f64::from(r.throttle_pct) / 100.0,
                fuel: f64::from(r.fuel_pct) / 100.0,
                ab_engaged: r.ab_engaged,
                player_owned: r.player_owned,
            },
        }
    }
}

/// Checks the rules the layout alone cannot state, on a raw snapshot with a raw body:
/// `uncompressed_bytes` equals the body, `record_count` the records, every origin index is in
/// the table, indices fit 32 bits, full records carry the generation, percentages are at most
/// 100 and origins are finite. Errors: `Semantic`, naming the field.
pub fn check_raw(raw: &WorldSnapshot) -> Result<(), DecodeError> {
    let origins = raw.origins.as_deref().unwrap_or(&[]);
    let records = raw.records.as_ref().map_or(&[][..], |r| &r.records[..]);
    let body =
        origins.len() as u64 * 24 + u64::from(raw.bitstream_bytes) + u64::from(raw.tlv_bytes);
    if u64::from(raw.uncompressed_bytes) != body {
        return Err(semantic(
            20,
            format!(
                "uncompressed_bytes {} but the body is {body} bytes",
                raw.uncompressed_bytes
            ),
        )
        .in_field("uncompressed_bytes"));
    }
    if records.len() as u64 != u64::from(raw.record_count) {
        return Err(semantic(
            8,
            format!(
                "record_count {} but the stream holds {} records",
                raw.record_count,
                records.len()
            ),
        )
        .in_field("record_count"));
    }
    for (i, o) in origins.iter().enumerate() {
        if !(o.x.is_finite() && o.y.is_finite() && o.z.is_finite()) {
            return Err(semantic(
                (HEADER_BYTES + 24 * i) as u64,
                "grid origin is not finite".into(),
            )
            .in_index(i)
            .in_field("origins"));
        }
    }
    for (i, r) in records.iter().enumerate() {
        let bad = |what: String| {
            Err(
                semantic(HEADER_BYTES as u64 + origins.len() as u64 * 24, what)
                    .in_index(i)
                    .in_field("records")
                    .in_field("records"),
            )
        };
        if r.origin_index >= origins.len() as u64 {
            return bad(format!(
                "origin_index {} but the table has {} origins",
                r.origin_index,
                origins.len()
            ));
        }
        if r.blob.entity_index > u64::from(u32::MAX)
            || r.blob.type_index.is_some_and(|t| t > u64::from(u32::MAX))
        {
            return bad("entity or type index above 2^32 - 1".into());
        }
        if r.blob.full && !r.blob.gen_present {
            return bad("a full record must carry the generation".into());
        }
        if r.blob.throttle_pct > 100 || r.blob.fuel_pct > 100 {
            return bad(format!(
                "throttle {} % / fuel {} % above 100",
                r.blob.throttle_pct, r.blob.fuel_pct
            ));
        }
    }
    if let Some(t) = &raw.tlvs {
        for (i, e) in t.entries.iter().enumerate() {
            if let Some(d) = &e.despawn {
                if d.entities
                    .iter()
                    .any(|x| x.entity_index > u64::from(u32::MAX))
                {
                    return Err(semantic(0, "despawned entity index above 2^32 - 1".into())
                        .in_index(i)
                        .in_field("entries")
                        .in_field("tlvs"));
                }
            }
        }
    }
    Ok(())
}

/// Decodes a snapshot: raw layer, decompression ([`raw_uncompressed`]) and [`check_raw`].
/// Errors: a [`DecodeError`] with the field path and byte offset.
pub fn decode(bytes: &[u8]) -> Result<Snapshot, DecodeError> {
    let compressed = bytes.get(1) == Some(&FLAG_ZSTD);
    let raw = raw_uncompressed(bytes)?;
    check_raw(&raw).map_err(|e| {
        if compressed {
            // As in raw_uncompressed: located at the frame, under `zstd_body`.
            let mut d = semantic(
                HEADER_BYTES as u64,
                format!("in the decompressed message: {}", e.kind),
            );
            d.path = e.path;
            d.in_field("zstd_body")
        } else {
            e
        }
    })?;
    let origins = raw
        .origins
        .unwrap_or_default()
        .into_iter()
        .map(|o| DVec3::new(o.x, o.y, o.z))
        .collect();
    let mut despawns = Vec::new();
    let mut other_tlvs = Vec::new();
    for e in raw.tlvs.map(|t| t.entries).unwrap_or_default() {
        match (e.despawn, e.value) {
            (Some(d), _) => despawns.extend(d.entities.iter().map(|x| x.entity_index as u32)),
            (None, Some(v)) => other_tlvs.push((e.tlv_type, v)),
            (None, None) => {}
        }
    }
    Ok(Snapshot {
        tick: raw.tick,
        compressed,
        origins,
        records: raw.records.map(|r| r.records).unwrap_or_default(),
        despawns,
        other_tlvs,
    })
}

/// Decodes only the record stream of a raw body (the stitched records, no header), through
/// the generated reader: the per-record decode path measured by the bench.
pub fn decode_stream(stream: &[u8]) -> Result<Vec<EntityRecord>, DecodeError> {
    let mut r = ByteReader::new(stream);
    let s = RecordStream::read_from(&mut r)?;
    r.finish()?;
    Ok(s.records)
}

/// Builds a raw snapshot from parts (for tests and samples): the header counts are derived.
pub fn raw_snapshot(
    tick: u32,
    origins: &[DVec3],
    records: Vec<EntityRecord>,
    despawns: &[u32],
) -> Result<WorldSnapshot, statepack_runtime::io::EncodeError> {
    let stream = RecordStream { records };
    let tlvs = TlvBlock {
        entries: if despawns.is_empty() {
            Vec::new()
        } else {
            let d = Despawn {
                entities: despawns
                    .iter()
                    .map(|&e| EntityRef {
                        entity_index: u64::from(e),
                    })
                    .collect(),
            };
            vec![Tlv {
                tlv_type: TLV_DESPAWN,
                len: statepack_runtime::io::fit(d.encoded_len() as i128, "u2")?,
                despawn: Some(d),
                value: None,
            }]
        },
    };
    let bs = stream.encoded_len();
    let tl = tlvs.encoded_len();
    Ok(WorldSnapshot {
        flags: 0,
        origin_count: statepack_runtime::io::fit(origins.len() as i128, "u2")?,
        tick,
        record_count: statepack_runtime::io::fit(stream.records.len() as i128, "u4")?,
        bitstream_bytes: statepack_runtime::io::fit(bs as i128, "u4")?,
        tlv_bytes: statepack_runtime::io::fit(tl as i128, "u4")?,
        uncompressed_bytes: statepack_runtime::io::fit(
            (origins.len() * 24 + bs + tl) as i128,
            "u4",
        )?,
        origins: Some(
            origins
                .iter()
                .map(|o| Origin {
                    x: o.x,
                    y: o.y,
                    z: o.z,
                })
                .collect(),
        ),
        records: Some(stream),
        tlvs: Some(tlvs),
        zstd_body: None,
    })
}

/// A deterministic test entity: index `i`, spread over a planet-scale area.
pub fn sample_entity(i: u32, own: bool) -> EntityState {
    let f = f64::from(i);
    EntityState {
        entity_index: i,
        generation: (i % 7) as u16 + 1,
        type_index: 3 + i % 5,
        faction_index: (i % 3) as u16,
        position_m: DVec3::new(
            6_371_000.0 + f * 1_234.567,
            -2_000.0 + f * 97.25,
            15_000.0 - f * 3_001.5,
        ),
        orientation: DQuat::from_euler(glam::EulerRot::YXZ, f * 0.37, 0.2 - f * 0.05, f * 0.11),
        velocity_mps: DVec3::new(250.0 - f, -3.5 + f * 0.25, 120.0),
        omega_rad_s: DVec3::new(0.5, -0.25 * f, 1.0),
        loadout: Loadout {
            selected_station: 2,
            station_rounds: 120u16.wrapping_add(i as u16),
            weapon_flags: 1,
            payload_mass_kg: 1_250.4,
            payload_cd0: 0.018_37,
        },
        status: Status {
            damage_level: (i % 8) as u8,
            engine_fail_flags: (i % 32) as u8,
            throttle: 0.8,
            fuel: 0.55,
            ab_engaged: i.is_multiple_of(2),
            player_owned: own,
        },
    }
}

/// Sample snapshots built in code: the spec's two golden blobs stitched into one snapshot,
/// a mixed snapshot with several origins and despawns (raw and zstd), and an empty one.
pub fn sample_files() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let own = sample_entity(5, true);
    let other = sample_entity(6, false);
    let mut w = SnapshotWriter::new();
    let eo = EncodedEntity::new(&own);
    let ex = EncodedEntity::new(&other);
    if w.push_record(eo.origin, eo.blob(BlobKind::FULL.own()))
        .is_ok()
        && w.push_record(ex.origin, ex.blob(BlobKind::DELTA)).is_ok()
    {
        if let Ok(b) = w.finish(1, false) {
            out.push(("golden-own-full-and-delta".to_owned(), b));
        }
    }
    let mut w = SnapshotWriter::new();
    for i in 0..40u32 {
        let s = sample_entity(i * 37 + 1, i == 3);
        let e = EncodedEntity::new(&s);
        let kind = match i % 4 {
            0 => BlobKind::FULL,
            1 => BlobKind::DELTA,
            2 => BlobKind {
                full: false,
                gen_present: true,
                own: false,
            },
            _ => BlobKind::DELTA.own(),
        };
        let kind = if i == 3 { BlobKind::FULL.own() } else { kind };
        let mut blob = e.blob(kind).to_vec();
        if kind.gen_present && !kind.full {
            blob = encode_blob(&s, e.origin, kind);
        }
        let _ = w.push_record(e.origin, &blob);
    }
    for d in [7u32, 300, 70_000] {
        w.push_despawn(d);
    }
    if let Ok(b) = w.finish(77, false) {
        out.push(("mixed-raw".to_owned(), b));
    }
    if let Ok(b) = w.finish(77, true) {
        out.push(("mixed-zstd".to_owned(), b));
    }
    if let Ok(b) = SnapshotWriter::new().finish(0, false) {
        out.push(("empty".to_owned(), b));
    }
    out
}

/// The world snapshot in the format registry ([`crate::formats::FORMATS`]).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec::of::<WorldSnapshot>();

/// The world snapshot's own parts of its registry entry; the rest is shared ([`crate::formats::FormatSpec::of`]).
impl crate::formats::Format for WorldSnapshot {
    const NAME: &'static str = "wsnap";
    const TITLE: &'static str = "MsgWorldSnapshot (bit-packed)";
    fn detect(b: &[u8]) -> bool {
        b.first() == Some(&MSG_TYPE) && b.get(1).is_none_or(|f| *f <= 1)
    }
    fn decode_full(b: &[u8]) -> Result<(), DecodeError> {
        decode(b).map(|_| ())
    }
    fn samples() -> Vec<(String, Vec<u8>)> {
        sample_files()
    }
}
