//! Speed of the world snapshot codec, each measurement next to its baseline in the same run.
//!
//! Input: 128 flying bots of the swarm model (`formats::world_snapshot::sim::bot_state`), one
//! tick. Groups:
//!
//! - `encode_full` / `encode_delta` (per entity): `generated` quantizes and writes the blob
//!   through the generated writer (`encode_blob`, what the server runs);
//!   `baseline_hand_written` quantizes the same way and writes with the hand-written bit
//!   writer (`formats::world_snapshot::handcoded`); `quantize_only` is the quantization
//!   alone, the part both share.
//! - `stitch` (per peer snapshot of 128 records): `snapshot_writer` stitches the pre-encoded
//!   blobs (origin-index varint, copy, origin dedup, header); `baseline_memcpy` copies the
//!   same blob bytes into a preallocated buffer.
//! - `decode` (per record, a 128-record stream): `generated` is the generated reader,
//!   `baseline_hand_written` the hand-written bit reader.
//!
//! Before timing, both encoders' bytes and both decoders' records are compared, so a broken
//! variant stops the run. Figures: `docs/performance.md`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use statepack::formats::world_snapshot::{
    self as ws, handcoded, record_of, sim, BlobKind, EncodedEntity, EntityState, SnapshotWriter,
};
use statepack_runtime::bits::BitWriter;
use statepack_runtime::netquant as nq;

fn states() -> Vec<EntityState> {
    (0..128).map(|i| sim::bot_state(i, 2.0, true, 1)).collect()
}

fn check(states: &[EntityState]) {
    for s in states {
        let origin = nq::origin_for_pos(s.position_m);
        for kind in [BlobKind::FULL, BlobKind::DELTA, BlobKind::FULL.own()] {
            let gen = ws::encode_blob(s, origin, kind);
            let mut w = BitWriter::new();
            handcoded::write_blob(&mut w, &record_of(s, origin, kind, 0));
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
                    handcoded::write_blob(&mut w, &record_of(s, *o, kind, 0));
                }
                black_box(w.bit_len())
            })
        });
        g.bench_function("quantize_only", |b| {
            b.iter(|| {
                let mut n = 0u64;
                for (s, o) in states.iter().zip(&origins) {
                    n += black_box(record_of(s, *o, kind, 0)).pos_x as u64;
                }
                n
            })
        });
        g.finish();
    }
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
    let mut g = c.benchmark_group("stitch");
    g.throughput(Throughput::Bytes(total as u64));
    let mut w = SnapshotWriter::new();
    g.bench_function("snapshot_writer", |b| {
        b.iter(|| {
            w.clear();
            for (e, blob) in enc.iter().zip(&blobs) {
                w.push_record(e.origin, blob).expect("stitch");
            }
            black_box(w.finish(1, false).expect("finish").len())
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

criterion_group!(benches, bench_encode, bench_stitch, bench_decode);
criterion_main!(benches);
