//! Decoding one 31-bone pose of the CMU walk (`motion/cmu-131-01-walk.bvh` at 60 fps, every
//! 2nd frame) from statepack clips, against the baseline of lerping two raw float32 frames
//! (10 floats per bone, the layout the study calls raw) in the same run.
//!
//! `cargo bench --bench anim_clip`. Without the fixture the bench prints that it skipped.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use glam::{Quat, Vec3};
use statepack::formats::anim_clip;
use statepack_runtime::anim::{Decoder, Interp, Metric, Pose32};

fn bench(c: &mut Criterion) {
    let Ok(path) = statepack_runtime::fixtures::fixture_path("motion/cmu-131-01-walk.bvh") else {
        eprintln!("skipped: fixture motion/cmu-131-01-walk.bvh not found");
        return;
    };
    let mut clip = statepack_runtime::motion::load_motion_file(&path).expect("read the walk");
    clip.frames = clip.frames.iter().step_by(2).cloned().collect();
    clip.frame_time_s *= 2.0;
    let nb = clip.skeleton.len();
    let n = clip.frame_count();
    let fps = clip.fps() as f32;
    // Raw float32: per frame, per bone translation (3), rotation (4), scale (3).
    let raw: Vec<f32> = clip
        .frames
        .iter()
        .flat_map(|row| {
            row.iter().flat_map(|t| {
                let mut v = Vec::with_capacity(10);
                v.extend(t.translation.to_array().map(|x| x as f32));
                v.extend(t.rotation.to_array().map(|x| x as f32));
                v.extend(t.scale.to_array().map(|x| x as f32));
                v
            })
        })
        .collect();
    let times: Vec<f32> = (0..4096)
        .map(|i| ((i as f32 * 0.7) % (n as f32 - 1.001)) / fps)
        .collect();
    let seq: Vec<f32> = (0..4096)
        .map(|i| (i as f32 * 0.25 % (n as f32 - 1.001)) / fps)
        .collect();
    let blank = Pose32 {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };
    let mut out = vec![blank; nb];
    let mut g = c.benchmark_group("pose_31_bones");
    g.bench_function("raw float32 lerp of two frames", |b| {
        let mut i = 0;
        let mut o = vec![0f32; nb * 10];
        b.iter(|| {
            let x = times[i % times.len()] * fps;
            i += 1;
            let f0 = x as usize;
            let f1 = (f0 + 1).min(n - 1);
            let u = x - f0 as f32;
            let (a, bb) = (
                &raw[f0 * nb * 10..(f0 + 1) * nb * 10],
                &raw[f1 * nb * 10..(f1 + 1) * nb * 10],
            );
            for k in 0..nb * 10 {
                o[k] = a[k] + (bb[k] - a[k]) * u;
            }
            black_box(&o);
        })
    });
    for (label, mm, shell) in [
        ("7.22 mm joint", 7.22, 0.0),
        ("0.17 mm on a 3 cm shell", 0.17, 0.03),
    ] {
        for interp in [Interp::Linear, Interp::Cubic] {
            let cl = anim_clip::compress(
                &clip,
                Metric {
                    tolerance_m: mm / 1000.0,
                    shell_m: shell,
                },
                Some(interp),
            )
            .expect("compress");
            let dec = Decoder::new(&anim_clip::read(&cl.bytes).expect("read"));
            g.bench_function(
                format!(
                    "statepack {label}, {interp:?}, {} B, random access",
                    cl.bytes.len()
                ),
                |b| {
                    let mut i = 0;
                    b.iter(|| {
                        dec.sample(times[i % times.len()], &mut out);
                        i += 1;
                        black_box(&out);
                    })
                },
            );
            g.bench_function(
                format!(
                    "statepack {label}, {interp:?}, {} B, cursor",
                    cl.bytes.len()
                ),
                |b| {
                    let mut i = 0;
                    let mut cur = dec.cursor();
                    b.iter(|| {
                        dec.sample_cursor(seq[i % seq.len()], &mut cur, &mut out);
                        i += 1;
                        black_box(&out);
                    })
                },
            );
        }
    }
    g.finish();
    let cl = anim_clip::compress(
        &clip,
        Metric {
            tolerance_m: 0.00722,
            shell_m: 0.0,
        },
        None,
    )
    .expect("compress");
    c.bench_function("anim_clip read + unpack (whole clip)", |b| {
        b.iter(|| Decoder::new(&anim_clip::read(black_box(&cl.bytes)).expect("read")))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
