//! Decoding one full local pose from statepack clips, against the baseline of lerping two raw
//! float32 frames of the same clip (10 floats per bone, the layout the study calls raw) in the
//! same run.
//!
//! Clips: `motion/cmu-104-30.acl.sjson` (44 bones, 24 fps, 273 frames) and the CMU walk
//! `motion/cmu-131-01-walk.bvh` at 60 fps (every 2nd frame; 31 bones, 498 frames), each at the
//! two settings of the comparison with the Animation Compression Library: 0.1 mm on a 3 cm
//! shell and 7.24 mm on joints (the encoder picks the reconstruction). Random access takes
//! `(i × 0.7) mod (frames − 1)` frames, sequential playback advances a quarter frame per call.
//! Each clip's bytes are printed before its group runs.
//!
//! `cargo bench --bench anim_clip`. Without the fixtures the bench prints that it skipped.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use glam::{Quat, Vec3};
use statepack::formats::anim_clip;
use statepack_codecs::anim::{Decoder, Metric, Pose32};
use statepack_codecs::motion::Clip;

fn load(rel: &str) -> Option<Clip> {
    let Ok(path) = statepack_fixtures::fixture_path(rel) else {
        eprintln!("skipped: fixture {rel} not found");
        return None;
    };
    Some(statepack_codecs::motion::load_motion_file(&path).expect("read the clip"))
}

fn bench_clip(c: &mut Criterion, name: &str, clip: &Clip) {
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
    let settings = [
        (
            "0.1 mm on a 3 cm shell",
            Metric {
                tolerance_m: 0.0001,
                shell_m: 0.03,
            },
        ),
        (
            "7.24 mm on joints",
            Metric {
                tolerance_m: 0.00724,
                shell_m: 0.0,
            },
        ),
    ];
    let decoders: Vec<(String, Decoder, Vec<u8>)> = settings
        .iter()
        .map(|(label, metric)| {
            let cl = anim_clip::compress(clip, *metric, None).expect("compress");
            eprintln!(
                "{name}, {label}: {} bytes, {:?} keys, worst error {:.4} mm (raw float32 {} bytes)",
                cl.bytes.len(),
                cl.report.interp,
                cl.verified_error_m * 1000.0,
                raw.len() * 4
            );
            let dec = Decoder::new(&anim_clip::read(&cl.bytes).expect("read"));
            ((*label).to_owned(), dec, cl.bytes)
        })
        .collect();
    let mut g = c.benchmark_group(format!("pose {name}"));
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
    for (label, dec, bytes) in &decoders {
        g.bench_function(format!("{label}, {} B, random access", bytes.len()), |b| {
            let mut i = 0;
            b.iter(|| {
                dec.sample(times[i % times.len()], &mut out);
                i += 1;
                black_box(&out);
            })
        });
        g.bench_function(format!("{label}, {} B, cursor", bytes.len()), |b| {
            let mut i = 0;
            let mut cur = dec.cursor();
            b.iter(|| {
                dec.sample_cursor(seq[i % seq.len()], &mut cur, &mut out);
                i += 1;
                black_box(&out);
            })
        });
    }
    g.finish();
    let bytes = &decoders[1].2;
    c.bench_function(
        &format!("{name}: read + unpack the 7.24 mm clip ({} B)", bytes.len()),
        |b| b.iter(|| Decoder::new(&anim_clip::read(black_box(bytes)).expect("read"))),
    );
}

fn bench(c: &mut Criterion) {
    if let Some(clip) = load("motion/cmu-104-30.acl.sjson") {
        bench_clip(c, "cmu-104-30 (44 bones)", &clip);
    }
    if let Some(mut clip) = load("motion/cmu-131-01-walk.bvh") {
        clip.frames = clip.frames.iter().step_by(2).cloned().collect();
        clip.frame_time_s *= 2.0;
        bench_clip(c, "cmu-131-01-walk 60 fps (31 bones)", &clip);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
