//! The client side: an ack window of recently decoded ticks (32-bit mask) and a decoder that
//! keeps the typeIndex / factionIndex / generation cache and applies the stale-generation
//! guard.
//!
//! Rules (decided here; the spec names them without detail, see
//! `docs/formats/world_snapshot.md`):
//! - A full record (re)defines the entity: its type, faction and generation are cached.
//! - A delta record of an entity with no cache entry cannot be interpreted (its type is
//!   unknown) and is dropped ([`ApplyReport::unknown`]).
//! - Stale-generation guard: the server sends every generation change as a full record, so
//!   a delta that carries a generation different from the cached one belongs to an earlier
//!   occupant of the slot (reordered or late) and is dropped ([`ApplyReport::stale`]).
//! - A despawn removes the entity and its cache entry; the next record for that index must
//!   be full.
//! - Tick-order guard: snapshots can arrive late and out of order, so every entity index keeps
//!   the tick of the newest snapshot that changed it (a record or a despawn,
//!   [`ClientDecoder::last_tick`]). A record from a snapshot whose tick is not newer than that
//!   is dropped ([`ApplyReport::late`]): a late, older snapshot never moves an entity back, and
//!   a late full record never brings back an entity despawned at a newer tick. A despawn from
//!   a snapshot older than the entity's newest record is dropped too (the entity was seen
//!   alive after it). Records and despawns of the same snapshot apply in that order, as
//!   before. The map holds one `u32` per entity index ever seen.

use super::{decode, DecodedEntity, RecordView};
use statepack_runtime::io::DecodeError;
use std::collections::HashMap;

/// Ticks the client has decoded: the latest and a 32-bit mask, bit `i` set when tick
/// `latest - i` was decoded (bit 0 is the latest itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckWindow {
    /// Latest decoded tick, if any.
    pub latest: Option<u32>,
    /// Bit `i`: tick `latest - i` decoded.
    pub mask: u32,
}

impl AckWindow {
    /// Records that `tick` was decoded (older than 31 ticks behind the latest: ignored).
    pub fn record(&mut self, tick: u32) {
        match self.latest {
            None => {
                self.latest = Some(tick);
                self.mask = 1;
            }
            Some(l) if tick > l => {
                let shift = tick - l;
                self.mask = if shift >= 32 { 0 } else { self.mask << shift };
                self.mask |= 1;
                self.latest = Some(tick);
            }
            Some(l) => {
                let back = l - tick;
                if back < 32 {
                    self.mask |= 1 << back;
                }
            }
        }
    }

    /// True when the window says `tick` was decoded.
    pub fn acks(&self, tick: u32) -> bool {
        match self.latest {
            Some(l) if tick <= l => {
                let back = l - tick;
                back < 32 && self.mask & (1 << back) != 0
            }
            _ => false,
        }
    }
}

/// What the client cached from full records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheEntry {
    /// Slot generation.
    pub generation: u16,
    /// Type index.
    pub type_index: u32,
    /// Faction index.
    pub faction_index: u16,
}

/// A client's view of the world.
#[derive(Debug, Clone, Default)]
pub struct ClientDecoder {
    /// Cache per entity index.
    pub cache: HashMap<u32, CacheEntry>,
    /// Latest state per entity (with the cached type, faction and generation filled in).
    pub entities: HashMap<u32, DecodedEntity>,
    /// Decoded ticks, echoed to the server.
    pub acks: AckWindow,
    /// Per entity index, the tick of the newest snapshot whose record or despawn was applied
    /// to it (kept after a despawn, so a late record cannot resurrect the entity).
    pub last_tick: HashMap<u32, u32>,
}

/// What one snapshot did to the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApplyReport {
    /// Records applied.
    pub applied: usize,
    /// Delta records of entities without a cache entry (dropped).
    pub unknown: usize,
    /// Delta records whose generation differs from the cache (dropped by the guard).
    pub stale: usize,
    /// Entities despawned.
    pub despawned: usize,
    /// Records and despawns dropped by the tick-order guard: the entity already holds the
    /// state of a newer snapshot.
    pub late: usize,
}

impl ClientDecoder {
    /// A client with an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decodes a snapshot and applies it, with the guards of the
    /// [module documentation](self) (unknown deltas, stale generations, tick order). Errors:
    /// the snapshot does not decode (nothing is applied and the tick is not acked).
    pub fn apply(&mut self, bytes: &[u8]) -> Result<ApplyReport, DecodeError> {
        let snap = decode(bytes)?;
        let tick = snap.tick;
        let mut rep = ApplyReport::default();
        for r in &snap.records {
            let mut e = RecordView {
                record: r,
                origins: &snap.origins,
            }
            .entity();
            let idx = e.entity_index;
            if self.last_tick.get(&idx).is_some_and(|&t| tick <= t) {
                rep.late += 1;
                continue;
            }
            if r.blob.full {
                let c = CacheEntry {
                    generation: e.generation.unwrap_or(0),
                    type_index: e.type_index.unwrap_or(0),
                    faction_index: e.faction_index.unwrap_or(0),
                };
                self.cache.insert(idx, c);
            } else {
                match self.cache.get(&idx) {
                    None => {
                        rep.unknown += 1;
                        continue;
                    }
                    Some(c) if e.generation.is_some_and(|g| g != c.generation) => {
                        rep.stale += 1;
                        continue;
                    }
                    Some(c) => {
                        e.generation = Some(c.generation);
                        e.type_index = Some(c.type_index);
                        e.faction_index = Some(c.faction_index);
                    }
                }
            }
            self.entities.insert(idx, e);
            self.last_tick.insert(idx, tick);
            rep.applied += 1;
        }
        for d in &snap.despawns {
            if self.last_tick.get(d).is_some_and(|&t| tick < t) {
                rep.late += 1;
                continue;
            }
            self.last_tick.insert(*d, tick);
            if self.entities.remove(d).is_some() {
                rep.despawned += 1;
            }
            self.cache.remove(d);
        }
        self.acks.record(snap.tick);
        Ok(rep)
    }
}
