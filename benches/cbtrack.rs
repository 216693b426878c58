//! CBTK v1 speed: window decode (inflate + every column + the semantic window, and the
//! inflated chunk checked as `Track::window` keeps it), frame sampling per unit (from the
//! decoded window, and one unit at a time from the inflated chunk), and writer throughput in samples per second.
//!
//! The input is built in code: the study walk as a crowd of 16 characters over 1 800 frames
//! (two windows of 900), every joint a posed piece, with projectiles, terrain and team
//! numbers. Baselines in the same run: a plain copy of the same bytes (the compressed main
//! chunk for the decode group, the decompressed chunk for the column group), so the figures
//! read as multiples of a memcpy. See `docs/performance.md`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use statepack::formats::cbtrack::{MainWindow, Player, Track};
use statepack::sim::cbtrack_match::MatchSpec;
use statepack_codecs::motion::walk::study_walk_clip;
use statepack_runtime::cbtk_columns::inflate;

fn spec() -> MatchSpec {
    let mut s = MatchSpec::crowd(study_walk_clip(), 16, 1800);
    s.features = 20;
    s
}

fn track() -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    spec()
        .write(&mut out, |_, _| {})
        .expect("the bench match writes");
    out.into_inner()
}

fn bench(c: &mut Criterion) {
    let bytes = track();
    let t = Track::open(&bytes).expect("opens");
    let h = t.header();
    let e = t.raw.index[1].clone();
    let z = &bytes[e.main_block as usize * 64..][..e.main_len as usize];
    let body = t.main_bytes(1).expect("inflates");
    let (start, end) = h.window_span(1);
    let w = MainWindow::from_chunk(&body, 1, start, end).expect("decodes");
    let chunk = t.window(1).unwrap();
    assert_eq!(w, chunk.decode().unwrap());
    let units = w.units.len() as u64;

    let mut g = c.benchmark_group("cbtrack_window_decode");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.bench_function("baseline_copy_decompressed_bytes", |b| {
        b.iter(|| black_box(black_box(&body[..]).to_vec()))
    });
    g.bench_function("columns_and_window_from_decompressed", |b| {
        b.iter(|| black_box(MainWindow::from_chunk(black_box(&body), 1, start, end).unwrap()))
    });
    g.bench_function("inflate_only", |b| {
        b.iter(|| black_box(inflate(black_box(z), 16_777_215).unwrap()))
    });
    g.bench_function("inflate_columns_and_window", |b| {
        b.iter(|| black_box(t.window(1).unwrap().decode().unwrap()))
    });
    g.bench_function("inflate_and_check_window_chunk", |b| {
        b.iter(|| black_box(t.window(1).unwrap()))
    });
    g.finish();

    let mut g = c.benchmark_group("cbtrack_sample_frame");
    g.throughput(Throughput::Elements(units));
    let mid = (start + end) as f64 / 2.0 + 0.5;
    g.bench_function("baseline_copy_unit_keys", |b| {
        b.iter(|| {
            black_box(
                black_box(&w.units)
                    .iter()
                    .map(|u| u.transforms.clone())
                    .collect::<Vec<_>>(),
            )
        })
    });
    g.bench_function("full_state_all_units", |b| {
        b.iter(|| black_box(w.sample(&h, black_box(mid))))
    });
    g.bench_function("full_state_each_unit_from_chunk", |b| {
        b.iter(|| {
            chunk
                .sample_each(&h, black_box(mid), |p| {
                    black_box(p);
                })
                .unwrap()
        })
    });
    let mut player = Player::new(&bytes).expect("opens");
    player.sample(mid).expect("samples");
    g.bench_function("player_sample_each_window_loaded", |b| {
        b.iter(|| {
            player
                .sample_each(black_box(mid), |p| {
                    black_box(p);
                })
                .unwrap()
        })
    });
    g.bench_function("transform_only_all_units", |b| {
        b.iter(|| {
            for u in &w.units {
                black_box(u.transform_at(black_box(mid - start as f64), h.rotation_bits));
            }
        })
    });
    g.finish();

    let s = spec();
    let samples = {
        let mut out = std::io::Cursor::new(Vec::new());
        let (_, st, _) = s.write(&mut out, |_, _| {}).unwrap();
        st.unit_samples + st.piece_samples + st.projectile_samples + st.team_samples
    };
    let mut g = c.benchmark_group("cbtrack_writer");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    g.throughput(Throughput::Elements(samples));
    g.bench_function("thin_check_write_samples", |b| {
        b.iter(|| {
            let mut out = std::io::Cursor::new(Vec::with_capacity(1 << 20));
            black_box(s.write(&mut out, |_, _| {}).unwrap());
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
