//! The per-client assembler: each tick, for each peer, choose which pre-encoded blobs go into
//! its snapshot and stitch them.
//!
//! - Interest: entities within the peer's interest radius (3-D distance) are candidates;
//!   relevance is `1 / (1 + distance / 1 km)`, the peer's own entity first. The priority of
//!   a candidate is its relevance times the ticks since it was last sent to this peer (ticks
//!   since the peer joined, for one never sent), so entities the budget defers gain priority
//!   each tick and nothing starves.
//! - Budget: candidates are taken in relevance order while the snapshot (header + origin
//!   table + records, each record counted at its exact size by
//!   [`SnapshotWriter::push_id_within`] before it is written) stays within the peer's byte
//!   budget; the rest are deferred to a later tick. (The size is the one
//!   [`super::estimate_record_bytes`] computes from the schema (generated `encoded_len`): the two are tested equal.)
//!   Deferred entities are kept by the client (no despawn), so they do not flicker.
//! - Despawn: an entity the peer was sent that is no longer a candidate (out of interest or
//!   gone) is listed in a despawn TLV once and forgotten. Despawn TLVs are not counted in the
//!   budget (a few bytes each).
//! - Full records: an entity is sent as a full record until the peer acknowledges a tick
//!   that carried one (its 32-bit ack mask, [`AckWindow`]), and again whenever its
//!   generation changes; otherwise as a delta.

use super::client::AckWindow;
use super::{BlobKind, EncodedEntity, SnapshotError, SnapshotWriter};
use glam::DVec3;
use std::collections::HashMap;

/// What the server knows about a peer's viewpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeerView {
    /// The peer's own entity, if it has one (gets angular rates and loadout).
    pub own_entity: Option<u32>,
    /// The peer's viewpoint, metres.
    pub position_m: DVec3,
    /// Entities farther than this are not sent.
    pub interest_radius_m: f64,
    /// Byte budget of one snapshot (header included); `usize::MAX` for none.
    pub budget_bytes: usize,
}

#[derive(Debug, Clone, Default)]
struct Sent {
    generation: u16,
    confirmed: bool,
    full_ticks: Vec<u32>,
}

/// Server-side state of one peer.
#[derive(Debug, Clone)]
pub struct Peer {
    /// Viewpoint and budget.
    pub view: PeerView,
    sent: HashMap<u32, Sent>,
    last_sent: HashMap<u32, u32>,
    joined: Option<u32>,
}

/// What one assembled snapshot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AssembleStats {
    /// Records written.
    pub records: usize,
    /// Of which full records.
    pub full: usize,
    /// Candidates left out by the budget.
    pub deferred: usize,
    /// Entities despawned.
    pub despawned: usize,
    /// Snapshot bytes.
    pub bytes: usize,
    /// The body went out as a zstd frame.
    pub compressed: bool,
}

impl Peer {
    /// A peer that has been sent nothing yet.
    pub fn new(view: PeerView) -> Self {
        Self {
            view,
            sent: HashMap::new(),
            last_sent: HashMap::new(),
            joined: None,
        }
    }

    /// Takes the peer's echoed ack window: every entity whose full record went out in a tick
    /// the window acknowledges is confirmed (deltas from now on).
    pub fn receive_ack(&mut self, acks: &AckWindow) {
        for s in self.sent.values_mut() {
            if !s.confirmed && s.full_ticks.iter().any(|t| acks.acks(*t)) {
                s.confirmed = true;
                s.full_ticks.clear();
            }
        }
    }

    /// True when the peer has confirmed a full record of `entity_index` at its current
    /// generation.
    pub fn is_confirmed(&self, entity_index: u32) -> bool {
        self.sent.get(&entity_index).is_some_and(|s| s.confirmed)
    }

    /// Assembles this peer's snapshot for `tick` from the tick's encoded entities
    /// (`positions[i]` is the true position of `entities[i]`, for relevance). `writer` is
    /// reused. Errors: [`SnapshotError`] from the writer.
    pub fn assemble(
        &mut self,
        tick: u32,
        entities: &[EncodedEntity],
        positions: &[DVec3],
        writer: &mut SnapshotWriter,
        compress: bool,
    ) -> Result<(Vec<u8>, AssembleStats), SnapshotError> {
        writer.set_entities(entities);
        let mut stats = AssembleStats::default();
        let joined = *self.joined.get_or_insert(tick);
        let mut cand: Vec<(f64, usize)> = entities
            .iter()
            .zip(positions)
            .enumerate()
            .filter_map(|(i, (e, p))| {
                let d = p.distance(self.view.position_m);
                let last = self
                    .last_sent
                    .get(&e.entity_index)
                    .copied()
                    .unwrap_or(joined.saturating_sub(1));
                let age = f64::from(tick.saturating_sub(last).max(1));
                if Some(e.entity_index) == self.view.own_entity {
                    Some((f64::INFINITY, i))
                } else if d <= self.view.interest_radius_m {
                    Some((age / (1.0 + d / 1000.0), i))
                } else {
                    None
                }
            })
            .collect();
        cand.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then(entities[a.1].entity_index.cmp(&entities[b.1].entity_index))
        });
        // Despawns: sent before, not a candidate now.
        let visible: std::collections::HashSet<u32> = cand
            .iter()
            .map(|(_, i)| entities[*i].entity_index)
            .collect();
        let mut gone: Vec<u32> = self
            .sent
            .keys()
            .copied()
            .filter(|k| !visible.contains(k))
            .collect();
        gone.sort_unstable();
        for g in gone {
            self.sent.remove(&g);
            self.last_sent.remove(&g);
            writer.push_despawn(g);
            stats.despawned += 1;
        }
        for (_, i) in cand {
            let e = &entities[i];
            let s = self.sent.get(&e.entity_index);
            let full = match s {
                None => true,
                Some(s) => s.generation != e.generation || !s.confirmed,
            };
            let own = Some(e.entity_index) == self.view.own_entity && e.own.is_some();
            let kind = BlobKind {
                full,
                gen_present: full,
                own,
            };
            let id = writer.entity_origin_id(i);
            if !writer.push_id_within(id, e.blob(kind), self.view.budget_bytes)? {
                stats.deferred += 1;
                continue;
            }
            stats.records += 1;
            self.last_sent.insert(e.entity_index, tick);
            let entry = self.sent.entry(e.entity_index).or_default();
            if entry.generation != e.generation {
                entry.confirmed = false;
                entry.full_ticks.clear();
            }
            entry.generation = e.generation;
            if full {
                stats.full += 1;
                entry.full_ticks.push(tick);
                if entry.full_ticks.len() > 32 {
                    entry.full_ticks.remove(0);
                }
            }
        }
        let bytes = writer.message(tick, compress)?;
        stats.bytes = bytes.len();
        stats.compressed = bytes.get(1) == Some(&super::FLAG_ZSTD);
        Ok((bytes.to_vec(), stats))
    }
}
