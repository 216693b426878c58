//! SNAP v1.3 round trips: raw values to bytes and back exactly (property tests), samples
//! through the recorder and the reader within the documented bounds (property tests), and
//! real motion (the CMU walk fixture and the study walk) imported, read back and verified.

mod common;

use glam::{DQuat, DVec3, Quat, Vec3};
use proptest::prelude::*;
use statepack::formats::snap::{self, Recorder, Sample};
use statepack::generated::snap_v1_3::{Cframe, Frame, FrameKind, Recording, SnapV13};
use statepack_codecs::motion::Clip;
use statepack_codecs::quant::angle_between_rad;
use statepack_codecs::snap_delta::{chain_pos_error_bound, CHAIN_ROT_ERROR_BOUND_RAD};
use statepack_codecs::snap_quant::unit_rotation;

// ---------------------------------------------------------------------------------------
// Raw layer
// ---------------------------------------------------------------------------------------

/// Any f32 bit pattern (NaN payloads and signalling NaNs included).
fn any_f32_bits() -> impl Strategy<Value = f32> {
    prop_oneof![
        any::<u32>().prop_map(f32::from_bits),
        Just(f32::NAN),
        Just(-0.0f32),
        Just(f32::INFINITY),
        Just(f32::MIN_POSITIVE / 2.0),
        -1e4f32..1e4,
    ]
}

fn kind() -> impl Strategy<Value = FrameKind> {
    prop_oneof![
        Just(FrameKind::DeltaNone),
        Just(FrameKind::DeltaPos),
        Just(FrameKind::DeltaRot),
        Just(FrameKind::DeltaPosRot),
        Just(FrameKind::Absolute),
    ]
}

fn cframe() -> impl Strategy<Value = Cframe> {
    (
        any_f32_bits(),
        any_f32_bits(),
        any::<u32>(),
        any::<[i16; 3]>(),
    )
        .prop_map(|(x, y, z_bits, q)| Cframe { x, y, z_bits, q })
}

/// A frame of any kind with exactly the optional fields its kind calls for.
fn frame() -> impl Strategy<Value = Frame> {
    (
        kind(),
        any::<u16>(),
        cframe(),
        any::<[i16; 3]>(),
        any::<[i16; 3]>(),
    )
        .prop_map(|(kind, dt_ms, cf, pos, rot)| {
            let bits = kind.to_i();
            let delta = kind != FrameKind::Absolute;
            Frame {
                kind,
                dt_ms,
                cframe: (!delta).then_some(cf),
                pos_delta: (delta && bits & 1 != 0).then_some(pos),
                rot_delta: (delta && bits & 2 != 0).then_some(rot),
            }
        })
}

/// Cuts a string to at most 255 bytes, at a character boundary.
fn fit_name(mut s: String) -> String {
    while s.len() > 255 {
        s.pop();
    }
    s
}

fn map_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 _-]{0,24}",
        any::<String>().prop_map(fit_name),
        prop::collection::vec(any::<char>(), 60..120)
            .prop_map(|c| fit_name(c.into_iter().collect())),
        Just("x".repeat(255)),
        Just("\u{10FFFF}é\0".to_string()),
    ]
}

fn raw_file() -> impl Strategy<Value = SnapV13> {
    prop::collection::vec(
        (map_name(), prop::collection::vec(frame(), 0..24))
            .prop_map(|(map_name, frames)| Recording { map_name, frames }),
        0..5,
    )
    .prop_map(|recordings| SnapV13 { recordings })
}

/// Everything a raw file holds, with floats as bit patterns (so NaN compares equal to
/// itself).
type FrameKey = (
    FrameKind,
    u16,
    Option<(u32, u32, u32, [i16; 3])>,
    Option<[i16; 3]>,
    Option<[i16; 3]>,
);

fn key(f: &SnapV13) -> Vec<(String, Vec<FrameKey>)> {
    f.recordings
        .iter()
        .map(|r| {
            (
                r.map_name.clone(),
                r.frames
                    .iter()
                    .map(|f| {
                        (
                            f.kind,
                            f.dt_ms,
                            f.cframe
                                .as_ref()
                                .map(|c| (c.x.to_bits(), c.y.to_bits(), c.z_bits, c.q)),
                            f.pos_delta,
                            f.rot_delta,
                        )
                    })
                    .collect(),
            )
        })
        .collect()
}

fn has_nan(f: &SnapV13) -> bool {
    f.recordings.iter().any(|r| {
        r.frames.iter().any(|f| {
            f.cframe
                .as_ref()
                .is_some_and(|c| c.x.is_nan() || c.y.is_nan())
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// encode → decode → encode gives identical bytes, and decode(encode(v)) is v.
    #[test]
    fn raw_encode_decode_is_lossless(v in raw_file()) {
        let bytes = v.encode().unwrap();
        prop_assert_eq!(bytes.len(), v.encoded_len());
        let back = SnapV13::decode(&bytes).unwrap();
        prop_assert_eq!(key(&back), key(&v));
        if !has_nan(&v) {
            prop_assert_eq!(&back, &v);
        }
        let again = back.encode().unwrap();
        prop_assert_eq!(&again, &bytes);
        // Derived fields are what the data says.
        prop_assert_eq!(&bytes[..8], b"SNAPV1.3");
        prop_assert_eq!(usize::from(bytes[8]), v.recordings.len());
        let mut at = 9;
        for r in &v.recordings {
            prop_assert_eq!(usize::from(bytes[at]), r.map_name.len());
            at += 1 + r.map_name.len();
            let n = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            prop_assert_eq!(usize::from(n), r.frames.len());
            let total = u32::from_le_bytes(bytes[at + 2..at + 6].try_into().unwrap());
            prop_assert_eq!(total, r.frames.iter().map(|f| u32::from(f.dt_ms)).sum::<u32>());
            at += 6 + r.frames.iter().map(Frame::encoded_len).sum::<usize>();
        }
        prop_assert_eq!(at, bytes.len());
    }

    /// The JSON form of the raw layer (what `statepack decode` prints and `encode` reads)
    /// gives the same bytes back for finite positions.
    #[test]
    fn raw_json_round_trip(v in raw_file()) {
        prop_assume!(v.recordings.iter().all(|r| r.frames.iter().all(|f| f
            .cframe
            .as_ref()
            .is_none_or(|c| c.x.is_finite() && c.y.is_finite()))));
        let bytes = v.encode().unwrap();
        let text = serde_json::to_string(&SnapV13::decode(&bytes).unwrap()).unwrap();
        let back: SnapV13 = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back.encode().unwrap(), bytes);
    }
}

// ---------------------------------------------------------------------------------------
// Semantic layer
// ---------------------------------------------------------------------------------------

/// Runs samples through the recorder and the reader and checks every frame against the
/// documented bounds, the keyframe schedule and the timing.
fn check_path(samples: &[Sample]) -> Result<(), TestCaseError> {
    let mut rec = Recorder::new();
    rec.add_recording("path", samples)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let bytes = rec
        .finish()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back = snap::read(&bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(back.len(), 1);
    let r = &back[0];
    prop_assert_eq!(&r.map_name, "path");
    prop_assert_eq!(r.frames.len(), samples.len());
    let sum: u64 = samples.iter().map(|s| u64::from(s.dt_ms)).sum();
    prop_assert_eq!(u64::from(r.total_duration_ms), sum);
    let mut t = 0u64;
    for (i, (s, f)) in samples.iter().zip(&r.frames).enumerate() {
        t += u64::from(s.dt_ms);
        prop_assert_eq!(f.time_ms, t);
        prop_assert_eq!(u32::from(f.dt_ms), s.dt_ms);
        let pe = (f.pos_studs.as_dvec3() - s.pos_studs.as_dvec3()).length();
        let bound = chain_pos_error_bound(s.pos_studs);
        prop_assert!(
            pe <= bound,
            "frame {}: position error {} > {} at {:?}",
            i,
            pe,
            bound,
            s.pos_studs
        );
        let re = angle_between_rad(unit_rotation(s.rot).unwrap(), f.rot.as_dquat());
        prop_assert!(
            re <= CHAIN_ROT_ERROR_BOUND_RAD,
            "frame {}: rotation error {}",
            i,
            re
        );
        if i % 60 == 0 {
            prop_assert!(f.absolute, "frame {} must be absolute", i);
        }
    }
    Ok(())
}

fn dvec(r: f64) -> impl Strategy<Value = DVec3> {
    (-r..r, -r..r, -r..r).prop_map(|(x, y, z)| DVec3::new(x, y, z))
}

fn start_quat() -> impl Strategy<Value = DQuat> {
    (-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0)
        .prop_map(|(x, y, z, w)| DQuat::from_xyzw(x, y, z, w + 1e-3).normalize())
}

fn scale() -> impl Strategy<Value = f64> {
    prop_oneof![Just(10.0), Just(1_000.0), Just(20_000.0), Just(1.0e6)]
}

fn dt() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(16), Just(17), 0u32..=65_535]
}

/// Constant velocity and angular velocity with a small acceleration.
fn smooth_path() -> impl Strategy<Value = Vec<Sample>> {
    (
        scale().prop_flat_map(dvec),
        dvec(2.0),
        dvec(0.01),
        dvec(0.1),
        start_quat(),
        prop::collection::vec(dt(), 1..200),
    )
        .prop_map(|(p0, v, a, w, q0, dts)| {
            dts.into_iter()
                .enumerate()
                .map(|(k, dt_ms)| {
                    let t = k as f64;
                    let p = p0 + v * t + a * (0.5 * t * t);
                    let q = q0 * DQuat::from_scaled_axis(w * t);
                    Sample {
                        dt_ms,
                        pos_studs: p.as_vec3(),
                        rot: q.as_quat(),
                    }
                })
                .collect()
        })
}

/// A unit direction.
fn dir() -> impl Strategy<Value = DVec3> {
    dvec(1.0).prop_map(|d| (d + DVec3::new(0.0, 0.0, 1e-3)).normalize())
}

/// Random steps around every threshold: still, tiny, near 8 studs, far; tiny turns, turns
/// near 0.2 rad, large turns.
fn jumpy_path() -> impl Strategy<Value = Vec<Sample>> {
    let step_len = prop_oneof![
        Just(0.0),
        Just(5e-4),
        0.0f64..8.0,
        Just(8.0),
        Just(8.0 - 1.0 / 8192.0),
        8.0f64..100.0,
    ];
    let turn = prop_oneof![
        Just(0.0),
        Just(5e-5),
        0.0f64..0.2,
        Just(0.2),
        0.2f64..std::f64::consts::PI,
    ];
    (
        scale().prop_flat_map(dvec),
        start_quat(),
        prop::collection::vec((step_len, dir(), turn, dir(), dt()), 1..150),
    )
        .prop_map(|(p0, q0, steps)| {
            let mut p = p0;
            let mut q = q0;
            steps
                .into_iter()
                .map(|(len, pdir, angle, axis, dt_ms)| {
                    p += pdir * len;
                    q = (q * DQuat::from_axis_angle(axis, angle)).normalize();
                    Sample {
                        dt_ms,
                        pos_studs: p.as_vec3(),
                        rot: q.as_quat(),
                    }
                })
                .collect()
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn smooth_paths_read_back_within_bounds(path in smooth_path()) {
        check_path(&path)?;
    }

    #[test]
    fn jumpy_paths_read_back_within_bounds(path in jumpy_path()) {
        check_path(&path)?;
    }
}

#[test]
fn several_recordings_keep_their_order_names_and_durations() {
    let mut rec = Recorder::new();
    let a = common::smooth_samples(61);
    let b = common::smooth_samples(3);
    rec.add_recording("A", &a).unwrap();
    rec.add_recording("", &[]).unwrap();
    rec.add_recording("Bé", &b).unwrap();
    let back = snap::read(&rec.finish().unwrap()).unwrap();
    let names: Vec<&str> = back.iter().map(|r| r.map_name.as_str()).collect();
    assert_eq!(names, ["A", "", "Bé"]);
    assert_eq!(back[0].frames.len(), 61);
    assert_eq!(back[0].total_duration_ms, 60 * 16);
    assert!(back[1].frames.is_empty());
    assert_eq!(back[1].total_duration_ms, 0);
    assert_eq!(back[1].sample_at(0.0), None);
    assert_eq!(back[2].total_duration_ms, 2 * 16);
    // The state at a frame's time is that frame's state; halfway between two frames the
    // position is halfway between them.
    let r = &back[0];
    for i in [0usize, 1, 30, 60] {
        let (p, q) = r.sample_at(r.frames[i].time_ms as f64).unwrap();
        assert_eq!(p, r.frames[i].pos_studs);
        assert!(angle_between_rad(q.as_dquat(), r.frames[i].rot.as_dquat()) < 1e-6);
    }
    let (p, _) = r
        .sample_at((r.frames[10].time_ms + r.frames[11].time_ms) as f64 / 2.0)
        .unwrap();
    let mid = (r.frames[10].pos_studs + r.frames[11].pos_studs) / 2.0;
    assert!((p - mid).length() < 1e-5);
    // Before the start and after the end the state is clamped.
    assert_eq!(r.sample_at(-5.0).unwrap().0, r.frames[0].pos_studs);
    assert_eq!(r.sample_at(1e9).unwrap().0, r.frames[60].pos_studs);
}

// ---------------------------------------------------------------------------------------
// Real input
// ---------------------------------------------------------------------------------------

/// Imports `clip`, reads it back and checks every frame of every joint against the clip's
/// forward kinematics (independently of `verify_against_clip`), then checks
/// `verify_against_clip` too.
fn import_and_verify(clip: &Clip) {
    let spm = snap::DEFAULT_STUDS_PER_METRE;
    let rec = snap::import_clip(clip, spm).unwrap();
    let bytes = rec.finish().unwrap();
    let back = snap::read(&bytes).unwrap();
    let bones = clip.skeleton.bones();
    assert_eq!(back.len(), bones.len());
    let n = clip.frame_count();
    let expected_ms = ((n.saturating_sub(1)) as f64 * clip.frame_time_s * 1000.0).round() as u32;
    let poses: Vec<_> = (0..n).map(|f| clip.world_pose(f)).collect();
    for (b, r) in back.iter().enumerate() {
        assert_eq!(r.map_name, bones[b].name);
        assert_eq!(r.frames.len(), n);
        assert_eq!(r.total_duration_ms, expected_ms, "{}", r.map_name);
        for (f, frame) in r.frames.iter().enumerate() {
            let src: Vec3 = (poses[f][b].position * spm).as_vec3();
            let pe = (frame.pos_studs.as_dvec3() - src.as_dvec3()).length();
            assert!(
                pe <= chain_pos_error_bound(src),
                "{} frame {f}: {pe} studs",
                r.map_name
            );
            let src_rot: Quat = poses[f][b].rotation.as_quat();
            let re = angle_between_rad(unit_rotation(src_rot).unwrap(), frame.rot.as_dquat());
            assert!(
                re <= CHAIN_ROT_ERROR_BOUND_RAD,
                "{} frame {f}: {re} rad",
                r.map_name
            );
            assert!(f % 60 != 0 || frame.absolute);
        }
    }
    let errs = snap::verify_against_clip(&back, clip, spm).unwrap();
    assert_eq!(errs.len(), bones.len());
    for e in &errs {
        assert!(
            e.max_pos_error_studs <= e.pos_bound_studs,
            "{}: {} > {}",
            e.name,
            e.max_pos_error_studs,
            e.pos_bound_studs
        );
        assert!(
            e.max_rot_error_deg <= CHAIN_ROT_ERROR_BOUND_RAD.to_degrees(),
            "{}: {} deg",
            e.name,
            e.max_rot_error_deg
        );
    }
    // Real motion is mostly small steps: the delta encoding saves space.
    assert!(bytes.len() < snap::all_absolute_size(rec.raw()));
}

#[test]
fn cmu_walk_fixture_round_trips_within_bounds() {
    let Some(path) = statepack_fixtures::fixture_for_test("motion/cmu-131-01-walk.bvh") else {
        return;
    };
    let clip = statepack_codecs::motion::load_motion_file(&path).unwrap();
    assert!(clip.frame_count() > 60);
    import_and_verify(&clip);
}

#[test]
fn study_walk_round_trips_within_bounds() {
    let clip = statepack_codecs::motion::walk::study_walk_clip();
    import_and_verify(&clip);
}
