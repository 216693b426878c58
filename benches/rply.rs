//! RPLY v3: player throughput, seek latency and recorder cost, each beside a baseline.
//!
//! The input is the 10-minute crowd of `statepack rply-crowd` (20 walkers × 9 000 ticks at
//! 15 Hz, driven by the CMU walk fixture; the study walk generated in code when the fixture
//! is missing). Groups:
//!
//! - `rply_play`: `player_every_tick` opens the file and plays every tick, reconstructing
//!   the state (ops/s and bytes/s); baselines in the same group: `raw_decode_generated`
//!   (the generated raw layer reading every op into a `Vec<Op>`, no semantics) and
//!   `memcpy` (copying the bytes).
//! - `rply_seek`: `warm_seek_random_tick` (a player whose keyframe states are built, seeking
//!   to a cycle of pseudo-random ticks), `cold_open_and_seek` (open, then one seek, which
//!   builds the keyframe states up to the target) and the baseline `play_from_start_to_tick`
//!   (open and play every tick up to the same targets, what a player without an index does).
//! - `rply_record`: recording 20 entities for 300 ticks (6 000 entity-ticks, thresholds and
//!   deltas as the defaults); baseline `all_full_hand_written`: writing the same transforms
//!   as full XFORMs with a plain byte writer (no deltas, no checks).
//!
//! Every variant's result is checked before it is timed. Figures: `docs/performance.md`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use glam::{DQuat, DVec3};
use statepack::formats::rply::{Player, Recorder, RecorderOptions, RplyV3};
use statepack::sim::rply_crowd::{record_crowd, CrowdOptions, RootTrack};
use statepack_codecs::motion::Clip;

fn clip() -> Clip {
    match statepack_fixtures::fixture_path("motion/cmu-131-01-walk.bvh") {
        Ok(p) => statepack_codecs::motion::load_motion_file(&p).expect("read the walk"),
        Err(_) => statepack_codecs::motion::walk::study_walk_clip(),
    }
}

fn ticks(n: usize, max: u32) -> Vec<u32> {
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % (u64::from(max) + 1)) as u32
        })
        .collect()
}

fn play_all(bytes: &[u8]) -> u64 {
    let mut p = Player::open(bytes).expect("open");
    while p.advance().expect("play") {}
    p.ops_applied()
}

fn bench_rply(c: &mut Criterion) {
    let clip = clip();
    let crowd = record_crowd(&clip, &CrowdOptions::default()).expect("record");
    let bytes = crowd.bytes;
    let ops = play_all(&bytes);
    let raw = RplyV3::decode(&bytes).expect("raw decode");
    assert_eq!(
        raw.ops.ops.len() as u64,
        ops,
        "raw decode and player read the same ops"
    );
    assert_eq!(raw.encode().expect("encode"), bytes);
    let last = raw.head.tick_count;

    let mut g = c.benchmark_group("rply_play");
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("player_every_tick", |b| {
        b.iter(|| black_box(play_all(black_box(&bytes))))
    });
    g.bench_function("raw_decode_generated", |b| {
        b.iter(|| black_box(RplyV3::decode(black_box(&bytes)).expect("decode")))
    });
    g.bench_function("memcpy", |b| {
        b.iter(|| black_box(black_box(&bytes).to_vec()))
    });
    g.throughput(Throughput::Elements(ops));
    g.bench_function("player_every_tick_ops", |b| {
        b.iter(|| black_box(play_all(black_box(&bytes))))
    });
    g.finish();

    let targets = ticks(64, last);
    // Check: every seek equals playing there.
    {
        let mut warm = Player::open(&bytes).expect("open");
        warm.seek(last).expect("seek");
        for &t in targets.iter().take(8) {
            warm.seek(t).expect("seek");
            let mut play = Player::open(&bytes).expect("open");
            for _ in 0..=t {
                play.advance().expect("play");
            }
            assert_eq!(warm.state(), play.state(), "seek to {t}");
        }
    }
    let mut g = c.benchmark_group("rply_seek");
    let mut warm = Player::open(&bytes).expect("open");
    warm.seek(last).expect("seek");
    let mut i = 0;
    g.bench_function("warm_seek_random_tick", |b| {
        b.iter(|| {
            i = (i + 1) % targets.len();
            warm.seek(black_box(targets[i])).expect("seek");
            black_box(warm.state().entities.len())
        })
    });
    let mut j = 0;
    g.bench_function("cold_open_and_seek", |b| {
        b.iter(|| {
            j = (j + 1) % targets.len();
            let mut p = Player::open(black_box(&bytes)).expect("open");
            p.seek(targets[j]).expect("seek");
            black_box(p.state().entities.len())
        })
    });
    let mut k = 0;
    g.bench_function("play_from_start_to_tick", |b| {
        b.iter(|| {
            k = (k + 1) % targets.len();
            let mut p = Player::open(black_box(&bytes)).expect("open");
            for _ in 0..=targets[k] {
                p.advance().expect("play");
            }
            black_box(p.state().entities.len())
        })
    });
    g.finish();

    // Recorder: 20 entities x 300 ticks.
    let track = RootTrack::new(&clip);
    let n_ent = 20usize;
    let n_ticks = 300u32;
    let poses: Vec<Vec<(DVec3, DQuat)>> = (1..=n_ticks)
        .map(|t| {
            (0..n_ent)
                .map(|e| {
                    let (p, q) = track.at(f64::from(t) / 15.0 + e as f64 * 0.4, 1.0 / 0.28);
                    (p + DVec3::new(e as f64 * 12.0, 0.0, 0.0), q)
                })
                .collect()
        })
        .collect();
    let record = |poses: &[Vec<(DVec3, DQuat)>]| {
        let mut rec = Recorder::new(RecorderOptions::default());
        let ids: Vec<u16> = (0..n_ent)
            .map(|e| rec.spawn(&format!("char:{e}"), None).expect("spawn"))
            .collect();
        for row in poses {
            rec.begin_tick().expect("tick");
            for (id, &(p, q)) in ids.iter().zip(row) {
                rec.transform(*id, p, q).expect("transform");
            }
        }
        rec.finish().expect("finish")
    };
    let all_full = |poses: &[Vec<(DVec3, DQuat)>]| {
        let mut out = Vec::with_capacity(poses.len() * n_ent * 23);
        for row in poses {
            out.push(10u8);
            for (e, &(p, q)) in row.iter().enumerate() {
                out.push(3);
                out.extend_from_slice(&(e as u16 + 1).to_le_bytes());
                out.push(3);
                for v in [p.x, p.y, p.z] {
                    out.extend_from_slice(&(v as f32).to_le_bytes());
                }
                for c in statepack_codecs::rply_xform::quantize_axis_angle(q) {
                    out.extend_from_slice(&c.to_le_bytes());
                }
            }
        }
        out
    };
    statepack::formats::rply::verify(&record(&poses)).expect("recorded file verifies");
    let mut g = c.benchmark_group("rply_record");
    g.throughput(Throughput::Elements((n_ent as u64) * u64::from(n_ticks)));
    g.bench_function("recorder_entity_ticks", |b| {
        b.iter_batched(
            || (),
            |()| black_box(record(black_box(&poses))),
            BatchSize::SmallInput,
        )
    });
    g.bench_function("all_full_hand_written", |b| {
        b.iter(|| black_box(all_full(black_box(&poses))))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bench_rply
}
criterion_main!(benches);
