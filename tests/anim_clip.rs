//! statepack animation clips: the tolerance holds after decoding the bytes (both metrics),
//! the container round-trips the encoder's model exactly, sampling at any time agrees with
//! whole-clip decompression, cursors agree with binary search, and bad files are refused with
//! the track's path.

use statepack::formats::anim_clip::{self, compress, read, AnimClip};
use statepack_codecs::anim::{world_error, Decoder, Interp, Metric, Pose32};
use statepack_codecs::motion::{walk::study_walk_clip, Clip, Skeleton};

fn walk(frames: usize) -> Clip {
    let mut c = study_walk_clip();
    c.frames.truncate(frames);
    c
}

fn cmu_cut() -> Option<Clip> {
    let p = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh")?;
    let c = statepack_codecs::motion::load_motion_file(&p).expect("read");
    let sk = Skeleton::new(c.skeleton.bones()[..12].to_vec()).expect("prefix");
    let rows = c
        .frames
        .iter()
        .take(120)
        .map(|r| r[..12].to_vec())
        .collect();
    Some(Clip::new("cut", sk, c.frame_time_s, rows).expect("cut"))
}

#[test]
fn tolerance_holds_on_the_decoded_bytes_for_both_metrics() {
    let mut clips = vec![walk(90)];
    clips.extend(cmu_cut());
    for clip in &clips {
        for metric in [
            Metric {
                tolerance_m: 0.001,
                shell_m: 0.0,
            },
            Metric {
                tolerance_m: 0.005,
                shell_m: 0.0,
            },
            Metric {
                tolerance_m: 0.0005,
                shell_m: 0.03,
            },
        ] {
            for interp in [None, Some(Interp::Linear), Some(Interp::Cubic)] {
                let c = compress(clip, metric, interp).expect("compress");
                let back = read(&c.bytes).expect("read");
                let err = world_error(clip, &Decoder::new(&back).decompress(), metric.shell_m);
                assert!(
                    err <= metric.tolerance_m,
                    "{}: {err} > {metric:?}",
                    clip.name
                );
                assert_eq!(err, c.verified_error_m);
                // The writer's model comes back exactly.
                assert_eq!(anim_clip::encode(&back).expect("re-encode"), c.bytes);
                // Far fewer bytes than raw float32 (10 per bone per frame).
                let raw = clip.frame_count() * clip.skeleton.len() * 40;
                assert!(c.bytes.len() * 4 < raw, "{} vs raw {raw}", c.bytes.len());
            }
        }
    }
}

#[test]
fn sampling_matches_decompression_and_cursors_match_search() {
    let clip = walk(90);
    let c = compress(
        &clip,
        Metric {
            tolerance_m: 0.002,
            shell_m: 0.0,
        },
        Some(Interp::Cubic),
    )
    .unwrap();
    let dec = Decoder::new(&read(&c.bytes).unwrap());
    let whole = dec.decompress();
    let nb = dec.num_bones();
    let blank = Pose32 {
        translation: glam::Vec3::ZERO,
        rotation: glam::Quat::IDENTITY,
        scale: glam::Vec3::ONE,
    };
    let (mut a, mut b) = (vec![blank; nb], vec![blank; nb]);
    let fps = clip.fps() as f32;
    for f in [0usize, 1, 17, 45, 89] {
        dec.sample(f as f32 / fps, &mut a);
        for (p, l) in a.iter().zip(&whole[f]) {
            assert_eq!(p.to_local(), *l, "frame {f}");
        }
    }
    let mut cur = dec.cursor();
    let times: Vec<f32> = (0..400)
        .map(|i| (i as f32 * 0.0137) % 1.6)
        .chain([5.0, -1.0, f32::NAN])
        .collect();
    for t in times {
        dec.sample(t, &mut a);
        dec.sample_cursor(t, &mut cur, &mut b);
        assert_eq!(a, b, "t = {t}");
    }
}

#[test]
fn bad_files_name_the_track() {
    let clip = walk(30);
    let c = compress(
        &clip,
        Metric {
            tolerance_m: 0.001,
            shell_m: 0.0,
        },
        Some(Interp::Linear),
    )
    .unwrap();
    let mut raw = AnimClip::decode(&c.bytes).unwrap();
    // Find an animated track and break it in ways the layout allows.
    let (b, _) = raw
        .bones
        .iter()
        .enumerate()
        .find(|(_, t)| {
            matches!(
                t.rotation.body,
                statepack::generated::anim_clip::TrackBody::AnimatedTrack(_)
            )
        })
        .expect("an animated rotation");
    let mut bad = raw.clone();
    if let statepack::generated::anim_clip::TrackBody::AnimatedTrack(a) =
        &mut bad.bones[b].rotation.body
    {
        a.num_keys = 1;
    }
    let e = anim_clip::from_raw(&bad).unwrap_err();
    assert!(
        e.to_string().contains(&format!("bones[{b}].rotation")),
        "{e}"
    );
    assert!(e.to_string().contains("keys"), "{e}");
    // A fixed-point constant wider than float32 holds exactly is refused.
    let (cb, _) = raw
        .bones
        .iter()
        .enumerate()
        .find(|(_, t)| {
            matches!(
                t.translation.body,
                statepack::generated::anim_clip::TrackBody::FixedPointTrack(_)
            )
        })
        .expect("a fixed-point translation");
    let mut bad = raw.clone();
    if let statepack::generated::anim_clip::TrackBody::FixedPointTrack(c) =
        &mut bad.bones[cb].translation.body
    {
        c.width = 26;
    }
    let e = anim_clip::from_raw(&bad).unwrap_err().to_string();
    assert!(
        e.contains(&format!("bones[{cb}].translation")) && e.contains("width"),
        "{e}"
    );
    // The offset is the descriptor's: after the 14-byte header and every earlier track.
    let at = 14
        + raw.bones[..cb]
            .iter()
            .map(|t| t.rotation.encoded_len() + t.translation.encoded_len() + t.scale.encoded_len())
            .sum::<usize>()
        + raw.bones[cb].rotation.encoded_len();
    assert!(e.contains(&format!("(byte offset {at})")), "{e}");
    assert_eq!(
        &c.bytes[at..at + 1],
        &[3],
        "the kind byte of a fixed-point constant"
    );
    raw.bits.truncate(raw.bits.len() / 2);
    let e = anim_clip::from_raw(&raw).unwrap_err();
    assert!(e.to_string().contains("bit stream"), "{e}");
    raw.sample_rate = f32::NAN;
    assert!(anim_clip::from_raw(&raw)
        .unwrap_err()
        .to_string()
        .contains("sample_rate"));
    // Trailing whole bytes in the stream are refused.
    let mut extra = AnimClip::decode(&c.bytes).unwrap();
    extra.bits.push(0);
    assert!(anim_clip::from_raw(&extra)
        .unwrap_err()
        .to_string()
        .contains("left over"));
}

#[test]
fn version_1_clips_are_refused_naming_their_version() {
    let c = compress(
        &walk(20),
        Metric {
            tolerance_m: 0.001,
            shell_m: 0.0,
        },
        None,
    )
    .unwrap();
    assert_eq!(c.bytes[4], anim_clip::VERSION);
    assert_eq!(anim_clip::VERSION, 2);
    let mut old = c.bytes.clone();
    old[4] = 1;
    let e = read(&old).unwrap_err().to_string();
    assert!(e.contains("version") && e.contains("version 1"), "{e}");
    assert!(e.contains("offset 4") || e.contains("byte 4"), "{e}");
    old[4] = 7;
    let e = read(&old).unwrap_err().to_string();
    assert!(e.contains("version 7"), "{e}");
}

#[test]
fn constants_are_stored_as_fixed_point_when_that_is_exact_and_smaller() {
    use statepack::generated::anim_clip::TrackBody;
    use statepack_codecs::anim::{constant_layout, BoneTracks, EncodedClip, Track};
    // 0.25, −0.5, 3 are multiples of 2^-2: codes 2, 3, 24 (zigzag of 1, −2, 12), 5 bits.
    assert_eq!(
        constant_layout(&[0.25, -0.5, 3.0]),
        Some((2, 5, vec![2, 3, 24]))
    );
    // 0.1f32 is 13421773 × 2^-27: 25-bit codes still beat float32 for three components.
    assert_eq!(
        constant_layout(&[0.1, 0.0, 0.0]).map(|l| (l.0, l.1)),
        Some((27, 25))
    );
    // −0.0 and values finer than 2^-60 stay float32.
    assert_eq!(constant_layout(&[-0.0, 1.0, 1.0]), None);
    assert_eq!(constant_layout(&[1e-30, 0.0, 0.0]), None);
    let clip = EncodedClip {
        sample_rate: 30.0,
        num_frames: 3,
        interp: Interp::Linear,
        bones: vec![
            BoneTracks {
                rotation: Track::Constant(vec![0.5, 0.0, 0.0]),
                translation: Track::Constant(vec![0.25, -0.5, 3.0]),
                scale: Track::Constant(vec![-0.0, 1.0, 1.0]),
            },
            BoneTracks {
                rotation: Track::Constant(vec![0.0, 0.6, 0.0, 0.8]),
                translation: Track::Default,
                scale: Track::Default,
            },
        ],
    };
    let bytes = anim_clip::encode(&clip).unwrap();
    assert_eq!(read(&bytes).unwrap(), clip);
    let raw = AnimClip::decode(&bytes).unwrap();
    assert!(matches!(
        raw.bones[0].rotation.body,
        TrackBody::FixedPointTrack(_)
    ));
    assert!(matches!(
        raw.bones[0].translation.body,
        TrackBody::FixedPointTrack(_)
    ));
    assert!(matches!(
        raw.bones[0].scale.body,
        TrackBody::ConstantTrack(_)
    ));
    // The decoder derives w of a three-component rotation and renormalises four.
    let dec = Decoder::new(&clip);
    let r = dec.rest_pose();
    assert!((r[0].rotation.w - 0.75f32.sqrt()).abs() < 1e-6);
    assert!((r[1].rotation.length() - 1.0).abs() < 1e-6);
    // A constant rotation with 4 components elsewhere than rotation is refused.
    let mut bad = clip.clone();
    bad.bones[1].translation = Track::Constant(vec![0.0; 4]);
    let e = anim_clip::encode(&bad).unwrap_err().to_string();
    assert!(e.contains("bones[1].translation"), "{e}");
}

/// Short cuts of cmu-104-30 at ACL's worst error on them: at most 0.85 of ACL's bytes.
#[test]
fn short_cuts_take_at_most_85_percent_of_acl() {
    let rows = match statepack::sim::acl_compare::short_rows() {
        Ok(r) => r,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    for r in rows {
        let c = compress(&r.clip, r.metric, None).unwrap();
        assert!(c.verified_error_m <= r.metric.tolerance_m, "{}", r.label);
        eprintln!(
            "| {} | {} | {} | {} | {:.3} mm | {:.2} |",
            r.label,
            r.acl_bytes,
            r.acl_error,
            c.bytes.len(),
            c.verified_error_m * 1000.0,
            c.bytes.len() as f64 / r.acl_bytes as f64
        );
        assert!(
            (c.bytes.len() as f64) <= 0.85 * r.acl_bytes as f64,
            "{}: {} bytes against ACL's {}",
            r.label,
            c.bytes.len(),
            r.acl_bytes
        );
    }
    // One-second cuts of the CMU walk (no ACL figure for them): printed, and checked against
    // the tolerance and a tenth of raw float32.
    let Some(p) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") else {
        return;
    };
    let walk = statepack_codecs::motion::load_motion_file(&p).expect("read");
    let mut w60 = walk.clone();
    w60.frames = walk.frames.iter().step_by(2).take(60).cloned().collect();
    w60.frame_time_s *= 2.0;
    let mut w120 = walk;
    w120.frames.truncate(120);
    for (label, clip) in [("60 fps, 60 frames", w60), ("120 fps, 120 frames", w120)] {
        for metric in [
            Metric {
                tolerance_m: 0.00724,
                shell_m: 0.0,
            },
            Metric {
                tolerance_m: 0.0001,
                shell_m: 0.03,
            },
        ] {
            let c = compress(&clip, metric, None).unwrap();
            assert!(c.verified_error_m <= metric.tolerance_m);
            let raw = clip.frame_count() * clip.skeleton.len() * 40;
            assert!(
                c.bytes.len() * 10 < raw,
                "{label}: {} of {raw}",
                c.bytes.len()
            );
            eprintln!(
                "| cmu-131-01-walk, first second, {label}, {} mm, shell {} cm | {} | {:.3} mm |",
                metric.tolerance_m * 1000.0,
                metric.shell_m * 100.0,
                c.bytes.len(),
                c.verified_error_m * 1000.0
            );
        }
    }
}

#[test]
fn writers_refuse_what_does_not_fit() {
    use statepack_codecs::anim::{AnimatedTrack, BoneTracks, EncodedClip, Track};
    let track = |frames: Vec<u16>, bits: Vec<u8>| AnimatedTrack {
        comps: 3,
        q: vec![0; frames.len() * 3],
        frames,
        bits,
        lo: vec![0.0; 3],
        extent: vec![1.0; 3],
        delta: false,
    };
    let clip = |t: AnimatedTrack| EncodedClip {
        sample_rate: 30.0,
        num_frames: 10,
        interp: Interp::Linear,
        bones: vec![BoneTracks {
            rotation: Track::Default,
            translation: Track::Animated(t),
            scale: Track::Default,
        }],
    };
    assert!(anim_clip::encode(&clip(track(vec![0, 4, 9], vec![8, 8, 8]))).is_ok());
    let e = anim_clip::encode(&clip(track(vec![0, 4, 4, 9], vec![8, 8, 8]))).unwrap_err();
    assert!(e.to_string().contains("bones[0].translation"), "{e}");
    assert!(
        anim_clip::encode(&clip(track(vec![0, 4, 8], vec![8, 8, 8]))).is_err(),
        "last key is not the last frame"
    );
    assert!(
        anim_clip::encode(&clip(track(vec![0, 9], vec![25, 8, 8]))).is_err(),
        "width above 24"
    );
    assert!(
        anim_clip::encode(&clip(track(vec![0, 9], vec![0, 0, 0]))).is_err(),
        "all widths zero"
    );
}

#[test]
fn study_writer_refuses_what_does_not_fit() {
    use statepack::formats::study_tracks::{f16_bits, f16_value};
    assert_eq!(f16_bits(1.0).unwrap(), 0x3c00);
    assert_eq!(f16_value(f16_bits(0.95).unwrap()), 0.9501953125);
    assert!(f16_bits(70000.0).is_err());
    assert!(f16_bits(f64::NAN).is_err());
    let mut c = walk(2);
    c.frames = vec![c.frames[0].clone(); 70_000];
    let e = statepack::formats::study_tracks::encode_raw(&c).unwrap_err();
    assert!(e.to_string().contains("frame count 70000"), "{e}");
}

/// The comparison with ACL 2.1 (heavy: run with `cargo test --release --test anim_clip --
/// --ignored`): at ACL's worst error, at least 15% fewer bytes on every clip, the error
/// measured on the decoded bytes.
#[test]
#[ignore]
fn at_least_15_percent_below_acl_on_every_clip() {
    let rows = match statepack::sim::acl_compare::rows() {
        Ok(r) => r,
        Err(e) if std::env::var_os("CI").is_none() => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    for r in rows {
        let c = compress(&r.clip, r.metric, None).unwrap();
        assert!(c.verified_error_m <= r.metric.tolerance_m, "{}", r.label);
        assert!(
            (c.bytes.len() as f64) <= 0.85 * r.acl_bytes as f64,
            "{}: {} bytes against ACL's {}",
            r.label,
            c.bytes.len(),
            r.acl_bytes
        );
    }
}
