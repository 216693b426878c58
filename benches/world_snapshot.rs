//! Speed of the world snapshot codec, each measurement next to its baseline in the same run.
//!
//! Input: 128 flying bots of the swarm model (`sim::wsnap_swarm::bot_state`), one
//! tick. Groups:
//!
//! - `encode_full` / `encode_delta` (per entity): `generated` quantizes and writes the blob
//!   through the generated writer (`encode_blob`, what the server runs);
//!   `baseline_hand_written` quantizes the same way and writes with the hand-written bit
//!   writer (`benches/common/wsnap_handcoded.rs`); `quantize_only` is the quantization
//!   alone, the part both share.
//! - `stitch` (per peer snapshot of 128 records, all through the one `SnapshotWriter`):
//!   `writer_by_origin_id` pushes the pre-encoded blobs by tick-wide origin id (`clear`,
//!   `push_id`) and finishes the raw message in place (`message`); `set_entities_check` is
//!   the per-peer check that the tick-wide table still fits the tick's entities;
//!   `writer_budget_despawns` is the assembler's path: every push checked against a byte
//!   budget (`push_id_within`, one every record fits in) and four despawns in a TLV;
//!   `writer_by_origin` pushes by origin value (`push_record`, origins compared bit for bit);
//!   `writer_budget_despawns_zstd` is the assembler's path with the zstd body;
//!   `baseline_memcpy` copies the same blob bytes into a preallocated buffer.
//! - `quantize_parts` (per entity): the position, rotation and velocity quantizers of
//!   `netquant` one at a time, and `record_of_full` (all of a full record's quantization and
//!   the building of the generated `EntityRecord`), to show where quantization time goes.
//! - `decode` (per record, a 128-record stream): `generated` is the generated reader,
//!   `baseline_hand_written` the hand-written bit reader.
//!
//! - `deku_delta` (per record): the steady-state delta records (entity index below 128, so
//!   its varint is one byte) as a `deku` derive (bitvec underneath), encode and decode, next
//!   to the generated and hand-written code on the same records: the comparison behind the
//!   choice of the runtime's own bit reader and writer for generated code. `*_generated_via_deku`
//!   and `*_generated_via_binrw` are the generated `EntityBlob` through its `DekuReader` /
//!   `DekuWriter` and `BinRead` / `BinWrite` impls (root crate features `deku`, `binrw`), one
//!   record per call on its own in-memory buffer, as `decode_deku` / `encode_deku` are.
//!
//! Before timing, both encoders' bytes and both decoders' records are compared, so a broken
//! variant stops the run. Figures: `docs/performance.md`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use statepack::formats::world_snapshot::{
    self as ws, record_of, BlobKind, EncodedEntity, EntityState, SnapshotWriter,
};
use statepack::sim::wsnap_swarm as sim;

/// The hand-written codec of the same records: the baseline of every group.
#[path = "common/wsnap_handcoded.rs"]
mod handcoded;
use statepack_codecs::netquant as nq;
use statepack_runtime::bits::BitWriter;

/// The delta record without origin index as a deku derive: the same bits, MSB first.
mod dk {
    use deku::prelude::*;

    #[derive(Debug, Clone, PartialEq, DekuRead, DekuWrite)]
    #[deku(endian = "big")]
    pub struct Delta {
        pub idx: u8,
        #[deku(bits = 1)]
        pub full: u8,
        #[deku(bits = 1)]
        pub gen_present: u8,
        #[deku(bits = 1)]
        pub omega_present: u8,
        #[deku(bits = 22)]
        pub pos_x: u32,
        #[deku(bits = 22)]
        pub pos_y: u32,
        #[deku(bits = 22)]
        pub pos_z: u32,
        #[deku(bits = 2)]
        pub rot_dropped: u8,
        #[deku(bits = 10)]
        pub rot_a: u16,
        #[deku(bits = 10)]
        pub rot_b: u16,
        #[deku(bits = 10)]
        pub rot_c: u16,
        #[deku(bits = 18)]
        pub vel_x: u32,
        #[deku(bits = 18)]
        pub vel_y: u32,
        #[deku(bits = 18)]
        pub vel_z: u32,
        #[deku(bits = 3)]
        pub damage_level: u8,
        #[deku(bits = 5)]
        pub engine_fail_flags: u8,
        #[deku(bits = 7)]
        pub throttle_pct: u8,
        #[deku(bits = 7)]
        pub fuel_pct: u8,
        #[deku(bits = 1)]
        pub ab_engaged: u8,
        #[deku(bits = 1)]
        pub player_owned: u8,
        #[deku(bits = 5)]
        pub pad: u8,
    }

    /// From the generated record (offset binary codes as stored).
    pub fn from_record(r: &statepack::generated::world_snapshot::EntityBlob) -> Delta {
        let ob = |v: i32, w: u32| (v + (1 << (w - 1))) as u32;
        Delta {
            idx: r.entity_index as u8,
            full: 0,
            gen_present: 0,
            omega_present: 0,
            pos_x: ob(r.pos_x, 22),
            pos_y: ob(r.pos_y, 22),
            pos_z: ob(r.pos_z, 22),
            rot_dropped: r.rot_dropped,
            rot_a: r.rot_a,
            rot_b: r.rot_b,
            rot_c: r.rot_c,
            vel_x: ob(r.vel_x, 18),
            vel_y: ob(r.vel_y, 18),
            vel_z: ob(r.vel_z, 18),
            damage_level: r.damage_level,
            engine_fail_flags: r.engine_fail_flags,
            throttle_pct: r.throttle_pct,
            fuel_pct: r.fuel_pct,
            ab_engaged: u8::from(r.ab_engaged),
            player_owned: u8::from(r.player_owned),
            pad: 0,
        }
    }
}

fn bench_deku(c: &mut Criterion) {
    use binrw::BinRead;
    use deku::{DekuContainerRead, DekuContainerWrite, DekuReader};
    use statepack::generated::world_snapshot::EntityBlob;
    let states = states();
    let recs: Vec<_> = states
        .iter()
        .map(|s| ws::blob_of(s, nq::origin_for_pos(s.position_m), BlobKind::DELTA))
        .collect();
    let dk: Vec<dk::Delta> = recs.iter().map(dk::from_record).collect();
    let blobs: Vec<Vec<u8>> = states
        .iter()
        .map(|s| ws::encode_blob(s, nq::origin_for_pos(s.position_m), BlobKind::DELTA))
        .collect();
    for (d, b) in dk.iter().zip(&blobs) {
        assert_eq!(
            &d.to_bytes().expect("deku writes"),
            b,
            "deku and generated bytes differ"
        );
        let (_, back) = dk::Delta::from_bytes((b, 0)).expect("deku reads");
        assert_eq!(&back, d);
    }
    // Stitched records with origin index 0, for the record decoders.
    let stream: Vec<u8> = blobs
        .iter()
        .flat_map(|b| std::iter::once(0u8).chain(b.iter().copied()))
        .collect();
    // Each blob on its own (the bit type), for the per-record paths.
    let with_index: Vec<Vec<u8>> = blobs.clone();
    for (r, bytes) in recs.iter().zip(&with_index) {
        let mut c = std::io::Cursor::new(bytes.as_slice());
        let mut rd = deku::reader::Reader::new(&mut c);
        let via_deku = EntityBlob::from_reader_with_ctx(&mut rd, ()).expect("deku impl reads");
        let via_binrw =
            EntityBlob::read_le(&mut std::io::Cursor::new(bytes)).expect("binrw impl reads");
        assert_eq!(
            (&via_deku, &via_binrw),
            (r, r),
            "records read via deku / binrw differ"
        );
        assert_eq!(&deku_bytes(r), bytes, "deku impl bytes differ");
        assert_eq!(&binrw_bytes(r), bytes, "binrw impl bytes differ");
    }
    let mut g = c.benchmark_group("deku_delta");
    g.throughput(Throughput::Elements(dk.len() as u64));
    g.bench_function("encode_deku", |b| {
        b.iter(|| {
            let mut n = 0;
            for d in &dk {
                n += black_box(d.to_bytes().expect("deku")).len();
            }
            n
        })
    });
    g.bench_function("encode_generated", |b| {
        let mut out = statepack_runtime::io::ByteWriter::with_capacity(64 * 128);
        b.iter(|| {
            out = statepack_runtime::io::ByteWriter::with_capacity(64 * 128);
            for r in &recs {
                r.write_to(&mut out).expect("write");
            }
            black_box(out.len())
        })
    });
    g.bench_function("encode_hand_written", |b| {
        let mut w = BitWriter::with_capacity(64 * 128);
        b.iter(|| {
            w.clear();
            for r in &recs {
                handcoded::write_blob(&mut w, r);
            }
            black_box(w.bit_len())
        })
    });
    g.bench_function("decode_deku", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for blob in &blobs {
                let (_, d) = dk::Delta::from_bytes((blob, 0)).expect("deku");
                n += black_box(d).pos_x;
            }
            n
        })
    });
    g.bench_function("decode_generated", |b| {
        b.iter(|| black_box(ws::decode_stream(&stream).expect("decode")).len())
    });
    g.bench_function("decode_hand_written", |b| {
        b.iter(|| black_box(handcoded::read_stream(&stream).expect("decode")).len())
    });
    g.bench_function("decode_generated_via_deku", |b| {
        b.iter(|| {
            let mut n = 0i32;
            for rec in &with_index {
                let mut c = std::io::Cursor::new(rec.as_slice());
                let mut r = deku::reader::Reader::new(&mut c);
                let d = EntityBlob::from_reader_with_ctx(&mut r, ()).expect("deku");
                n += black_box(d).pos_x;
            }
            n
        })
    });
    g.bench_function("decode_generated_via_binrw", |b| {
        b.iter(|| {
            let mut n = 0i32;
            for rec in &with_index {
                let d =
                    EntityBlob::read_le(&mut std::io::Cursor::new(rec.as_slice())).expect("binrw");
                n += black_box(d).pos_x;
            }
            n
        })
    });
    g.bench_function("encode_generated_via_deku", |b| {
        b.iter(|| {
            let mut n = 0;
            for r in &recs {
                n += black_box(deku_bytes(r)).len();
            }
            n
        })
    });
    g.bench_function("encode_generated_via_binrw", |b| {
        b.iter(|| {
            let mut n = 0;
            for r in &recs {
                n += black_box(binrw_bytes(r)).len();
            }
            n
        })
    });
    g.finish();
}

/// One record through its `DekuWriter` impl into a new buffer (as `to_bytes` does).
fn deku_bytes(r: &statepack::generated::world_snapshot::EntityBlob) -> Vec<u8> {
    use deku::DekuWriter;
    let mut out = std::io::Cursor::new(Vec::with_capacity(32));
    let mut w = deku::writer::Writer::new(&mut out);
    r.to_writer(&mut w, ()).expect("deku");
    w.finalize().expect("deku");
    out.into_inner()
}

/// One record through its `BinWrite` impl into a new buffer.
fn binrw_bytes(r: &statepack::generated::world_snapshot::EntityBlob) -> Vec<u8> {
    use binrw::BinWrite;
    let mut out = std::io::Cursor::new(Vec::with_capacity(32));
    r.write_le(&mut out).expect("binrw");
    out.into_inner()
}

fn states() -> Vec<EntityState> {
    (0..128).map(|i| sim::bot_state(i, 2.0, true, 1)).collect()
}

fn check(states: &[EntityState]) {
    for s in states {
        let origin = nq::origin_for_pos(s.position_m);
        for kind in [BlobKind::FULL, BlobKind::DELTA, BlobKind::FULL.own()] {
            let gen = ws::encode_blob(s, origin, kind);
            let mut w = BitWriter::new();
            handcoded::write_blob(&mut w, &ws::blob_of(s, origin, kind));
            assert_eq!(
                gen,
                w.into_bytes(),
                "hand-written and generated blobs differ"
            );
        }
    }
}

fn bench_encode(c: &mut Criterion) {
    let states = states();
    check(&states);
    for (name, kind) in [
        ("encode_full", BlobKind::FULL),
        ("encode_delta", BlobKind::DELTA),
    ] {
        let mut g = c.benchmark_group(name);
        g.throughput(Throughput::Elements(states.len() as u64));
        let origins: Vec<_> = states
            .iter()
            .map(|s| nq::origin_for_pos(s.position_m))
            .collect();
        g.bench_function("generated", |b| {
            let mut out = Vec::with_capacity(64 * 128);
            b.iter(|| {
                out.clear();
                for (s, o) in states.iter().zip(&origins) {
                    ws::encode_blob_into(s, *o, kind, &mut out);
                }
                black_box(out.len())
            })
        });
        g.bench_function("baseline_hand_written", |b| {
            let mut w = BitWriter::with_capacity(64 * 128);
            b.iter(|| {
                w.clear();
                for (s, o) in states.iter().zip(&origins) {
                    handcoded::write_blob(&mut w, &ws::blob_of(s, *o, kind));
                }
                black_box(w.bit_len())
            })
        });
        g.bench_function("quantize_only", |b| {
            b.iter(|| {
                let mut n = 0u64;
                for (s, o) in states.iter().zip(&origins) {
                    n += black_box(record_of(s, *o, kind, 0)).blob.pos_x as u64;
                }
                n
            })
        });
        g.finish();
    }
}

fn bench_quantize(c: &mut Criterion) {
    let states = states();
    let origins: Vec<_> = states
        .iter()
        .map(|s| nq::origin_for_pos(s.position_m))
        .collect();
    let mut g = c.benchmark_group("quantize_parts");
    g.throughput(Throughput::Elements(states.len() as u64));
    g.bench_function("position", |b| {
        b.iter(|| {
            let mut n = 0i64;
            for (s, o) in states.iter().zip(&origins) {
                n += i64::from(black_box(nq::quantize_offset(s.position_m, *o))[0]);
            }
            n
        })
    });
    g.bench_function("rotation", |b| {
        b.iter(|| {
            let mut n = 0i64;
            for s in &states {
                n += i64::from(black_box(nq::smallest_three(s.orientation)).1[0]);
            }
            n
        })
    });
    g.bench_function("velocity", |b| {
        b.iter(|| {
            let mut n = 0i64;
            for s in &states {
                n += i64::from(black_box(nq::quantize_velocity(s.velocity_mps))[0]);
            }
            n
        })
    });
    g.bench_function("record_of_full", |b| {
        b.iter(|| {
            let mut n = 0u64;
            for (s, o) in states.iter().zip(&origins) {
                n += black_box(record_of(s, *o, BlobKind::FULL, 0)).blob.pos_x as u64;
            }
            n
        })
    });
    g.finish();
}

fn bench_stitch(c: &mut Criterion) {
    let states = states();
    let enc: Vec<EncodedEntity> = states.iter().map(EncodedEntity::new).collect();
    let blobs: Vec<&[u8]> = enc
        .iter()
        .enumerate()
        .map(|(i, e)| {
            e.blob(if i == 0 {
                BlobKind::DELTA.own()
            } else {
                BlobKind::DELTA
            })
        })
        .collect();
    let total: usize = blobs.iter().map(|b| b.len()).sum();
    let pairs: Vec<(glam::DVec3, &[u8])> = enc
        .iter()
        .zip(&blobs)
        .map(|(e, b)| (e.origin, *b))
        .collect();
    let despawns = [3u32, 700, 70_000, 1 << 30];
    // A budget every record fits in, so each push runs the check and the bytes stay those
    // of the other variants.
    let budget = 64 * 1024;
    let mut w = SnapshotWriter::new();
    let reference = ws::stitch(1, &pairs, &despawns).expect("stitch");
    w.set_entities(&enc);
    for (i, blob) in blobs.iter().enumerate() {
        assert!(w
            .push_id_within(w.entity_origin_id(i), blob, budget)
            .expect("stitch"));
    }
    for d in despawns {
        w.push_despawn(d);
    }
    assert_eq!(
        w.message(1, false).expect("message"),
        &reference[..],
        "stitching by origin id and by origin differ"
    );
    let zstd_len = w.message(1, true).expect("message").len();
    println!(
        "stitch: {} records, {total} blob bytes, raw message {} B, zstd message {zstd_len} B",
        blobs.len(),
        reference.len()
    );
    let mut g = c.benchmark_group("stitch");
    g.throughput(Throughput::Bytes(total as u64));
    // The tick-wide table is set once per tick (the assembler's `set_entities` then only
    // checks it, peer after peer); each snapshot starts from `clear`.
    w.set_entities(&enc);
    g.bench_function("set_entities_check", |b| {
        b.iter(|| {
            w.set_entities(black_box(&enc));
            black_box(w.entity_origin_id(0))
        })
    });
    g.bench_function("writer_by_origin_id", |b| {
        b.iter(|| {
            w.clear();
            for (i, blob) in blobs.iter().enumerate() {
                w.push_id(w.entity_origin_id(i), blob).expect("stitch");
            }
            black_box(w.message(1, false).expect("message").len())
        })
    });
    g.bench_function("writer_budget_despawns", |b| {
        b.iter(|| {
            w.clear();
            for (i, blob) in blobs.iter().enumerate() {
                w.push_id_within(w.entity_origin_id(i), blob, budget)
                    .expect("stitch");
            }
            for d in despawns {
                w.push_despawn(d);
            }
            black_box(w.message(1, false).expect("message").len())
        })
    });
    g.bench_function("writer_by_origin", |b| {
        b.iter(|| {
            w.clear();
            for (o, blob) in &pairs {
                w.push_record(*o, blob).expect("stitch");
            }
            black_box(w.message(1, false).expect("message").len())
        })
    });
    g.bench_function("writer_budget_despawns_zstd", |b| {
        b.iter(|| {
            w.clear();
            for (i, blob) in blobs.iter().enumerate() {
                w.push_id_within(w.entity_origin_id(i), blob, budget)
                    .expect("stitch");
            }
            for d in despawns {
                w.push_despawn(d);
            }
            black_box(w.message(1, true).expect("message").len())
        })
    });
    let mut buf = Vec::with_capacity(total + 1024);
    g.bench_function("baseline_memcpy", |b| {
        b.iter(|| {
            buf.clear();
            for blob in &blobs {
                buf.extend_from_slice(blob);
            }
            black_box(buf.len())
        })
    });
    g.finish();
}

fn bench_decode(c: &mut Criterion) {
    let states = states();
    let mut bw = BitWriter::new();
    let mut recs = Vec::new();
    for (i, s) in states.iter().enumerate() {
        let kind = if i == 0 {
            BlobKind::FULL.own()
        } else {
            BlobKind::DELTA
        };
        let r = record_of(s, nq::origin_for_pos(s.position_m), kind, (i % 3) as u32);
        handcoded::write_record(&mut bw, &r);
        recs.push(r);
    }
    let stream = bw.into_bytes();
    assert_eq!(ws::decode_stream(&stream).expect("generated decode"), recs);
    assert_eq!(handcoded::read_stream(&stream).expect("hand decode"), recs);
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Elements(recs.len() as u64));
    g.bench_function("generated", |b| {
        b.iter(|| black_box(ws::decode_stream(&stream).expect("decode")).len())
    });
    g.bench_function("baseline_hand_written", |b| {
        b.iter(|| black_box(handcoded::read_stream(&stream).expect("decode")).len())
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_encode,
    bench_quantize,
    bench_stitch,
    bench_decode,
    bench_deku
);
criterion_main!(benches);
