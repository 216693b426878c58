//! SNAP v1.3 spec facts with their exact numbers and bytes, checked through the generated raw
//! layer, the quantizers of statepack-codecs and the recorder.
// The spec example's decimal digits are kept as printed, beyond f32 precision.
#![allow(clippy::excessive_precision)]

mod common;

use common::*;
use glam::{DQuat, Quat, Vec3};
use statepack::formats::snap::{self, Recorder, Sample};
use statepack::generated::snap_v1_3::{Cframe, Frame, FrameKind, SnapV13};
use statepack_codecs::quant::angle_between_rad;
use statepack_codecs::snap_delta::{chain_pos_error_bound, CHAIN_ROT_ERROR_BOUND_RAD};
use statepack_codecs::snap_quant::{
    compress_cframe, decompress_cframe, z_index_error_bound, CFRAME_ROT_ERROR_BOUND_RAD,
};
use statepack_runtime::io::{ByteWriter, TraceNode};

/// The spec's example position, studs.
const EXAMPLE_POS: [f32; 3] = [-86.98088, 447.52756, -216.12019];

/// The spec's example orientation: -13.207° about X, 58.252° about Y, 0° about Z, applied Y
/// then X then Z (`CFrame.fromOrientation`), i.e. rotY · rotX · rotZ.
fn example_rotation() -> Quat {
    let rx = (-13.207f64).to_radians();
    let ry = 58.252f64.to_radians();
    let rz = 0.0f64;
    (DQuat::from_rotation_y(ry) * DQuat::from_rotation_x(rx) * DQuat::from_rotation_z(rz)).as_quat()
}

/// The spec's table, with Z's low byte as the text says (index 3 gives `C7`, not `C0`).
const EXAMPLE_BYTES: [u8; 18] = [
    0x36, 0xF6, 0xAD, 0xC2, // X
    0x87, 0xC3, 0xDF, 0x43, // Y
    0xC7, 0x1E, 0x58, 0xC3, // Z with index 3 in its two low bits
    0x24, 0xF3, // q0 = -3292
    0xE3, 0x3D, // q1 = 15843
    0x2A, 0x07, // q2 = 1834
];

fn example_raw_cframe() -> Cframe {
    Cframe {
        x: EXAMPLE_POS[0],
        y: EXAMPLE_POS[1],
        z_bits: (EXAMPLE_POS[2].to_bits() & !3) | 3,
        q: [-3292, 15843, 1834],
    }
}

#[test]
fn example_cframe_compresses_to_index_3_and_the_spec_codes() {
    let pos = Vec3::from_array(EXAMPLE_POS);
    let packed = compress_cframe(pos, example_rotation()).unwrap();
    assert_eq!(packed.dropped_index(), 3);
    assert_eq!(packed.q, [-3292, 15843, 1834]);
    assert_eq!(packed.x.to_bits(), EXAMPLE_POS[0].to_bits());
    assert_eq!(packed.y.to_bits(), EXAMPLE_POS[1].to_bits());
    assert_eq!(packed.to_le_bytes(), EXAMPLE_BYTES);

    // Decompressing gives the example back within the documented bounds.
    let (p, r) = decompress_cframe(&packed);
    assert_eq!(p.x, EXAMPLE_POS[0]);
    assert_eq!(p.y, EXAMPLE_POS[1]);
    assert!((p.z - EXAMPLE_POS[2]).abs() <= z_index_error_bound(EXAMPLE_POS[2]));
    let err = angle_between_rad(example_rotation().as_dquat(), r.as_dquat());
    assert!(err <= CFRAME_ROT_ERROR_BOUND_RAD, "{err}");
}

#[test]
fn example_position_floats_match_the_spec_table() {
    assert_eq!(EXAMPLE_POS[0].to_le_bytes(), [0x36, 0xF6, 0xAD, 0xC2]);
    assert_eq!(EXAMPLE_POS[1].to_le_bytes(), [0x87, 0xC3, 0xDF, 0x43]);
    // Z as a plain f32 is C5 1E 58 C3; its low bits are then overwritten by the index.
    assert_eq!(EXAMPLE_POS[2].to_le_bytes(), [0xC5, 0x1E, 0x58, 0xC3]);
}

/// The spec's table prints Z as `C0 1E 58 C3`, whose two low bits say index 0, while its
/// text says i = 3. We follow the text: with index 3 the low byte is `C7`.
#[test]
fn spec_table_z_byte_contradicts_its_text_and_we_follow_the_text() {
    let table_z = [0xC0u8, 0x1E, 0x58, 0xC3];
    assert_eq!(table_z[0] & 3, 0, "the table's Z names index 0");
    // The compressor, given the example, drops qw (index 3) as the text says...
    let packed = compress_cframe(Vec3::from_array(EXAMPLE_POS), example_rotation()).unwrap();
    assert_eq!(packed.dropped_index(), 3);
    // ...so Z is stored as C7 1E 58 C3: the table's upper bytes with the text's index.
    let z = packed.z_bits.to_le_bytes();
    assert_eq!(z, [0xC7, 0x1E, 0x58, 0xC3]);
    assert_eq!(&z[1..], &table_z[1..]);
    assert_ne!(z[0], table_z[0]);
    assert_eq!(packed.z_bits, example_raw_cframe().z_bits);
}

#[test]
fn example_raw_cframe_encodes_to_the_18_spec_bytes_in_a_file() {
    let raw = file(vec![recording(
        "",
        vec![abs_frame(0, example_raw_cframe())],
    )]);
    let bytes = raw.encode().unwrap();
    // Header (8) + count (1) + name length (1) + name (0) + frame count (2) + duration (4),
    // then the frame: bitfield (1) + dt (2) + CFrame (18).
    assert_eq!(bytes.len(), 9 + 7 + 21);
    assert_eq!(&bytes[19..37], &EXAMPLE_BYTES);
    assert_eq!(bytes[16], 0b100);
    assert_eq!(raw.encoded_len(), bytes.len());

    // And back: the raw decode gives the same CFrame.
    let back = SnapV13::decode(&bytes).unwrap();
    assert_eq!(back, raw);
    // The reader reconstructs the example within the bounds.
    let decoded = snap::read(&bytes).unwrap();
    let f = decoded[0].frames[0];
    assert!(f.absolute);
    assert_eq!(f.pos_studs.x, EXAMPLE_POS[0]);
    assert_eq!(f.pos_studs.y, EXAMPLE_POS[1]);
    assert!((f.pos_studs.z - EXAMPLE_POS[2]).abs() <= z_index_error_bound(EXAMPLE_POS[2]));
    let err = angle_between_rad(example_rotation().as_dquat(), f.rot.as_dquat());
    assert!(err <= CFRAME_ROT_ERROR_BOUND_RAD, "{err}");
}

#[test]
fn recorder_writes_the_example_cframe_bytes() {
    let mut rec = Recorder::new();
    rec.add_recording(
        "Workspace",
        &[Sample {
            dt_ms: 0,
            pos_studs: Vec3::from_array(EXAMPLE_POS),
            rot: example_rotation(),
        }],
    )
    .unwrap();
    let bytes = rec.finish().unwrap();
    let frame_at = 9 + 1 + "Workspace".len() + 2 + 4;
    assert_eq!(bytes[frame_at], 0b100);
    assert_eq!(&bytes[frame_at + 3..frame_at + 21], &EXAMPLE_BYTES);
    assert_eq!(bytes.len(), frame_at + 21);
}

fn frame_bytes(f: &Frame) -> Vec<u8> {
    let mut w = ByteWriter::new();
    f.write_to(&mut w).unwrap();
    w.into_bytes()
}

#[test]
fn frame_sizes_are_21_3_9_15() {
    let cases = [
        (abs_frame(7, identity_cframe()), 21),
        (delta_frame(7, None, None), 3),
        (delta_frame(7, Some([1, 2, 3]), None), 9),
        (delta_frame(7, None, Some([4, 5, 6])), 9),
        (delta_frame(7, Some([1, 2, 3]), Some([4, 5, 6])), 15),
    ];
    for (f, size) in cases {
        assert_eq!(f.encoded_len(), size, "{:?}", f.kind);
        let b = frame_bytes(&f);
        assert_eq!(b.len(), size, "{:?}", f.kind);
        // Bitfield then dt (u16 LE).
        assert_eq!(b[0] as i128, f.kind.to_i());
        assert_eq!(&b[1..3], &7u16.to_le_bytes());
        // Inside a file, the file grows by exactly the frame's size.
        let empty = file(vec![recording("m", vec![])]).encode().unwrap();
        let one = file(vec![recording("m", vec![f.clone()])])
            .encode()
            .unwrap();
        assert_eq!(one.len() - empty.len(), size);
        assert_eq!(&one[empty.len()..], &b[..]);
    }
}

#[test]
fn bitfield_values_are_the_spec_values() {
    assert_eq!(FrameKind::Absolute.to_i(), 0b100);
    assert_eq!(FrameKind::DeltaNone.to_i(), 0b000);
    assert_eq!(FrameKind::DeltaPos.to_i(), 0b001);
    assert_eq!(FrameKind::DeltaRot.to_i(), 0b010);
    assert_eq!(FrameKind::DeltaPosRot.to_i(), 0b011);
    for v in 5..=255 {
        assert_eq!(FrameKind::from_i(v), None, "{v}");
    }
}

#[test]
fn delta_field_order_position_then_rotation() {
    let b = frame_bytes(&delta_frame(
        0x0102,
        Some([1, -2, 0x7FFF]),
        Some([-32768, 0x1234, 5]),
    ));
    assert_eq!(
        b,
        [
            0b011, 0x02, 0x01, // bitfield, dt
            0x01, 0x00, 0xFE, 0xFF, 0xFF, 0x7F, // position delta at 0x03
            0x00, 0x80, 0x34, 0x12, 0x05, 0x00, // rotation delta at 0x09
        ]
    );
    // Without the position delta the rotation delta starts at 0x03.
    let b = frame_bytes(&delta_frame(9, None, Some([-32768, 0x1234, 5])));
    assert_eq!(b, [0b010, 9, 0, 0x00, 0x80, 0x34, 0x12, 0x05, 0x00]);
}

#[test]
fn header_and_recording_layout_byte_by_byte() {
    let cf = Cframe {
        x: 1.5,
        y: -2.0,
        z_bits: 0x4040_0002,
        q: [-1, 2, -3],
    };
    let raw = file(vec![
        recording(
            "Map",
            vec![
                abs_frame(0x1234, cf.clone()),
                delta_frame(7, Some([10, -10, 256]), None),
            ],
        ),
        recording("ab", vec![abs_frame(1, cf.clone())]),
    ]);
    let b = raw.encode().unwrap();
    assert_eq!(&b[0..8], b"SNAPV1.3");
    assert_eq!(b[0x08], 2, "recording count u8 at 0x08");

    // Recording 0 starts at 0x09.
    let r0 = 0x09;
    assert_eq!(b[r0], 3, "name length");
    assert_eq!(&b[r0 + 1..r0 + 4], b"Map", "name, no terminator");
    assert_eq!(
        &b[r0 + 4..r0 + 6],
        &2u16.to_le_bytes(),
        "frame count at 0x01+S"
    );
    assert_eq!(
        &b[r0 + 6..r0 + 10],
        &(0x1234u32 + 7).to_le_bytes(),
        "total duration at 0x03+S"
    );
    let f0 = r0 + 10; // 0x07 + S
    assert_eq!(b[f0], 0b100);
    assert_eq!(&b[f0 + 1..f0 + 3], &[0x34, 0x12]);
    assert_eq!(&b[f0 + 3..f0 + 7], &1.5f32.to_le_bytes());
    assert_eq!(&b[f0 + 7..f0 + 11], &(-2.0f32).to_le_bytes());
    assert_eq!(&b[f0 + 11..f0 + 15], &[0x02, 0x00, 0x40, 0x40]);
    assert_eq!(&b[f0 + 15..f0 + 21], &[0xFF, 0xFF, 0x02, 0x00, 0xFD, 0xFF]);
    let f1 = f0 + 21;
    assert_eq!(
        &b[f1..f1 + 9],
        &[0b001, 7, 0, 10, 0, 0xF6, 0xFF, 0x00, 0x01]
    );

    // Recording 1 follows immediately.
    let r1 = f1 + 9;
    assert_eq!(b[r1], 2);
    assert_eq!(&b[r1 + 1..r1 + 3], b"ab");
    assert_eq!(&b[r1 + 3..r1 + 5], &1u16.to_le_bytes());
    assert_eq!(&b[r1 + 5..r1 + 9], &1u32.to_le_bytes());
    assert_eq!(b[r1 + 9], 0b100);
    assert_eq!(b.len(), r1 + 9 + 21);
    assert_eq!(raw.encoded_len(), b.len());

    // The traced decode (what `inspect` prints) reports the same offsets.
    let (res, tree) = SnapV13::decode_traced(&b);
    assert_eq!(res.unwrap(), raw);
    let node = |path: &[&str]| -> TraceNode {
        let mut n = &tree;
        for seg in path {
            n = n
                .children
                .iter()
                .find(|c| c.name == *seg)
                .unwrap_or_else(|| panic!("no node {seg} in {path:?}"));
        }
        n.clone()
    };
    let range = |path: &[&str]| {
        let n = node(path);
        (n.start as usize, n.end as usize)
    };
    assert_eq!(range(&["version"]), (0, 8));
    assert_eq!(range(&["num_recordings"]), (8, 9));
    assert_eq!(node(&["num_recordings"]).value.as_deref(), Some("2"));
    assert_eq!(range(&["recordings", "[0]", "len_map_name"]), (r0, r0 + 1));
    assert_eq!(range(&["recordings", "[0]", "map_name"]), (r0 + 1, r0 + 4));
    assert_eq!(
        range(&["recordings", "[0]", "num_frames"]),
        (r0 + 4, r0 + 6)
    );
    assert_eq!(
        range(&["recordings", "[0]", "total_duration_ms"]),
        (r0 + 6, r0 + 10)
    );
    assert_eq!(
        range(&["recordings", "[0]", "frames", "[0]", "cframe"]),
        (f0 + 3, f0 + 21)
    );
    assert_eq!(range(&["recordings", "[0]", "frames", "[1]"]), (f1, f1 + 9));
    assert_eq!(
        range(&["recordings", "[0]", "frames", "[1]", "pos_delta"]),
        (f1 + 3, f1 + 9)
    );
    assert_eq!(range(&["recordings", "[1]"]), (r1, b.len()));
    assert_eq!(tree.end as usize, b.len());
}

/// Recording with an absolute start at `base` and one more sample at `base + step`; returns
/// the second frame's raw form.
fn second_frame(base: Vec3, step: Vec3, rot0: Quat, rot1: Quat) -> Frame {
    let mut rec = Recorder::new();
    rec.add_recording(
        "m",
        &[
            Sample {
                dt_ms: 0,
                pos_studs: base,
                rot: rot0,
            },
            Sample {
                dt_ms: 16,
                pos_studs: base + step,
                rot: rot1,
            },
        ],
    )
    .unwrap();
    assert_eq!(rec.raw().recordings[0].frames[0].kind, FrameKind::Absolute);
    rec.raw().recordings[0].frames[1].clone()
}

#[test]
fn position_delta_edges_at_eight_studs_per_axis() {
    // Base coordinates whose f32s have zero low bits, so the keyframe stores them exactly and
    // the step is measured from the exact base.
    let base = Vec3::new(100.0, -20.0, 3.0);
    for axis in 0..3 {
        let along = |d: f32| {
            let mut v = Vec3::ZERO;
            v[axis] = d;
            v
        };
        // +8.0 studs is 32768 codes: does not fit an i16, so the frame is absolute.
        let f = second_frame(base, along(8.0), Quat::IDENTITY, Quat::IDENTITY);
        assert_eq!(f.kind, FrameKind::Absolute, "axis {axis} +8");
        assert!(f.cframe.is_some() && f.pos_delta.is_none());
        // -8.0 studs is -32768 codes, which fits: a delta.
        let f = second_frame(base, along(-8.0), Quat::IDENTITY, Quat::IDENTITY);
        assert_eq!(f.kind, FrameKind::DeltaPos, "axis {axis} -8");
        let mut expect = [0i16; 3];
        expect[axis] = -32768;
        assert_eq!(f.pos_delta, Some(expect));
        // 8 - 1/8192 is 32767.5 codes, which rounds (half away from zero) to 32768: absolute.
        let f = second_frame(
            base,
            along(8.0 - 1.0 / 8192.0),
            Quat::IDENTITY,
            Quat::IDENTITY,
        );
        assert_eq!(f.kind, FrameKind::Absolute, "axis {axis} 8-1/8192");
        // 8 - 1/4096 is 32767 codes: the largest positive delta.
        let f = second_frame(
            base,
            along(8.0 - 1.0 / 4096.0),
            Quat::IDENTITY,
            Quat::IDENTITY,
        );
        expect[axis] = 32767;
        assert_eq!(f.kind, FrameKind::DeltaPos, "axis {axis} 8-1/4096");
        assert_eq!(f.pos_delta, Some(expect));
    }
}

#[test]
fn forced_absolute_frames_are_counted() {
    let base = Vec3::new(100.0, -20.0, 3.0);
    let mut rec = Recorder::new();
    let s = |p: Vec3| Sample {
        dt_ms: 10,
        pos_studs: p,
        rot: Quat::IDENTITY,
    };
    rec.add_recording(
        "m",
        &[
            s(base),
            s(base + Vec3::X * 8.0),
            s(base + Vec3::X * 16.0),
            s(base + Vec3::X * 15.0),
        ],
    )
    .unwrap();
    assert_eq!(
        kinds(rec.raw(), 0),
        [
            FrameKind::Absolute,
            FrameKind::Absolute,
            FrameKind::Absolute,
            FrameKind::DeltaPos
        ]
    );
    let st = rec.stats();
    assert_eq!(
        (st.frames, st.absolute, st.forced_absolute, st.delta),
        (4, 3, 2, 1)
    );
}

#[test]
fn keyframe_every_60th_frame_for_smooth_motion() {
    let samples = smooth_samples(200);
    let mut rec = Recorder::new();
    rec.add_recording("Baseplate", &samples).unwrap();
    let raw = rec.raw();
    for (i, f) in raw.recordings[0].frames.iter().enumerate() {
        let absolute = f.kind == FrameKind::Absolute;
        assert_eq!(absolute, i % 60 == 0, "frame {i}: {:?}", f.kind);
        assert_eq!(f.cframe.is_some(), absolute);
    }
    // Smooth motion moves and turns every frame: every delta carries both parts.
    assert!(raw.recordings[0]
        .frames
        .iter()
        .all(|f| matches!(f.kind, FrameKind::Absolute | FrameKind::DeltaPosRot)));
    let st = rec.stats();
    assert_eq!((st.absolute, st.forced_absolute), (4, 0));
    // Size: 4 absolute frames of 21 bytes and 196 delta frames of 15.
    let bytes = rec.finish().unwrap();
    assert_eq!(bytes.len(), 9 + 7 + "Baseplate".len() + 4 * 21 + 196 * 15);
    // Every frame is within the chain's bounds.
    let back = snap::read(&bytes).unwrap();
    for (s, f) in samples.iter().zip(&back[0].frames) {
        let pe = (f.pos_studs.as_dvec3() - s.pos_studs.as_dvec3()).length();
        assert!(pe <= chain_pos_error_bound(s.pos_studs));
        let re = angle_between_rad(s.rot.normalize().as_dquat(), f.rot.as_dquat());
        assert!(re <= CHAIN_ROT_ERROR_BOUND_RAD);
    }
}

#[test]
fn rotation_over_0_2_rad_forces_absolute() {
    let base = Vec3::new(1.0, 2.0, 3.0);
    let r0 = Quat::from_rotation_x(0.4);
    let f = second_frame(base, Vec3::ZERO, r0, r0 * Quat::from_rotation_z(0.21));
    assert_eq!(f.kind, FrameKind::Absolute);
    let f = second_frame(base, Vec3::ZERO, r0, r0 * Quat::from_rotation_z(0.19));
    assert_eq!(f.kind, FrameKind::DeltaRot);
    // The delta is measured from what the decoder holds after the keyframe (closed loop):
    // axis · angle of prev⁻¹ · cur, times 32767 / 0.2, rounded.
    let mut rec = Recorder::new();
    rec.add_recording(
        "m",
        &[Sample {
            dt_ms: 0,
            pos_studs: base,
            rot: r0,
        }],
    )
    .unwrap();
    let c = rec.raw().recordings[0].frames[0].cframe.clone().unwrap();
    let (_, prev) = decompress_cframe(&statepack_codecs::snap_quant::PackedCFrame {
        x: c.x,
        y: c.y,
        z_bits: c.z_bits,
        q: c.q,
    });
    let target = (r0 * Quat::from_rotation_z(0.19)).as_dquat();
    let rel = prev.as_dquat().conjugate() * target;
    let v = rel.to_scaled_axis() * (32767.0 / 0.2);
    let rot = f.rot_delta.unwrap();
    for i in 0..3 {
        assert!(
            (f64::from(rot[i]) - v[i].round()).abs() <= 1.0,
            "{rot:?} vs {v:?}"
        );
    }
    // Mostly about the previous frame's Z axis: about 0.19 · 32767 / 0.2 codes on Z.
    assert!(
        (f64::from(rot[2]) - 0.19 * 32767.0 / 0.2).abs() < 20.0,
        "{rot:?}"
    );
    // A small move plus a large turn is still absolute.
    let f = second_frame(
        base,
        Vec3::new(0.5, 0.0, 0.0),
        r0,
        r0 * Quat::from_rotation_y(0.3),
    );
    assert_eq!(f.kind, FrameKind::Absolute);
}

#[test]
fn sub_epsilon_move_sets_no_position_bit() {
    let base = Vec3::new(1.0, 2.0, 3.0);
    // Squared length 3 · 0.0005² = 7.5e-7 < 1e-6: no position bit, a 3-byte frame.
    let f = second_frame(base, Vec3::splat(0.0005), Quat::IDENTITY, Quat::IDENTITY);
    assert_eq!(f.kind, FrameKind::DeltaNone);
    assert_eq!(f.encoded_len(), 3);
    // Squared length 3 · 0.0006² = 1.08e-6 ≥ 1e-6: the bit is set.
    let f = second_frame(base, Vec3::splat(0.0006), Quat::IDENTITY, Quat::IDENTITY);
    assert_eq!(f.kind, FrameKind::DeltaPos);
    assert_eq!(f.encoded_len(), 9);
    // A tiny turn (below 1e-4 rad) sets no rotation bit either.
    let f = second_frame(
        base,
        Vec3::ZERO,
        Quat::IDENTITY,
        Quat::from_rotation_y(0.5e-4),
    );
    assert_eq!(f.kind, FrameKind::DeltaNone);
}

#[test]
fn z_index_error_exceeds_the_spec_estimate_at_1000_studs() {
    // Three units in the last place of an f32 in [512, 1024): 3 · 2^-14 studs.
    let bound = z_index_error_bound(1000.0);
    assert_eq!(bound, 3.0 * 2f32.powi(-14));
    assert!(bound > 1e-5, "{bound}");
    // And it is reached: a Z whose low bits are 0b11 stored with index 0 (a 180° turn about
    // X, so qx is the largest component) decodes 3 units in the last place away.
    let z = f32::from_bits(1000.0f32.to_bits() | 0b11);
    let packed = compress_cframe(
        Vec3::new(0.0, 0.0, z),
        Quat::from_rotation_x(std::f32::consts::PI),
    )
    .unwrap();
    assert_eq!(packed.dropped_index(), 0);
    let (p, _) = decompress_cframe(&packed);
    let err = (p.z - z).abs();
    assert_eq!(err, bound);
    assert!(err > 1e-5);
    // Below 32 studs the spec's "~1e-5" holds.
    assert!(z_index_error_bound(31.9) < 1e-5);
}
