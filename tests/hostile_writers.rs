//! Writers refuse what does not fit, or apply the spec's documented fallback; they never
//! wrap a value. For SNAP v1.3, each quantized or counted field is written at its limit and
//! one past it, and with NaN, +Inf, −Inf and a zero quaternion; what was written is decoded
//! again and compared with what was given:
//!
//! - position delta components at the ±8-stud edges and rotation deltas at 0.2 rad: a delta
//!   when it fits, else an absolute frame (docs/formats/snap.md, decisions 2 and 5);
//! - `dt_ms` 65 535 and 65 536, a map name of 255 and 256 bytes, 65 535 and 65 536 frames,
//!   255 and 256 recordings: written, or an error naming the field;
//! - total duration: the largest reachable (65 535 frames of 65 535 ms, u32::MAX − 131 070)
//!   is written and read back exactly; u32::MAX itself needs 65 537 frames and one past it
//!   65 538, so the frame count is refused first and no total is ever wrapped;
//! - non-finite positions and quaternion components, a zero quaternion: an error naming the
//!   frame's `cframe`; a non-unit quaternion is normalized, and extreme finite positions are
//!   stored as given;
//! - the raw layer's JSON writer (`FormatSpec::from_json`) refuses values outside their
//!   stored type.

use glam::{Quat, Vec3};
use statepack::formats::snap::{self, DecodedRecording, Recorder, Sample, SnapError};
use statepack::generated::snap_v1_3::{FrameKind, SnapV13};
use statepack_codecs::quant::angle_between_rad;
use statepack_codecs::snap_delta::{chain_pos_error_bound, CHAIN_ROT_ERROR_BOUND_RAD};
use statepack_runtime::io::{EncodeError, EncodeErrorKind};

/// A sample `dt_ms` after the previous one.
fn sample(dt_ms: u32, pos_studs: Vec3, rot: Quat) -> Sample {
    Sample {
        dt_ms,
        pos_studs,
        rot,
    }
}

/// `n` samples at rest, `dt_ms` apart (the first has dt 0).
fn still(n: usize, dt_ms: u32) -> Vec<Sample> {
    (0..n)
        .map(|i| sample(if i == 0 { 0 } else { dt_ms }, Vec3::ZERO, Quat::IDENTITY))
        .collect()
}

/// Writes one recording and reads it back, raw and decoded.
fn write_and_read(samples: &[Sample]) -> (SnapV13, DecodedRecording) {
    let mut rec = Recorder::new();
    rec.add_recording("m", samples).expect("encodes");
    let bytes = rec.finish().expect("finishes");
    let raw = SnapV13::decode(&bytes).expect("raw decode");
    let mut decoded = snap::read(&bytes).expect("decode");
    assert_eq!(decoded.len(), 1);
    (raw, decoded.remove(0))
}

/// Every decoded frame is the sample given, within the chain's documented bounds: same dt,
/// position within `chain_pos_error_bound`, rotation within `CHAIN_ROT_ERROR_BOUND_RAD` of
/// the normalized quaternion.
#[track_caller]
fn assert_faithful(samples: &[Sample], decoded: &DecodedRecording) {
    assert_eq!(decoded.frames.len(), samples.len());
    let mut time = 0u64;
    for (i, (s, f)) in samples.iter().zip(&decoded.frames).enumerate() {
        time += u64::from(s.dt_ms);
        assert_eq!(u32::from(f.dt_ms), s.dt_ms, "frame {i}");
        assert_eq!(f.time_ms, time, "frame {i}");
        let dp = (f.pos_studs.as_dvec3() - s.pos_studs.as_dvec3()).length();
        assert!(
            dp <= chain_pos_error_bound(s.pos_studs),
            "frame {i}: position {} for {} ({dp} studs off)",
            f.pos_studs,
            s.pos_studs
        );
        let want = s.rot.as_dquat().normalize();
        let dr = angle_between_rad(f.rot.as_dquat(), want);
        assert!(
            dr <= CHAIN_ROT_ERROR_BOUND_RAD,
            "frame {i}: rotation {} for {} ({dr} rad off)",
            f.rot,
            s.rot
        );
    }
    assert_eq!(u64::from(decoded.total_duration_ms), time);
}

/// The encode error of `r`, which must fail.
#[track_caller]
fn encode_err<T: std::fmt::Debug>(r: Result<T, SnapError>) -> EncodeError {
    match r {
        Err(SnapError::Encode(e)) => e,
        other => panic!("expected an encode error, got {other:?}"),
    }
}

/// Asserts an `OutOfRange` error at `path` for `value` in `ty`, shown with its path.
#[track_caller]
fn assert_out_of_range(e: &EncodeError, path: &str, value: &str, ty: &str) {
    assert_eq!(e.path.to_string(), path, "{e}");
    assert!(
        matches!(&e.kind, EncodeErrorKind::OutOfRange { value: v, ty: t } if v == value && *t == ty),
        "{e}"
    );
    assert!(e.to_string().starts_with(path), "{e}");
}

const AXES: [Vec3; 3] = [Vec3::X, Vec3::Y, Vec3::Z];

/// One stud in position-delta codes.
const POS_SCALE: f32 = 4096.0;

#[test]
fn position_deltas_at_the_8_stud_edges() {
    // (offset along one axis in studs, the code stored if it stays a delta)
    let cases: [(f32, Option<i16>); 6] = [
        (32_767.0 / POS_SCALE, Some(i16::MAX)),
        // +8 − 1/8192 rounds to 32 768, which does not fit an i16.
        (8.0 - 0.5 / POS_SCALE, None),
        (8.0, None),
        (-8.0, Some(i16::MIN)),
        (-8.0 - 1.0 / POS_SCALE, None),
        (-(32_767.5 / POS_SCALE), Some(i16::MIN)),
    ];
    for axis in AXES {
        for (offset, code) in cases {
            let start = Vec3::new(100.0, -50.0, 20.0);
            let mut s = still(3, 16);
            s[0].pos_studs = start;
            s[1].pos_studs = start + axis * offset;
            s[2].pos_studs = s[1].pos_studs;
            let (raw, decoded) = write_and_read(&s);
            let f = &raw.recordings[0].frames[1];
            match code {
                Some(c) => {
                    assert_eq!(f.kind, FrameKind::DeltaPos, "{axis} {offset}");
                    let d = f.pos_delta.expect("a position delta");
                    let want = axis.to_array().map(|a| if a == 0.0 { 0 } else { c });
                    assert_eq!(d, want, "{axis} {offset}");
                }
                None => assert_eq!(f.kind, FrameKind::Absolute, "{axis} {offset}"),
            }
            assert_faithful(&s, &decoded);
        }
    }
    // Each component below 8 studs but the length above: absolute. Length just below 8:
    // a delta of the rounded codes.
    for (offset, absolute) in [(Vec3::splat(4.7), true), (Vec3::splat(4.6), false)] {
        let mut s = still(2, 16);
        s[1].pos_studs = offset;
        let (raw, decoded) = write_and_read(&s);
        let f = &raw.recordings[0].frames[1];
        if absolute {
            assert_eq!(f.kind, FrameKind::Absolute);
        } else {
            let code = (f64::from(offset.x) * 4096.0).round() as i16;
            assert_eq!(f.pos_delta, Some([code; 3]));
        }
        assert_faithful(&s, &decoded);
    }
}

#[test]
fn rotation_deltas_at_0_2_rad() {
    let diagonal = Vec3::ONE.normalize();
    for axis in [Vec3::X, Vec3::Y, Vec3::Z, diagonal] {
        // (angle in rad, whether it stays a delta)
        for (angle, delta) in [
            (0.2 - 1e-5, true),
            (-(0.2 - 1e-5), true),
            (0.2 + 1e-4, false),
            (-(0.2 + 1e-4), false),
            (1.0, false),
            (std::f32::consts::PI, false),
        ] {
            // From the identity, which a keyframe stores exactly.
            let mut s = still(3, 16);
            s[1].rot = Quat::from_axis_angle(axis, angle);
            s[2].rot = s[1].rot;
            let (raw, decoded) = write_and_read(&s);
            let f = &raw.recordings[0].frames[1];
            if delta {
                assert_eq!(f.kind, FrameKind::DeltaRot, "{axis} {angle}");
                let code = f.rot_delta.expect("a rotation delta");
                // Axis × angle in units of 0.2/32767 rad: at most 32 767 in size.
                let v = Vec3::new(code[0] as f32, code[1] as f32, code[2] as f32);
                let want = axis * angle * (32_767.0 / 0.2);
                assert!((v - want).abs().max_element() <= 1.5, "{code:?} for {want}");
            } else {
                assert_eq!(f.kind, FrameKind::Absolute, "{axis} {angle}");
            }
            assert_faithful(&s, &decoded);
        }
    }
    // Just below 0.2 rad, the largest code: ±32 767, never a wrapped −32 768.
    for (angle, code) in [(0.2 - 1e-6, i16::MAX), (-(0.2 - 1e-6), -i16::MAX)] {
        let mut s = still(2, 16);
        s[1].rot = Quat::from_axis_angle(Vec3::Y, angle);
        let (raw, decoded) = write_and_read(&s);
        assert_eq!(raw.recordings[0].frames[1].rot_delta, Some([0, code, 0]));
        assert_faithful(&s, &decoded);
    }
    // 0.2 as an f32 is 0.2000000030 rad, past the limit by less than the quaternion's own
    // rounding: either shape may be written, and it reads back within the bound.
    for angle in [0.2f32, -0.2] {
        let mut s = still(2, 16);
        s[1].rot = Quat::from_axis_angle(Vec3::Y, angle);
        let (raw, decoded) = write_and_read(&s);
        let f = &raw.recordings[0].frames[1];
        match f.rot_delta {
            Some(code) => assert_eq!(code, [0, angle.signum() as i16 * i16::MAX, 0]),
            None => assert_eq!(f.kind, FrameKind::Absolute),
        }
        assert_faithful(&s, &decoded);
    }
}

#[test]
fn both_deltas_at_their_edges_together() {
    let mut s = still(3, 16);
    s[1].pos_studs = Vec3::new(-8.0, 0.0, 0.0);
    s[1].rot = Quat::from_rotation_z(0.2 - 1e-5);
    s[2].pos_studs = s[1].pos_studs + Vec3::new(0.0, 32_767.0 / POS_SCALE, 0.0);
    s[2].rot = s[1].rot * Quat::from_rotation_z(-(0.2 - 1e-5));
    let (raw, decoded) = write_and_read(&s);
    let kinds: Vec<FrameKind> = raw.recordings[0].frames.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            FrameKind::Absolute,
            FrameKind::DeltaPosRot,
            FrameKind::DeltaPosRot
        ]
    );
    assert_eq!(
        raw.recordings[0].frames[1].pos_delta,
        Some([i16::MIN, 0, 0])
    );
    assert_eq!(
        raw.recordings[0].frames[2].pos_delta,
        Some([0, i16::MAX, 0])
    );
    assert_faithful(&s, &decoded);
}

#[test]
fn dt_ms_65535_is_written_and_65536_is_refused() {
    let mut s = still(4, 16);
    s[2].dt_ms = 65_535;
    let (raw, decoded) = write_and_read(&s);
    assert_eq!(raw.recordings[0].frames[2].dt_ms, u16::MAX);
    assert_faithful(&s, &decoded);
    for bad in [65_536, 100_000, u32::MAX] {
        s[2].dt_ms = bad;
        let mut rec = Recorder::new();
        rec.add_recording("ok", &still(1, 0)).unwrap();
        let e = encode_err(rec.add_recording("m", &s));
        assert_out_of_range(&e, "recordings[1].frames[2].dt_ms", &bad.to_string(), "u16");
        // The refused recording is not part of the file.
        let back = snap::read(&rec.finish().unwrap()).unwrap();
        assert_eq!(back.len(), 1);
    }
}

#[test]
fn map_name_of_255_bytes_is_written_and_256_is_refused() {
    for name in ["n".repeat(255), "€".repeat(85)] {
        assert_eq!(name.len(), 255);
        let mut rec = Recorder::new();
        rec.add_recording(&name, &still(2, 1)).unwrap();
        let back = snap::read(&rec.finish().unwrap()).unwrap();
        assert_eq!(back[0].map_name, name);
        let long = format!("{name}x");
        let mut rec = Recorder::new();
        rec.add_recording("ok", &still(1, 0)).unwrap();
        rec.add_recording(&long, &still(2, 1)).unwrap();
        let e = encode_err(rec.finish());
        assert_out_of_range(&e, "recordings[1].len_map_name", "256", "u8");
    }
}

#[test]
fn frame_counts_and_the_largest_total_duration() {
    // 65 535 frames of 65 535 ms: the largest total a recording can hold,
    // 4 294 836 225 ms = u32::MAX − 131 070.
    let mut s = still(65_535, 65_535);
    s[0].dt_ms = 65_535;
    let (raw, decoded) = write_and_read(&s);
    assert_eq!(raw.recordings[0].frames.len(), 65_535);
    assert_eq!(decoded.total_duration_ms, 65_535 * 65_535);
    assert_eq!(
        u64::from(decoded.total_duration_ms),
        u64::from(u32::MAX) - 131_070
    );
    assert_faithful(&s, &decoded);
    // A total of u32::MAX needs 65 537 frames of 65 535 ms ((2^16 + 1)(2^16 − 1) = 2^32 − 1),
    // one past it 65 538: the frame count is refused first, so no total is ever wrapped.
    for (frames, total) in [
        (65_536u64, u64::from(u32::MAX) - 65_535),
        (65_537, u64::from(u32::MAX)),
        (65_538, u64::from(u32::MAX) + 65_535),
    ] {
        s.resize(frames as usize, sample(65_535, Vec3::ZERO, Quat::IDENTITY));
        assert_eq!(s.iter().map(|x| u64::from(x.dt_ms)).sum::<u64>(), total);
        let mut rec = Recorder::new();
        rec.add_recording("m", &s).unwrap();
        let e = encode_err(rec.finish());
        assert_out_of_range(&e, "recordings[0].num_frames", &frames.to_string(), "u16");
    }
}

#[test]
fn recording_counts_255_is_written_and_256_is_refused() {
    let mut rec = Recorder::new();
    for _ in 0..255 {
        rec.add_recording("r", &still(2, 5)).unwrap();
    }
    let bytes = rec.finish().unwrap();
    assert_eq!(bytes[8], 255);
    let back = snap::read(&bytes).unwrap();
    assert_eq!(back.len(), 255);
    assert!(back.iter().all(|r| r.total_duration_ms == 5));
    rec.add_recording("r", &still(2, 5)).unwrap();
    let e = encode_err(rec.finish());
    assert_out_of_range(&e, "num_recordings", "256", "u8");
}

#[test]
fn non_finite_values_and_a_zero_quaternion_are_refused() {
    let mut cases: Vec<(String, Vec3, Quat)> = Vec::new();
    for v in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        for i in 0..3 {
            let mut p = Vec3::new(1.0, 2.0, 3.0);
            p[i] = v;
            cases.push((format!("position {p}"), p, Quat::IDENTITY));
        }
        for i in 0..4 {
            let mut q = [0.0, 0.0, 0.0, 1.0];
            q[i] = v;
            let q = Quat::from_array(q);
            cases.push((format!("rotation {q}"), Vec3::ONE, q));
        }
    }
    cases.push((
        "zero quaternion".into(),
        Vec3::ONE,
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
    ));
    cases.push((
        "negative zero quaternion".into(),
        Vec3::ONE,
        Quat::from_xyzw(-0.0, -0.0, -0.0, -0.0),
    ));
    for (what, pos, rot) in cases {
        // On frame 0 (absolute), on a delta frame and on a keyframe.
        for at in [0usize, 2, 60] {
            let mut s = still(62, 16);
            s[at].pos_studs = pos;
            s[at].rot = rot;
            let mut rec = Recorder::new();
            rec.add_recording("ok", &still(1, 0)).unwrap();
            let e = encode_err(rec.add_recording("m", &s));
            let path = format!("recordings[1].frames[{at}].cframe");
            assert_eq!(e.path.to_string(), path, "{what}: {e}");
            assert!(
                matches!(e.kind, EncodeErrorKind::Semantic(_)),
                "{what}: {e}"
            );
            assert!(e.to_string().starts_with(&path), "{e}");
            // Nothing of the refused recording was kept.
            let back = snap::read(&rec.finish().unwrap()).unwrap();
            assert_eq!(back.len(), 1, "{what}");
        }
    }
}

#[test]
fn non_unit_quaternions_are_normalized() {
    let q = Quat::from_rotation_y(1.0) * Quat::from_rotation_x(-0.4);
    let tiny = f32::from_bits(1);
    for (what, rot) in [
        ("q × 1000", q * 1000.0),
        ("q × 0.001", q * 0.001),
        ("−q", -q),
        (
            "the smallest subnormal w",
            Quat::from_xyzw(0.0, 0.0, 0.0, tiny),
        ),
        (
            "the largest finite components",
            Quat::from_xyzw(f32::MAX, 0.0, 0.0, f32::MAX),
        ),
    ] {
        let mut s = still(3, 16);
        s[0].rot = rot;
        s[1].rot = -rot;
        s[2].rot = rot;
        let (_, decoded) = write_and_read(&s);
        assert_faithful(&s, &decoded);
        assert!(
            decoded.frames.iter().all(|f| f.rot.is_normalized()),
            "{what}"
        );
    }
}

#[test]
fn extreme_finite_positions_are_stored_as_given() {
    let tiny = f32::from_bits(1);
    let points = [
        Vec3::splat(f32::MAX),
        Vec3::splat(f32::MIN),
        Vec3::new(f32::MAX, f32::MIN, tiny),
        Vec3::new(-tiny, -0.0, f32::MIN_POSITIVE),
        Vec3::new(1e30, -1e-30, 16_777_217.0),
    ];
    let mut s: Vec<Sample> = points
        .iter()
        .map(|p| sample(16, *p, Quat::IDENTITY))
        .collect();
    // Small steps next to the largest values: the sums stay finite.
    s.push(sample(
        16,
        Vec3::new(f32::MAX, 0.0, f32::MIN),
        Quat::IDENTITY,
    ));
    s.push(sample(
        16,
        Vec3::new(f32::MAX, 7.0, f32::MIN),
        Quat::IDENTITY,
    ));
    s.push(sample(
        16,
        Vec3::new(f32::MAX, -1.0, f32::MIN),
        Quat::IDENTITY,
    ));
    let (raw, decoded) = write_and_read(&s);
    for (i, f) in decoded.frames.iter().enumerate() {
        assert!(f.pos_studs.is_finite(), "frame {i}: {}", f.pos_studs);
    }
    // Absolute frames store x and y exactly.
    for (i, f) in raw.recordings[0].frames.iter().enumerate() {
        if let Some(c) = &f.cframe {
            assert_eq!(c.x.to_bits(), s[i].pos_studs.x.to_bits(), "frame {i}");
            assert_eq!(c.y.to_bits(), s[i].pos_studs.y.to_bits(), "frame {i}");
        }
    }
    assert_faithful(&s, &decoded);
}

/// The JSON writer of the raw layer (what `statepack encode` runs) refuses values outside
/// their stored type, and counts or lengths that do not fit, naming what is wrong.
#[test]
fn the_json_writer_refuses_out_of_range_values() {
    let f = statepack::formats::by_name("snap").expect("snap is registered");
    let (_, bytes) = (f.samples)()
        .into_iter()
        .find(|(n, _)| n == "every-frame-shape")
        .expect("sample");
    let good = (f.to_json)(&bytes).unwrap();
    assert_eq!((f.from_json)(&good).unwrap(), bytes);
    let frames = &good["recordings"][0]["frames"];
    let abs = frames
        .as_array()
        .unwrap()
        .iter()
        .position(|f| f["kind"] == "absolute")
        .unwrap();
    let delta = frames
        .as_array()
        .unwrap()
        .iter()
        .position(|f| f["kind"] == "delta_pos")
        .unwrap();
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let edits: Vec<(&str, Edit, &str)> = vec![
        (
            "dt_ms 65 536",
            Box::new(move |v| v["recordings"][0]["frames"][delta]["dt_ms"] = 65_536.into()),
            "65536",
        ),
        (
            "dt_ms −1",
            Box::new(move |v| v["recordings"][0]["frames"][delta]["dt_ms"] = (-1).into()),
            "-1",
        ),
        (
            "position delta 32 768",
            Box::new(move |v| v["recordings"][0]["frames"][delta]["pos_delta"][0] = 32_768.into()),
            "32768",
        ),
        (
            "q −32 769",
            Box::new(move |v| {
                v["recordings"][0]["frames"][abs]["cframe"]["q"][2] = (-32_769).into()
            }),
            "-32769",
        ),
        (
            "z_bits 2^32",
            Box::new(move |v| {
                v["recordings"][0]["frames"][abs]["cframe"]["z_bits"] = (1u64 << 32).into()
            }),
            "4294967296",
        ),
        (
            "x beyond f32",
            Box::new(move |v| v["recordings"][0]["frames"][abs]["cframe"]["x"] = 1e39.into()),
            "f32",
        ),
        (
            "unknown kind",
            Box::new(move |v| v["recordings"][0]["frames"][delta]["kind"] = "delta_all".into()),
            "delta_all",
        ),
        (
            "map name of 256 bytes",
            Box::new(|v| v["recordings"][0]["map_name"] = "n".repeat(256).into()),
            "len_map_name",
        ),
        (
            "256 recordings",
            Box::new(|v| {
                let one = v["recordings"][1].clone();
                v["recordings"] = serde_json::Value::Array(vec![one; 256]);
            }),
            "num_recordings",
        ),
    ];
    for (what, edit, named) in edits {
        let mut v = good.clone();
        edit(&mut v);
        let e = (f.from_json)(&v).expect_err(what);
        assert!(e.contains(named), "{what}: {e}");
    }
}
