//! A deterministic bot swarm that drives the encoder, the per-client assembler and the client
//! decoder, and measures downstream bytes per client and the quantization error against the
//! simulated truth (`statepack wsnap sim`; results in `docs/formats/world_snapshot.md`).
//!
//! # Motion model
//!
//! Every client owns one bot (entity index = client index). Bot `i` belongs to a cell centre
//! `c_i` on a 16 × 8 layout 10 km × 20 km apart, 2.0 to 4.0 km up, around a planet-scale base
//! point (6 371 km, 0, 0) in a local frame with +Y up (so the records use several grid
//! origins and planet-scale coordinates). Two kinds of bot:
//!
//! - idle: parked at `c_i`, velocity and rates zero, a fixed heading (the spec's reference
//!   measurement was taken with idle clients);
//! - flying: a level circle of radius `r_i = 800 + 150 (i mod 13)` m at `v_i = 90 + 15 (i mod
//!   11)` m/s, with a vertical bob of 50 m amplitude at 0.3 rad/s; heading along the velocity,
//!   banked by `atan(v ω / 9.81)`; body rates `(0, ω, 0)` with `ω = v / r`.
//!
//! Every 16th bot respawns once (its generation goes up by one) at a tick spread over the
//! run, so the full-record and generation paths run. Snapshots are dropped for a client
//! deterministically at `loss_pct` percent (a hash of client and tick); a client acks what it
//! decoded and the server sees the ack before the next tick (one tick of round trip).
//!
//! The motion fixtures (`cmu-131-01-walk.bvh`, the study clips) are human-scale joint motion
//! over a few metres; they do not fit aircraft-scale trajectories, so the swarm uses the
//! analytic paths above.
//!
//! The old fixed records are counted per client and tick as 88 bytes for an entity the
//! client had not seen at its current generation and 64 bytes otherwise, for every entity in
//! interest (the old scheme had no budget).

use crate::formats::world_snapshot::assembler::{Peer, PeerView};
use crate::formats::world_snapshot::client::ClientDecoder;
use crate::formats::world_snapshot::{
    self as ws, decode, EncodedEntity, EntityState, Loadout, RecordView, SnapshotWriter, Status,
    OLD_ENTRY_BYTES, OLD_UPDATE_BYTES,
};
use glam::{DQuat, DVec3};
use serde::Serialize;
use statepack_codecs::netquant as nq;
use std::collections::HashMap;

/// Simulation settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SimConfig {
    /// Clients (one bot each).
    pub clients: u32,
    /// Snapshot rate, Hz.
    pub tick_hz: u32,
    /// Simulated seconds.
    pub seconds: f64,
    /// Bots fly (true) or sit idle (false).
    pub flying: bool,
    /// Snapshot byte budget per client and tick; `None` for no budget.
    pub budget_bytes: Option<usize>,
    /// Interest radius, metres.
    pub interest_radius_m: f64,
    /// Snapshots lost per hundred.
    pub loss_pct: u32,
    /// Bodies are zstd-compressed when strictly smaller.
    pub compress: bool,
}

impl Default for SimConfig {
    /// 128 clients at 60 Hz for 10 s, flying, no budget, everything in interest, no loss.
    fn default() -> Self {
        Self {
            clients: 128,
            tick_hz: 60,
            seconds: 10.0,
            flying: true,
            budget_bytes: None,
            interest_radius_m: 1.0e6,
            loss_pct: 0,
            compress: true,
        }
    }
}

/// What a run measured. KB is 1024 bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimReport {
    /// The settings.
    pub config: SimConfig,
    /// Ticks simulated.
    pub ticks: u32,
    /// Old fixed records, KB/s per client (mean over clients).
    pub old_kbs_per_client: f64,
    /// Bit-packed snapshots with raw bodies, KB/s per client (mean).
    pub packed_kbs_per_client: f64,
    /// Bit-packed snapshots as sent (zstd body when strictly smaller), KB/s per client (mean).
    pub sent_kbs_per_client: f64,
    /// The largest per-client figure of `sent_kbs_per_client`.
    pub sent_kbs_worst_client: f64,
    /// Share of snapshots whose body went out compressed.
    pub compressed_share: f64,
    /// Records per snapshot (mean).
    pub records_per_snapshot: f64,
    /// Full records sent (all clients).
    pub full_records: u64,
    /// Candidates deferred by the budget (all clients).
    pub deferred: u64,
    /// Delta records clients dropped for an unknown entity.
    pub client_unknown: u64,
    /// Delta records clients dropped by the stale-generation guard.
    pub client_stale: u64,
    /// Worst position error (3-D distance), m.
    pub worst_pos_err_m: f64,
    /// Worst orientation error (rotation angle), rad.
    pub worst_rot_err_rad: f64,
    /// Worst velocity error (3-D), m/s.
    pub worst_vel_err_mps: f64,
    /// Worst angular-rate error (3-D), rad/s, own entities.
    pub worst_omega_err_rad_s: f64,
    /// Bound of the position error (3-D): √3 × 0.0625 m.
    pub pos_bound_m: f64,
    /// Bound of the orientation error, rad.
    pub rot_bound_rad: f64,
    /// Bound of the velocity error (3-D), m/s.
    pub vel_bound_mps: f64,
    /// Bound of the angular-rate error (3-D), rad/s.
    pub omega_bound_rad_s: f64,
    /// Spec gate: sent KB/s per client (worst client) at most 150.
    pub gate_150_kbs: bool,
}

fn cell_centre(i: u32) -> DVec3 {
    DVec3::new(
        6_371_000.0 + f64::from(i % 16) * 10_000.0 - 80_000.0,
        2_000.0 + f64::from(i % 5) * 500.0,
        f64::from(i / 16 % 8) * 20_000.0 - 80_000.0,
    )
}

/// The true state of bot `i` at time `t` seconds (see the module docs).
pub fn bot_state(i: u32, t: f64, flying: bool, generation: u16) -> EntityState {
    let c = cell_centre(i);
    let fi = f64::from(i);
    let (pos, vel, rot, omega) = if flying {
        let r = 800.0 + 150.0 * f64::from(i % 13);
        let v = 90.0 + 15.0 * f64::from(i % 11);
        let w = v / r;
        let th = fi * 0.7 + w * t;
        let bob = 0.3 * t + fi;
        let pos = c + DVec3::new(r * th.cos(), 50.0 * bob.sin(), r * th.sin());
        let vel = DVec3::new(-r * w * th.sin(), 15.0 * bob.cos(), r * w * th.cos());
        let heading = vel.x.atan2(vel.z);
        let bank = (v * w / 9.81).atan();
        let rot = DQuat::from_rotation_y(heading) * DQuat::from_rotation_z(-bank);
        (pos, vel, rot, DVec3::new(0.0, w, 0.0))
    } else {
        (
            c,
            DVec3::ZERO,
            DQuat::from_rotation_y(fi * 0.4),
            DVec3::ZERO,
        )
    };
    EntityState {
        entity_index: i,
        generation,
        type_index: 1 + i % 6,
        faction_index: (i % 2) as u16,
        position_m: pos,
        orientation: rot,
        velocity_mps: vel,
        omega_rad_s: omega,
        loadout: Loadout {
            selected_station: (i % 4) as u8,
            station_rounds: 200,
            weapon_flags: 0,
            payload_mass_kg: 900.0,
            payload_cd0: 0.012,
        },
        status: Status {
            damage_level: 0,
            engine_fail_flags: 0,
            throttle: if flying { 0.72 } else { 0.0 },
            fuel: (0.9 - t * 0.001).max(0.0),
            ab_engaged: false,
            player_owned: true,
        },
    }
}

fn lost(client: u32, tick: u32, loss_pct: u32) -> bool {
    let mut h = (u64::from(client) << 32 | u64::from(tick)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^= h >> 29;
    (h % 100) < u64::from(loss_pct)
}

/// Runs the swarm. Errors, as text: a snapshot that the writer refuses or a client cannot
/// decode (a bug); a budget so small that no snapshot of the run held a single record (every
/// figure of such a run would describe nothing sent: no error measured, a rate of headers
/// only).
pub fn run(cfg: &SimConfig) -> Result<SimReport, String> {
    run_with_progress(cfg, |_, _| {})
}

/// [`run`], calling `progress` after each tick with (ticks done, ticks).
///
/// Errors: as for [`run`].
pub fn run_with_progress(
    cfg: &SimConfig,
    mut progress: impl FnMut(u32, u32),
) -> Result<SimReport, String> {
    let n = cfg.clients;
    let ticks = (cfg.seconds * f64::from(cfg.tick_hz)).round() as u32;
    let dt = 1.0 / f64::from(cfg.tick_hz);
    let mut peers: Vec<Peer> = (0..n)
        .map(|c| {
            Peer::new(PeerView {
                own_entity: Some(c),
                position_m: cell_centre(c),
                interest_radius_m: cfg.interest_radius_m,
                budget_bytes: cfg.budget_bytes.unwrap_or(usize::MAX),
            })
        })
        .collect();
    let mut clients: Vec<ClientDecoder> = (0..n).map(|_| ClientDecoder::new()).collect();
    let mut old_seen: Vec<HashMap<u32, u16>> = vec![HashMap::new(); n as usize];
    let respawn_tick = |i: u32| (i / 16 * 7919 + 13) % ticks.max(1);
    let mut writer = SnapshotWriter::new();
    let (mut old_bytes, mut raw_bytes, mut sent_bytes) = (
        vec![0u64; n as usize],
        vec![0u64; n as usize],
        vec![0u64; n as usize],
    );
    let mut rep = SimReport {
        config: *cfg,
        ticks,
        old_kbs_per_client: 0.0,
        packed_kbs_per_client: 0.0,
        sent_kbs_per_client: 0.0,
        sent_kbs_worst_client: 0.0,
        compressed_share: 0.0,
        records_per_snapshot: 0.0,
        full_records: 0,
        deferred: 0,
        client_unknown: 0,
        client_stale: 0,
        worst_pos_err_m: 0.0,
        worst_rot_err_rad: 0.0,
        worst_vel_err_mps: 0.0,
        worst_omega_err_rad_s: 0.0,
        pos_bound_m: 3f64.sqrt() * nq::POS_ERROR_BOUND_M,
        rot_bound_rad: nq::ROT_ERROR_BOUND_RAD,
        vel_bound_mps: 3f64.sqrt() * nq::VEL_ERROR_BOUND_MPS,
        omega_bound_rad_s: 3f64.sqrt() * nq::OMEGA_ERROR_BOUND_RAD_S,
        gate_150_kbs: false,
    };
    let (mut snapshots, mut compressed, mut records) = (0u64, 0u64, 0u64);
    for tick in 0..ticks {
        let t = f64::from(tick) * dt;
        let states: Vec<EntityState> = (0..n)
            .map(|i| {
                let gen = 1 + u16::from(i % 16 == 0 && tick >= respawn_tick(i));
                bot_state(i, t, cfg.flying, gen)
            })
            .collect();
        let encoded: Vec<EncodedEntity> = states.iter().map(EncodedEntity::new).collect();
        let positions: Vec<DVec3> = states.iter().map(|s| s.position_m).collect();
        for c in 0..n as usize {
            let peer = &mut peers[c];
            peer.view.position_m = positions[c];
            peer.receive_ack(&clients[c].acks);
            // Old fixed records: every entity in interest, 88 bytes when new at its generation.
            for s in &states {
                if s.position_m.distance(positions[c]) <= cfg.interest_radius_m
                    || s.entity_index as usize == c
                {
                    let seen = old_seen[c].insert(s.entity_index, s.generation);
                    old_bytes[c] += if seen == Some(s.generation) {
                        OLD_UPDATE_BYTES
                    } else {
                        OLD_ENTRY_BYTES
                    } as u64;
                }
            }
            let (bytes, st) = peer
                .assemble(tick, &encoded, &positions, &mut writer, cfg.compress)
                .map_err(|e| e.to_string())?;
            raw_bytes[c] += (ws::HEADER_BYTES + writer.body_bytes()) as u64;
            sent_bytes[c] += bytes.len() as u64;
            snapshots += 1;
            compressed += u64::from(st.compressed);
            records += st.records as u64;
            rep.full_records += st.full as u64;
            rep.deferred += st.deferred as u64;
            if lost(c as u32, tick, cfg.loss_pct) {
                continue;
            }
            let ar = clients[c]
                .apply(&bytes)
                .map_err(|e| format!("client {c} tick {tick}: {e}"))?;
            rep.client_unknown += ar.unknown as u64;
            rep.client_stale += ar.stale as u64;
            // Errors: every record of client 0, and every client's own record.
            let snap = decode(&bytes).map_err(|e| e.to_string())?;
            for r in &snap.records {
                if c != 0 && r.blob.entity_index as usize != c {
                    continue;
                }
                let e = RecordView {
                    record: r,
                    origins: &snap.origins,
                }
                .entity();
                let truth = &states[e.entity_index as usize];
                rep.worst_pos_err_m = rep
                    .worst_pos_err_m
                    .max(e.position_m.distance(truth.position_m));
                let q = truth.orientation.normalize();
                let ang = statepack_codecs::quant::angle_between_rad(e.orientation, q);
                rep.worst_rot_err_rad = rep.worst_rot_err_rad.max(ang);
                rep.worst_vel_err_mps = rep
                    .worst_vel_err_mps
                    .max(e.velocity_mps.distance(truth.velocity_mps));
                if let Some(w) = e.omega_rad_s {
                    rep.worst_omega_err_rad_s =
                        rep.worst_omega_err_rad_s.max(w.distance(truth.omega_rad_s));
                }
            }
        }
        progress(tick + 1, ticks);
    }
    if records == 0 {
        if let Some(b) = cfg.budget_bytes {
            return Err(format!(
                "no snapshot of the run held a record: a budget of {b} bytes per snapshot leaves no room for one after the {}-byte header ({} candidates deferred); give a larger budget",
                ws::HEADER_BYTES,
                rep.deferred
            ));
        }
    }
    let secs = f64::from(ticks) * dt;
    let kbs = |v: &[u64]| v.iter().map(|b| *b as f64 / 1024.0 / secs).sum::<f64>() / f64::from(n);
    rep.old_kbs_per_client = kbs(&old_bytes);
    rep.packed_kbs_per_client = kbs(&raw_bytes);
    rep.sent_kbs_per_client = kbs(&sent_bytes);
    rep.sent_kbs_worst_client = sent_bytes
        .iter()
        .map(|b| *b as f64 / 1024.0 / secs)
        .fold(0.0, f64::max);
    rep.compressed_share = compressed as f64 / snapshots.max(1) as f64;
    rep.records_per_snapshot = records as f64 / snapshots.max(1) as f64;
    rep.gate_150_kbs = rep.sent_kbs_worst_client <= 150.0;
    Ok(rep)
}

impl SimReport {
    /// The report as a markdown table row set (one run).
    pub fn to_markdown(&self) -> String {
        let c = &self.config;
        format!(
            "| setting | value |\n| --- | --- |\n\
             | clients, rate, seconds | {} clients, {} Hz, {} s ({} ticks) |\n\
             | bots | {} |\n\
             | budget per snapshot | {} |\n\
             | loss | {} % |\n\
             | old fixed records (88 / 64 B) | {:.1} KB/s per client |\n\
             | bit-packed, raw body | {:.1} KB/s per client |\n\
             | bit-packed, as sent (zstd when smaller) | {:.1} KB/s per client (worst client {:.1}); {:.0} % of bodies compressed |\n\
             | gate ≤ 150 KB/s | {} |\n\
             | records per snapshot | {:.1} ({} full records, {} deferred) |\n\
             | client drops | {} unknown, {} stale generation |\n\
             | worst position error | {:.4} m (bound {:.4}) |\n\
             | worst orientation error | {:.5} rad (bound {:.5}) |\n\
             | worst velocity error | {:.5} m/s (bound {:.5}) |\n\
             | worst angular-rate error | {:.5} rad/s (bound {:.5}) |\n",
            c.clients,
            c.tick_hz,
            c.seconds,
            self.ticks,
            if c.flying { "flying" } else { "idle" },
            c.budget_bytes.map_or("none".to_owned(), |b| format!("{b} B")),
            c.loss_pct,
            self.old_kbs_per_client,
            self.packed_kbs_per_client,
            self.sent_kbs_per_client,
            self.sent_kbs_worst_client,
            self.compressed_share * 100.0,
            if self.gate_150_kbs { "met" } else { "not met" },
            self.records_per_snapshot,
            self.full_records,
            self.deferred,
            self.client_unknown,
            self.client_stale,
            self.worst_pos_err_m,
            self.pos_bound_m,
            self.worst_rot_err_rad,
            self.rot_bound_rad,
            self.worst_vel_err_mps,
            self.vel_bound_mps,
            self.worst_omega_err_rad_s,
            self.omega_bound_rad_s,
        )
    }
}
