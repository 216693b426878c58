//! World snapshot (spec `world-snapshot-bitpacking.txt`): golden blob sizes and bytes, the
//! size estimate against real sizes, the generated codec against the hand-written one,
//! quantization bounds at planet scale, every clamp path, zstd framing, truncation, the
//! client cache and stale-generation guard, the ack window and the per-client assembler.

use glam::{DQuat, DVec3};
use statepack::formats::world_snapshot::assembler::{Peer, PeerView};
use statepack::formats::world_snapshot::client::{AckWindow, ClientDecoder};
use statepack::formats::world_snapshot::{
    self as ws, decode, encode_blob, estimate_record_bytes, record_of, sample_entity, BlobKind,
    EncodedEntity, EntityState, RecordView, SnapshotWriter,
};
use statepack::generated::world_snapshot::WorldSnapshot;
use statepack_codecs::netquant as nq;
use statepack_runtime::bits::{BitReader, BitWriter};

/// The hand-written codec the benches use as their baseline, included here to cross-check
/// the generated reader and writer (this test uses only part of it).
#[allow(dead_code)]
#[path = "../benches/common/wsnap_handcoded.rs"]
mod handcoded;

/// Bytes from a string of `0`/`1` (other characters ignored), zero-padded to a byte.
fn from_bits(s: &str) -> Vec<u8> {
    let bits: Vec<u8> = s.bytes().filter(|c| *c == b'0' || *c == b'1').collect();
    bits.chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |b, (i, x)| b | ((x - b'0') << (7 - i)))
        })
        .collect()
}

fn plain_state(idx: u32, pos: DVec3) -> EntityState {
    let mut s = sample_entity(idx, false);
    s.position_m = pos;
    s.orientation = DQuat::IDENTITY;
    s.velocity_mps = DVec3::ZERO;
    s.status = ws::Status::default();
    s
}

const ALL_KINDS: [BlobKind; 8] = {
    let mut k = [BlobKind::DELTA; 8];
    let mut i = 0;
    while i < 8 {
        k[i] = BlobKind {
            full: i & 1 != 0,
            gen_present: i & 2 != 0,
            own: i & 4 != 0,
        };
        i += 1;
    }
    k
};

#[test]
fn spec_blob_sizes_delta_24_full_own_41() {
    let s = sample_entity(5, true);
    let e = EncodedEntity::new(&s);
    assert_eq!(e.blob(BlobKind::DELTA).len(), 24, "steady-state delta blob");
    assert_eq!(
        e.blob(BlobKind::FULL.own()).len(),
        41,
        "full own-entity blob"
    );
    // The stitched record adds one byte of origin index.
    let mut w = SnapshotWriter::new();
    w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
    let b = w.finish(0, false).unwrap();
    assert_eq!(b.len(), 24 + 24 + 25);
    // Both are far below the old fixed records.
    assert!(e.blob(BlobKind::DELTA).len() < ws::OLD_UPDATE_BYTES);
    assert!(e.blob(BlobKind::FULL.own()).len() < ws::OLD_ENTRY_BYTES);
}

#[test]
fn golden_delta_blob_bytes_by_hand() {
    // Entity 5 exactly on a grid origin, identity rotation, at rest, status all zero.
    let origin = DVec3::new(6_356_992.0, 0.0, -65_536.0);
    let s = plain_state(5, origin);
    assert_eq!(nq::origin_for_pos(s.position_m), origin);
    let blob = encode_blob(&s, origin, BlobKind::DELTA);
    let mut want = vec![0x05];
    want.extend(from_bits(concat!(
        "000",                                                                  // full, gen, omega
        "1000000000000000000000 1000000000000000000000 1000000000000000000000", // pos codes 2^21
        "11 1000000000 1000000000 1000000000",                                  // w dropped, 512 x3
        "100000000000000000 100000000000000000 100000000000000000",             // vel codes 2^17
        "000 00000 0000000 0000000 0 0",                                        // status
    )));
    assert_eq!(blob, want);
    assert_eq!(blob.len(), 24);
}

#[test]
fn golden_full_own_blob_fields() {
    let s = sample_entity(5, true);
    let origin = nq::origin_for_pos(s.position_m);
    let blob = encode_blob(&s, origin, BlobKind::FULL.own());
    // Read back with the hand-written reader after a one-byte origin index.
    let mut rec = vec![0x00];
    rec.extend(&blob);
    let whole = handcoded::read_record(&mut BitReader::new(&rec)).unwrap();
    let r = &whole.blob;
    assert_eq!((r.full, r.gen_present, r.omega_present), (true, true, true));
    assert_eq!(r.generation, Some(6));
    assert_eq!(r.type_index, Some(3));
    assert_eq!(r.faction_index, Some(2));
    assert_eq!(r.payload_mass_kg, Some(1250));
    assert_eq!(r.payload_cd0, Some(1837));
    assert_eq!((r.throttle_pct, r.fuel_pct), (80, 55));
    assert_eq!(whole, record_of(&s, origin, BlobKind::FULL.own(), 0));
}

#[test]
fn estimate_equals_real_size_for_every_field_combination() {
    for kind in ALL_KINDS {
        for (oi, ei, ti) in [
            (0u32, 0u32, 0u32),
            (127, 127, 127),
            (128, 128, 128),
            (300, 16_384, 2_097_152),
            (u16::MAX as u32, u32::MAX, u32::MAX),
        ] {
            let mut s = sample_entity(ei, kind.own);
            s.entity_index = ei;
            s.type_index = ti;
            let origin = nq::origin_for_pos(s.position_m);
            let rec = record_of(&s, origin, kind, oi);
            let real = rec.encode_len_for_test();
            assert_eq!(
                estimate_record_bytes(oi, ei, kind, ti),
                real,
                "{kind:?} {oi} {ei} {ti}"
            );
            let blob = encode_blob(&s, origin, kind);
            assert_eq!(
                blob.len() + statepack_runtime::bits::leb128_len(u64::from(oi)),
                real
            );
        }
    }
}

trait EncodeLen {
    fn encode_len_for_test(&self) -> usize;
}

impl EncodeLen for statepack::generated::world_snapshot::EntityRecord {
    fn encode_len_for_test(&self) -> usize {
        let mut w = statepack_runtime::io::ByteWriter::new();
        self.write_to(&mut w).unwrap();
        assert_eq!(w.len(), self.encoded_len());
        w.len()
    }
}

#[test]
fn generated_and_hand_written_codecs_agree() {
    let mut stream = Vec::new();
    let mut bw = BitWriter::new();
    let mut recs = Vec::new();
    for i in 0..200u32 {
        let kind = ALL_KINDS[i as usize % 8];
        let mut s = sample_entity(i * 977, kind.own);
        s.velocity_mps *= f64::from(i) * 0.37 - 30.0;
        s.omega_rad_s *= f64::from(i % 9) - 4.0;
        let origin = nq::origin_for_pos(s.position_m);
        let rec = record_of(&s, origin, kind, i % 300);
        let mut w = statepack_runtime::io::ByteWriter::new();
        rec.write_to(&mut w).unwrap();
        stream.extend(w.into_bytes());
        handcoded::write_record(&mut bw, &rec);
        recs.push(rec);
    }
    let hand = bw.into_bytes();
    assert_eq!(hand, stream);
    assert_eq!(ws::decode_stream(&stream).unwrap(), recs);
    assert_eq!(handcoded::read_stream(&stream).unwrap(), recs);
}

#[test]
fn planet_scale_positions_stay_within_the_bound() {
    for pos in [
        DVec3::new(6_371_000.0, 0.0, 0.0),
        DVec3::new(-6_371_000.123, 4_000_000.9, 1.0e9),
        DVec3::new(1.0e12 - 0.01, -1.0e12 + 0.01, 65_535.99),
        DVec3::new(-0.01, -65_536.0, 131_071.94),
    ] {
        let s = plain_state(1, pos);
        let e = EncodedEntity::new(&s);
        let mut w = SnapshotWriter::new();
        w.push_record(e.origin, e.blob(BlobKind::FULL)).unwrap();
        let snap = decode(&w.finish(0, false).unwrap()).unwrap();
        let d = RecordView {
            record: &snap.records[0],
            origins: &snap.origins,
        }
        .entity();
        let err = (d.position_m - pos).abs().max_element();
        assert!(
            err <= nq::POS_ERROR_BOUND_M + 1e-9 * pos.abs().max_element() / 1e6,
            "{pos}: {err}"
        );
        assert_eq!(snap.origins[0], nq::origin_for_pos(pos));
    }
}

#[test]
fn every_clamp_path_gives_a_valid_record() {
    let mut s = sample_entity(9, true);
    s.position_m = DVec3::new(f64::NAN, f64::INFINITY, -1e300);
    s.orientation = DQuat::from_xyzw(f64::NAN, 1.0, 0.0, 0.0);
    s.velocity_mps = DVec3::new(f64::NAN, 1e6, f64::NEG_INFINITY);
    s.omega_rad_s = DVec3::new(f64::INFINITY, -100.0, f64::NAN);
    s.loadout.payload_mass_kg = f64::INFINITY;
    s.loadout.payload_cd0 = -1.0;
    s.status.damage_level = 200;
    s.status.engine_fail_flags = 0xff;
    s.status.throttle = f64::NAN;
    s.status.fuel = 7.0;
    let origin = nq::origin_for_pos(s.position_m);
    assert!(origin.is_finite());
    let r = record_of(&s, origin, BlobKind::FULL.own(), 0).blob;
    // NaN -> 0, +inf -> +1e12 m, -1e300 -> -1e12 m, each as an offset from its grid floor.
    let off = |v: f64| ((v - (v / 65_536.0).floor() * 65_536.0) / 0.125).round() as i32;
    assert_eq!((r.pos_x, r.pos_y, r.pos_z), (0, off(1.0e12), off(-1.0e12)));
    assert_eq!(
        (r.rot_dropped, r.rot_a, r.rot_b, r.rot_c),
        (3, 512, 512, 512)
    );
    assert_eq!((r.vel_x, r.vel_y, r.vel_z), (0, 131_071, -131_071));
    assert_eq!(
        (r.omega_x, r.omega_y, r.omega_z),
        (Some(2047), Some(-2047), Some(0))
    );
    assert_eq!((r.payload_mass_kg, r.payload_cd0), (Some(65_535), Some(0)));
    assert_eq!(
        (
            r.damage_level,
            r.engine_fail_flags,
            r.throttle_pct,
            r.fuel_pct
        ),
        (7, 31, 0, 100)
    );
    let mut w = SnapshotWriter::new();
    w.push_record(origin, &encode_blob(&s, origin, BlobKind::FULL.own()))
        .unwrap();
    decode(&w.finish(3, true).unwrap()).unwrap();
}

#[test]
fn errors_after_decode_are_within_the_documented_bounds() {
    for i in 0..300u32 {
        let mut s = sample_entity(i * 31, true);
        s.velocity_mps = DVec3::new(
            f64::from(i) * 6.6 - 990.0,
            1999.0 - f64::from(i),
            -0.004 * f64::from(i),
        );
        s.omega_rad_s = DVec3::new(f64::from(i) * 0.13 - 19.5, 0.001, -3.3);
        let e = EncodedEntity::new(&s);
        let mut w = SnapshotWriter::new();
        w.push_record(e.origin, e.blob(BlobKind::FULL.own()))
            .unwrap();
        let snap = decode(&w.finish(0, false).unwrap()).unwrap();
        let d = RecordView {
            record: &snap.records[0],
            origins: &snap.origins,
        }
        .entity();
        assert!((d.position_m - s.position_m).abs().max_element() <= nq::POS_ERROR_BOUND_M);
        assert!(
            (d.velocity_mps - s.velocity_mps).abs().max_element()
                <= nq::VEL_ERROR_BOUND_MPS + 1e-12
        );
        assert!(
            (d.omega_rad_s.unwrap() - s.omega_rad_s).abs().max_element()
                <= nq::OMEGA_ERROR_BOUND_RAD_S + 1e-12
        );
        let q = s.orientation.normalize();
        assert!(
            statepack_codecs::quant::angle_between_rad(d.orientation, q) <= nq::ROT_ERROR_BOUND_RAD
        );
        let l = d.loadout.unwrap();
        assert!((l.payload_mass_kg - s.loadout.payload_mass_kg).abs() <= 0.5);
        assert!((l.payload_cd0 - s.loadout.payload_cd0).abs() <= 0.5e-5 + 1e-12);
    }
}

#[test]
fn header_layout_and_origin_dedup() {
    let mut w = SnapshotWriter::new();
    let a = EncodedEntity::new(&plain_state(1, DVec3::new(10.0, 20.0, 30.0)));
    let b = EncodedEntity::new(&plain_state(2, DVec3::new(11.0, 21.0, 31.0)));
    let c = EncodedEntity::new(&plain_state(3, DVec3::new(70_000.0, 20.0, 30.0)));
    for e in [&a, &b, &c] {
        w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
    }
    w.push_despawn(300);
    let bytes = w.finish(0x0102_0304, false).unwrap();
    assert_eq!(bytes[0], 0x57);
    assert_eq!(bytes[1], 0);
    assert_eq!(u16::from_le_bytes([bytes[2], bytes[3]]), 2, "origin count");
    assert_eq!(&bytes[4..8], &[4, 3, 2, 1], "tick");
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        3,
        "records"
    );
    assert_eq!(
        u32::from_le_bytes(bytes[12..16].try_into().unwrap()),
        3 * 25,
        "bitstream bytes"
    );
    assert_eq!(
        u32::from_le_bytes(bytes[16..20].try_into().unwrap()),
        5,
        "tlv bytes: 01 02 00 ac 02"
    );
    assert_eq!(
        u32::from_le_bytes(bytes[20..24].try_into().unwrap()),
        48 + 75 + 5
    );
    assert_eq!(&bytes[bytes.len() - 5..], &[1, 2, 0, 0xac, 0x02]);
    assert_eq!(bytes.len(), 24 + 48 + 75 + 5);
    // The third record refers to origin 1, the first two to origin 0.
    let snap = decode(&bytes).unwrap();
    let oi: Vec<u64> = snap.records.iter().map(|r| r.origin_index).collect();
    assert_eq!(oi, vec![0, 0, 1]);
    assert_eq!(snap.despawns, vec![300]);
    // The raw layer re-encodes to the same bytes.
    assert_eq!(
        WorldSnapshot::decode(&bytes).unwrap().encode().unwrap(),
        bytes
    );
}

#[test]
fn zstd_body_only_when_strictly_smaller() {
    let empty = SnapshotWriter::new().finish(1, true).unwrap();
    assert_eq!(empty[1], 0, "an empty body never shrinks");
    assert_eq!(empty.len(), 24);
    let mut w = SnapshotWriter::new();
    for i in 0..100 {
        let e = EncodedEntity::new(&plain_state(i, DVec3::new(5.0, 5.0, 5.0)));
        w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
    }
    let raw = w.finish(9, false).unwrap();
    let z = w.finish(9, true).unwrap();
    assert_eq!(z[1], 1);
    assert!(z.len() < raw.len());
    assert_eq!(
        &z[2..24],
        &raw[2..24],
        "the header describes the raw body either way"
    );
    let (a, b) = (decode(&raw).unwrap(), decode(&z).unwrap());
    assert!(b.compressed && !a.compressed);
    assert_eq!(a.records, b.records);
}

/// A body that zstd shrinks more than `MAX_ZSTD_RATIO` times (thousands of identical records)
/// is sent raw, since readers refuse such a frame; what the writer makes always decodes.
#[test]
fn bodies_past_the_zstd_ratio_limit_are_sent_raw() {
    use statepack::formats::world_snapshot::MAX_ZSTD_RATIO;
    let e = EncodedEntity::new(&plain_state(3, DVec3::new(5.0, 5.0, 5.0)));
    let mut w = SnapshotWriter::new();
    for _ in 0..20_000 {
        w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
    }
    let raw = w.finish(9, false).unwrap();
    let frame = zstd::bulk::compress(&raw[24..], 3).unwrap();
    assert!(
        raw.len() - 24 > frame.len() * MAX_ZSTD_RATIO,
        "the body must compress past the limit for this test: {} -> {}",
        raw.len() - 24,
        frame.len()
    );
    let z = w.finish(9, true).unwrap();
    assert_eq!(z[1], 0, "sent raw");
    assert_eq!(z, raw);
    assert_eq!(decode(&z).unwrap().records.len(), 20_000);
}

#[test]
fn hostile_zstd_headers_are_refused_before_decompressing() {
    let mut w = SnapshotWriter::new();
    for i in 0..50 {
        let e = EncodedEntity::new(&plain_state(i, DVec3::ZERO));
        w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
    }
    let z = w.finish(9, true).unwrap();
    let mut big = z.clone();
    big[20..24].copy_from_slice(&(2u32 << 20).to_le_bytes());
    let e = decode(&big).unwrap_err();
    assert_eq!(e.path.to_string(), "uncompressed_bytes");
    let mut short = z.clone();
    let n = u32::from_le_bytes(short[20..24].try_into().unwrap()) - 1;
    short[20..24].copy_from_slice(&n.to_le_bytes());
    assert_eq!(decode(&short).unwrap_err().path.to_string(), "zstd_body");
    let mut cut = z.clone();
    cut.truncate(cut.len() - 3);
    assert!(decode(&cut).is_err());
}

#[test]
fn truncated_buffers_fail_closed() {
    for (name, bytes) in ws::sample_files() {
        for n in 0..bytes.len() {
            // A zstd body is `size-eos` bytes in the raw layer: only the full decode, which
            // decompresses, can tell that it was cut.
            if bytes[1] == 0 || n < 24 {
                assert!(
                    WorldSnapshot::decode(&bytes[..n]).is_err(),
                    "{name} prefix {n}"
                );
            }
            assert!(decode(&bytes[..n]).is_err(), "{name} prefix {n}");
        }
        decode(&bytes).unwrap();
    }
    let s = sample_entity(5, true);
    let mut rec = vec![0u8];
    rec.extend(encode_blob(
        &s,
        nq::origin_for_pos(s.position_m),
        BlobKind::FULL.own(),
    ));
    for n in 0..rec.len() {
        assert!(
            handcoded::read_record(&mut BitReader::new(&rec[..n])).is_err(),
            "{n}"
        );
        assert!(ws::decode_stream(&rec[..n]).is_err() || n == 0, "{n}");
    }
}

#[test]
fn cross_field_rules_are_checked() {
    let s = sample_entity(5, false);
    let origin = nq::origin_for_pos(s.position_m);
    let mut r = record_of(&s, origin, BlobKind::DELTA, 1);
    let raw = ws::raw_snapshot(0, &[origin], vec![r.clone()], &[]).unwrap();
    let e = decode(&raw.encode().unwrap()).unwrap_err();
    assert_eq!(e.path.to_string(), "records.records[0]");
    assert!(e.to_string().contains("origin_index 1"), "{e}");
    r.origin_index = 0;
    r.blob.full = true;
    r.blob.type_index = Some(1);
    r.blob.faction_index = Some(1);
    let raw = ws::raw_snapshot(0, &[origin], vec![r.clone()], &[]).unwrap();
    assert!(decode(&raw.encode().unwrap())
        .unwrap_err()
        .to_string()
        .contains("generation"));
    let mut raw = ws::raw_snapshot(0, &[origin], vec![], &[]).unwrap();
    raw.record_count = 2;
    assert_eq!(
        decode(&raw.encode().unwrap()).unwrap_err().path.to_string(),
        "record_count"
    );
    let mut raw = ws::raw_snapshot(0, &[origin], vec![], &[]).unwrap();
    raw.uncompressed_bytes += 1;
    assert_eq!(
        decode(&raw.encode().unwrap()).unwrap_err().path.to_string(),
        "uncompressed_bytes"
    );
}

#[test]
fn nonzero_padding_and_long_varints_are_refused() {
    let s = plain_state(5, DVec3::ZERO);
    let mut w = SnapshotWriter::new();
    w.push_record(DVec3::ZERO, &encode_blob(&s, DVec3::ZERO, BlobKind::DELTA))
        .unwrap();
    let mut b = w.finish(0, false).unwrap();
    let last = b.len() - 1;
    b[last] |= 1; // a padding bit of the only record (179 bits + 5 padding)
    let e = decode(&b).unwrap_err();
    assert_eq!(e.path.to_string(), "records.records[0].blob.align");
}

#[test]
fn an_out_of_range_position_code_is_reported_by_field_not_as_a_size_mismatch() {
    let s = plain_state(5, DVec3::ZERO);
    let origin = DVec3::ZERO;
    let mut r = record_of(&s, origin, BlobKind::DELTA, 0);
    let good = r.blob.encoded_len();
    // 22-bit offset binary holds -2^21 ..= 2^21 - 1.
    r.blob.pos_x = 1 << 21;
    // The length is computed from the widths, not by writing: the same for any value.
    assert_eq!(r.blob.encoded_len(), good);
    let raw = ws::raw_snapshot(0, &[origin], vec![r.clone()], &[]).unwrap();
    let e = raw.encode().unwrap_err();
    assert_eq!(e.path.to_string(), "records.records[0].blob.pos_x", "{e}");
    assert!(!e.to_string().contains("size"), "{e}");
    // The blob on its own reports the same field.
    let mut out = Vec::new();
    let e = ws::write_blob_into(&r.blob, &mut out).unwrap_err();
    assert_eq!(e.path.to_string(), "pos_x", "{e}");
    assert!(out.is_empty());
}

#[test]
fn ack_window_covers_32_ticks() {
    let mut a = AckWindow::default();
    assert!(!a.acks(0));
    a.record(10);
    a.record(12);
    a.record(11);
    assert!(a.acks(10) && a.acks(11) && a.acks(12) && !a.acks(9) && !a.acks(13));
    a.record(41);
    assert!(a.acks(12) && a.acks(10) && !a.acks(11 + 32));
    a.record(43);
    assert!(!a.acks(10), "fell out of the window");
    a.record(100);
    assert_eq!(a.mask, 1);
}

#[test]
fn client_cache_and_stale_generation_guard() {
    let mut s = sample_entity(8, false);
    let e = EncodedEntity::new(&s);
    let mut client = ClientDecoder::new();
    // A delta before any full record: unknown, dropped.
    let mut w = SnapshotWriter::new();
    w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
    let rep = client.apply(&w.finish(1, false).unwrap()).unwrap();
    assert_eq!((rep.applied, rep.unknown), (0, 1));
    // A full record fills the cache; a later delta takes type and faction from it.
    w.clear();
    w.push_record(e.origin, e.blob(BlobKind::FULL)).unwrap();
    client.apply(&w.finish(2, false).unwrap()).unwrap();
    w.clear();
    w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
    let rep = client.apply(&w.finish(3, false).unwrap()).unwrap();
    assert_eq!(rep.applied, 1);
    let got = client.entities[&8];
    assert_eq!(
        (got.type_index, got.faction_index, got.generation),
        (
            Some(s.type_index),
            Some(s.faction_index),
            Some(s.generation)
        )
    );
    // A delta carrying another generation is stale.
    s.generation += 1;
    w.clear();
    w.push_record(
        e.origin,
        &encode_blob(
            &s,
            e.origin,
            BlobKind {
                full: false,
                gen_present: true,
                own: false,
            },
        ),
    )
    .unwrap();
    let rep = client.apply(&w.finish(4, false).unwrap()).unwrap();
    assert_eq!((rep.applied, rep.stale), (0, 1));
    // Despawn removes entity and cache.
    w.clear();
    w.push_despawn(8);
    let rep = client.apply(&w.finish(5, false).unwrap()).unwrap();
    assert_eq!(rep.despawned, 1);
    assert!(client.cache.is_empty() && client.entities.is_empty());
    assert!(client.acks.acks(5) && client.acks.acks(1));
}

/// Snapshots that arrive late are applied by tick order: an older snapshot after a newer one
/// does not move an entity back, a full record older than a despawn does not bring the entity
/// back, and a despawn older than the newest record does not remove it.
#[test]
fn client_applies_snapshots_by_tick_order() {
    let full_at = |x: f64, tick: u32| {
        let e = EncodedEntity::new(&plain_state(3, DVec3::new(x, 0.0, 0.0)));
        let mut w = SnapshotWriter::new();
        w.push_record(e.origin, e.blob(BlobKind::FULL)).unwrap();
        w.finish(tick, false).unwrap()
    };
    let despawn_at = |tick: u32| {
        let mut w = SnapshotWriter::new();
        w.push_despawn(3);
        w.finish(tick, false).unwrap()
    };
    let x = |c: &ClientDecoder| c.entities.get(&3).map(|e| e.position_m.x.round());
    let mut client = ClientDecoder::new();
    client.apply(&full_at(50.0, 10)).unwrap();
    client.apply(&full_at(12.0, 12)).unwrap();
    assert_eq!(x(&client), Some(12.0));
    // Tick 11 arrives after tick 12: dropped, x stays 12.
    let rep = client.apply(&full_at(50.0, 11)).unwrap();
    assert_eq!((rep.applied, rep.late), (0, 1));
    assert_eq!(x(&client), Some(12.0));
    // The same tick again changes nothing either.
    assert_eq!(client.apply(&full_at(50.0, 12)).unwrap().late, 1);
    // A despawn older than the newest record does not remove the entity.
    let rep = client.apply(&despawn_at(11)).unwrap();
    assert_eq!((rep.despawned, rep.late), (0, 1));
    assert_eq!(x(&client), Some(12.0));
    // Despawned at tick 14; a full record of tick 13 arriving later does not resurrect it.
    assert_eq!(client.apply(&despawn_at(14)).unwrap().despawned, 1);
    let rep = client.apply(&full_at(30.0, 13)).unwrap();
    assert_eq!((rep.applied, rep.late), (0, 1));
    assert_eq!(x(&client), None);
    assert!(!client.cache.contains_key(&3));
    // A newer full record spawns it again.
    assert_eq!(client.apply(&full_at(30.0, 15)).unwrap().applied, 1);
    assert_eq!(x(&client), Some(30.0));
    // Every tick decoded is acked, late or not.
    assert!((10..=15).all(|t| client.acks.acks(t)));
}

fn view(budget: usize) -> PeerView {
    PeerView {
        own_entity: Some(0),
        position_m: DVec3::ZERO,
        interest_radius_m: 5_000.0,
        budget_bytes: budget,
    }
}

fn world(n: u32) -> (Vec<EncodedEntity>, Vec<DVec3>) {
    let states: Vec<EntityState> = (0..n)
        .map(|i| {
            let mut s = plain_state(i, DVec3::new(f64::from(i) * 100.0, 0.0, 0.0));
            s.status.player_owned = i == 0;
            s
        })
        .collect();
    (
        states.iter().map(EncodedEntity::new).collect(),
        states.iter().map(|s| s.position_m).collect(),
    )
}

#[test]
fn assembler_resends_full_records_until_acked() {
    let (ents, pos) = world(10);
    let mut peer = Peer::new(view(usize::MAX));
    let mut w = SnapshotWriter::new();
    let mut client = ClientDecoder::new();
    let (b1, s1) = peer.assemble(1, &ents, &pos, &mut w, false).unwrap();
    assert_eq!((s1.records, s1.full), (10, 10));
    // Lost: no ack, so tick 2 is full again.
    let (_, s2) = peer.assemble(2, &ents, &pos, &mut w, false).unwrap();
    assert_eq!(s2.full, 10);
    // The client decodes tick 1 late; acking tick 1 confirms the fulls sent in it.
    client.apply(&b1).unwrap();
    peer.receive_ack(&client.acks);
    let (b3, s3) = peer.assemble(3, &ents, &pos, &mut w, false).unwrap();
    assert_eq!(s3.full, 0);
    let rep = client.apply(&b3).unwrap();
    assert_eq!(rep.applied, 10);
    // The own entity's record carries rates and loadout; the others do not.
    let snap = decode(&b3).unwrap();
    assert!(snap
        .records
        .iter()
        .all(|r| r.blob.omega_present == (r.blob.entity_index == 0)));
    assert_eq!(snap.records[0].blob.entity_index, 0, "own entity first");
}

#[test]
fn assembler_budget_relevance_and_despawns() {
    let (ents, pos) = world(40);
    let budget = 24 + 24 + 42 + 10 * 31;
    let mut peer = Peer::new(view(budget));
    let mut w = SnapshotWriter::new();
    let (b, s) = peer.assemble(1, &ents, &pos, &mut w, false).unwrap();
    assert!(b.len() <= budget, "{} > {budget}", b.len());
    assert!(s.deferred > 0);
    let snap = decode(&b).unwrap();
    // Nearest first: entity indices ascend with distance.
    let idx: Vec<u64> = snap.records.iter().map(|r| r.blob.entity_index).collect();
    assert_eq!(idx, (0..idx.len() as u64).collect::<Vec<_>>());
    // Entity 5 leaves interest: it is despawned once, and deferred entities are not.
    let mut pos2 = pos.clone();
    pos2[5] = DVec3::new(1.0e6, 0.0, 0.0);
    let (b, s) = peer.assemble(2, &ents, &pos2, &mut w, false).unwrap();
    assert_eq!(s.despawned, 1);
    assert_eq!(decode(&b).unwrap().despawns, vec![5]);
    let (_, s) = peer.assemble(3, &ents, &pos2, &mut w, false).unwrap();
    assert_eq!(s.despawned, 0);
}

#[test]
fn small_swarm_run_is_within_bounds() {
    let cfg = statepack::sim::wsnap_swarm::SimConfig {
        clients: 6,
        tick_hz: 20,
        seconds: 1.0,
        loss_pct: 20,
        ..Default::default()
    };
    let r = statepack::sim::wsnap_swarm::run(&cfg).unwrap();
    assert_eq!(r.ticks, 20);
    assert!(r.worst_pos_err_m <= r.pos_bound_m, "{r:?}");
    assert!(r.worst_rot_err_rad <= r.rot_bound_rad, "{r:?}");
    assert!(r.worst_vel_err_mps <= r.vel_bound_mps, "{r:?}");
    assert!(r.worst_omega_err_rad_s <= r.omega_bound_rad_s, "{r:?}");
    assert!(r.worst_pos_err_m > 0.0);
    assert!(r.packed_kbs_per_client < r.old_kbs_per_client);
    assert_eq!(r.client_unknown, 0);
    // Losses force full records to be re-sent beyond the first tick.
    assert!(r.full_records > 6 * 6, "{}", r.full_records);
}

/// A budget that no record fits (here 40 bytes: the 24-byte header leaves 16, less than the
/// smallest record) is refused instead of reporting a run in which nothing was sent as one
/// within every bound; the smallest budget that carries records still runs.
#[test]
fn a_budget_that_holds_no_record_is_refused() {
    let cfg = |budget| statepack::sim::wsnap_swarm::SimConfig {
        clients: 4,
        tick_hz: 10,
        seconds: 1.0,
        budget_bytes: Some(budget),
        ..Default::default()
    };
    for budget in [0, 24, 40] {
        let e = statepack::sim::wsnap_swarm::run(&cfg(budget)).unwrap_err();
        assert!(
            e.contains(&format!("a budget of {budget} bytes")) && e.contains("no room"),
            "{e}"
        );
    }
    let r = statepack::sim::wsnap_swarm::run(&cfg(200)).unwrap();
    assert!(r.records_per_snapshot > 0.0, "{r:?}");
}

#[test]
fn record_struct_size_used_by_the_allocation_bound() {
    // tests/hostile_alloc.rs derives the world snapshot's K from this size.
    assert_eq!(
        std::mem::size_of::<statepack::generated::world_snapshot::EntityRecord>(),
        136
    );
}

#[test]
fn budget_deferred_entities_are_not_starved() {
    let (ents, pos) = world(40);
    let mut peer = Peer::new(view(24 + 24 + 42 + 10 * 31));
    let mut w = SnapshotWriter::new();
    let mut client = ClientDecoder::new();
    let mut seen = std::collections::BTreeSet::new();
    for tick in 0..12 {
        peer.receive_ack(&client.acks);
        let (b, _) = peer.assemble(tick, &ents, &pos, &mut w, false).unwrap();
        client.apply(&b).unwrap();
        seen.extend(
            decode(&b)
                .unwrap()
                .records
                .iter()
                .map(|r| r.blob.entity_index),
        );
    }
    assert_eq!(
        seen.len(),
        40,
        "every entity in interest is sent within 12 ticks"
    );
    assert_eq!(
        client.entities.len(),
        40,
        "the client keeps deferred entities"
    );
}

#[test]
fn one_pass_stitch_equals_the_incremental_writer() {
    let ents: Vec<EncodedEntity> = (0..300u32)
        .map(|i| EncodedEntity::new(&sample_entity(i * 53, i == 0)))
        .collect();
    let pairs: Vec<(DVec3, &[u8])> = ents
        .iter()
        .map(|e| (e.origin, e.blob(BlobKind::DELTA)))
        .collect();
    let mut w = SnapshotWriter::new();
    for (o, b) in &pairs {
        w.push_record(*o, b).unwrap();
    }
    for d in [1u32, 200, 1 << 30] {
        w.push_despawn(d);
    }
    let a = w.finish(42, false).unwrap();
    assert_eq!(ws::stitch(42, &pairs, &[1, 200, 1 << 30]).unwrap(), a);
    assert!(
        decode(&a).unwrap().origins.len() > 128,
        "origin indices above 127 take two bytes"
    );
}

#[test]
fn stitching_by_origin_id_gives_the_same_bytes() {
    let ents: Vec<EncodedEntity> = (0..300u32)
        .map(|i| EncodedEntity::new(&sample_entity(i * 53, i == 0)))
        .collect();
    let (table, ids) = ws::tick_origins(&ents);
    assert!(table.len() > 128);
    // Every other entity, in reverse: the snapshot's table differs from the tick's.
    let picked: Vec<usize> = (0..300).rev().step_by(2).collect();
    let pairs: Vec<(DVec3, &[u8])> = picked
        .iter()
        .map(|&i| (ents[i].origin, ents[i].blob(BlobKind::DELTA)))
        .collect();
    let mut w = SnapshotWriter::new();
    w.set_tick_origins(&table);
    for &i in &picked {
        w.push_id(ids[i], ents[i].blob(BlobKind::DELTA)).unwrap();
    }
    w.push_despawn(77);
    let a = w.finish(9, false).unwrap();
    assert_eq!(a, ws::stitch(9, &pairs, &[77]).unwrap());
    decode(&a).unwrap();
    // The same through the entities' own ids, twice (the second reuses the table).
    for _ in 0..2 {
        w.set_entities(&ents);
        for &i in &picked {
            let id = w.entity_origin_id(i);
            assert_eq!(id, ids[i]);
            w.push_id(id, ents[i].blob(BlobKind::DELTA)).unwrap();
        }
        w.push_despawn(77);
        assert_eq!(w.message(9, false).unwrap(), &a[..]);
    }
    // An id outside the tick's table is refused.
    w.set_tick_origins(&table[..1]);
    assert!(matches!(
        w.push_id(ids[picked[0]].max(1), b"x"),
        Err(ws::SnapshotError::BadBlob(_))
    ));
    assert!(w.push_id(u32::MAX, b"x").is_err());
}

/// The budget counts header, origin table and records at their exact sizes (not the
/// despawns): a record that would pass it is left out and changes nothing.
#[test]
fn writer_budget_counts_exact_record_sizes() {
    let ents: Vec<EncodedEntity> = (0..20u32)
        .map(|i| EncodedEntity::new(&sample_entity(i * 911, false)))
        .collect();
    let mut w = SnapshotWriter::new();
    w.set_entities(&ents);
    w.push_despawn(5);
    let mut expect = ws::HEADER_BYTES;
    let mut kept = Vec::new();
    let budget = 400;
    for (i, e) in ents.iter().enumerate() {
        let oi = w.origin_index(e.origin);
        let new = oi as usize == w.origin_count();
        let need = ws::estimate_record_bytes(oi, e.entity_index, BlobKind::FULL, e.type_index)
            + if new { 24 } else { 0 };
        let fits = expect + need <= budget;
        let written = w
            .push_id_within(w.entity_origin_id(i), e.blob(BlobKind::FULL), budget)
            .unwrap();
        assert_eq!(written, fits, "entity {i}");
        if written {
            expect += need;
            kept.push(i);
        }
        assert_eq!(w.counted_bytes(), expect);
    }
    assert!(!kept.is_empty() && kept.len() < ents.len());
    let msg = w.finish(4, false).unwrap();
    assert_eq!(
        msg.len(),
        expect + 4,
        "one despawn TLV of 4 bytes beyond the budget"
    );
    let pairs: Vec<(DVec3, &[u8])> = kept
        .iter()
        .map(|&i| (ents[i].origin, ents[i].blob(BlobKind::FULL)))
        .collect();
    assert_eq!(msg, ws::stitch(4, &pairs, &[5]).unwrap());
}

/// The writer's zstd body is the frame `zstd::bulk::compress` makes at level 3, its
/// context is reused from message to message, and a message can be asked for again after
/// more records.
#[test]
fn writer_zstd_body_and_reuse() {
    let mut w = SnapshotWriter::new();
    for round in 0..3u32 {
        for i in 0..60u32 {
            let e = EncodedEntity::new(&sample_entity(i, false));
            w.push_record(e.origin, e.blob(BlobKind::DELTA)).unwrap();
        }
        w.push_despawn(round);
        let raw = w.finish(round, false).unwrap();
        let z = w.finish(round, true).unwrap();
        assert_eq!(z[1], ws::FLAG_ZSTD);
        let frame = zstd::bulk::compress(&raw[ws::HEADER_BYTES..], ws::ZSTD_LEVEL).unwrap();
        assert_eq!(&z[ws::HEADER_BYTES..], &frame[..]);
        assert_eq!(&z[2..ws::HEADER_BYTES], &raw[2..ws::HEADER_BYTES]);
        let d = decode(&z).unwrap();
        assert_eq!(d.records.len(), 60 * (round as usize + 1));
        assert_eq!(d.despawns, (0..=round).collect::<Vec<_>>());
    }
    w.clear();
    assert_eq!(w.finish(0, true).unwrap().len(), ws::HEADER_BYTES);
}

/// `encode_blob_into` appends each blob after what `out` already holds and leaves those
/// bytes as they were, whatever their last byte (it is briefly overwritten by the record's
/// origin index), for every blob kind.
#[test]
fn encode_blob_into_appends_after_existing_bytes() {
    for (i, kind) in [BlobKind::FULL, BlobKind::DELTA, BlobKind::FULL.own()]
        .into_iter()
        .enumerate()
    {
        let s = sample_entity(i as u32 + 3, i == 2);
        let origin = nq::origin_for_pos(s.position_m);
        let blob = encode_blob(&s, origin, kind);
        for prefix in [vec![], vec![0xa5], vec![1, 2, 3, 0xff]] {
            let mut out = prefix.clone();
            let n = ws::encode_blob_into(&s, origin, kind, &mut out);
            assert_eq!(n, blob.len());
            let mut want = prefix.clone();
            want.extend_from_slice(&blob);
            assert_eq!(out, want, "kind {i}, prefix {prefix:?}");
            // A second blob after the first.
            let n2 = ws::encode_blob_into(&s, origin, kind, &mut out);
            assert_eq!(n2, blob.len());
            want.extend_from_slice(&blob);
            assert_eq!(out, want, "second blob, kind {i}, prefix {prefix:?}");
        }
    }
}
