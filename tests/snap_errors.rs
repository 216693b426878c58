//! SNAP v1.3 bad input: every reader error names its field path and byte offset, no input
//! panics the reader or makes it allocate beyond the input, and writers refuse what does not
//! fit instead of wrapping it.

mod common;

use common::*;
use glam::{Quat, Vec3};
use statepack::formats::snap::{self, Recorder, Sample, SnapError};
use statepack::generated::snap_v1_3::{Cframe, FrameKind, SnapV13};
use statepack_runtime::io::{DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind};

/// The decode error of `snap::read`, which must fail.
fn read_err(bytes: &[u8]) -> DecodeError {
    match snap::read(bytes) {
        Err(SnapError::Decode(e)) => e,
        other => panic!("expected a decode error, got {other:?}"),
    }
}

fn encode_err(r: Result<impl std::fmt::Debug, SnapError>) -> EncodeError {
    match r {
        Err(SnapError::Encode(e)) => e,
        other => panic!("expected an encode error, got {other:?}"),
    }
}

/// Asserts the error's path and offset, and that its Display shows both.
fn assert_at(e: &DecodeError, path: &str, offset: u64) {
    assert_eq!(e.path.to_string(), path, "{e}");
    assert_eq!(e.offset, offset, "{e}");
    let shown = e.to_string();
    assert!(shown.contains(path), "{shown}");
    assert!(shown.contains(&format!("byte offset {offset}")), "{shown}");
}

/// Bytes of a raw file whose recordings hold the given frames (encoded by the raw layer,
/// which does not apply the reader's semantic checks).
fn raw_bytes(raw: &SnapV13) -> Vec<u8> {
    raw.encode().unwrap()
}

#[test]
fn version_mismatch_names_the_header_found() {
    let mut b = raw_bytes(&small_raw_file());
    b[..8].copy_from_slice(b"SNAPV1.2");
    let e = read_err(&b);
    assert_at(&e, "version", 0);
    assert!(matches!(e.kind, DecodeErrorKind::BadContents { .. }), "{e}");
    assert!(e.to_string().contains("SNAPV1.2"), "{e}");
    assert!(e.to_string().contains("SNAPV1.3"), "{e}");
    // A header that is not text is shown as hex.
    b[..8].copy_from_slice(&[0xFF, 0, 1, 2, 3, 4, 5, 6]);
    let e = read_err(&b);
    assert_at(&e, "version", 0);
    assert!(e.to_string().contains("FF 00 01"), "{e}");
}

#[test]
fn recording_count_larger_than_the_data() {
    let raw = file(vec![recording("ab", vec![abs_frame(0, identity_cframe())])]);
    let mut b = raw_bytes(&raw);
    // Three recordings of at least 7 bytes cannot fit in the 30 bytes left.
    b[8] = 5;
    let e = read_err(&b);
    assert_at(&e, "recordings", 9);
    assert!(
        matches!(
            e.kind,
            DecodeErrorKind::CountTooLarge {
                count: 5,
                needed: 35,
                available: 30
            }
        ),
        "{e}"
    );
    // Two recordings pass the size guard (14 ≤ 30) but the second is missing.
    b[8] = 2;
    let e = read_err(&b);
    assert_at(&e, "recordings[1].len_map_name", b.len() as u64);
    assert!(
        matches!(
            e.kind,
            DecodeErrorKind::UnexpectedEof {
                needed: 1,
                available: 0
            }
        ),
        "{e}"
    );
}

#[test]
fn frame_count_larger_than_the_data() {
    let raw = file(vec![recording("ab", vec![abs_frame(0, identity_cframe())])]);
    let mut b = raw_bytes(&raw);
    // Frame count at 9 + 1 + 2 = 12: 8 frames of at least 3 bytes do not fit in 21 bytes.
    b[12..14].copy_from_slice(&8u16.to_le_bytes());
    let e = read_err(&b);
    assert_at(&e, "recordings[0].frames", 18);
    assert!(
        matches!(e.kind, DecodeErrorKind::CountTooLarge { count: 8, .. }),
        "{e}"
    );
    // 2 frames pass the guard; the second frame's bitfield is missing.
    b[12..14].copy_from_slice(&2u16.to_le_bytes());
    let e = read_err(&b);
    assert_at(&e, "recordings[0].frames[1].kind", b.len() as u64);
}

#[test]
fn first_frame_must_be_absolute() {
    for first in [
        delta_frame(0, None, None),
        delta_frame(0, Some([1, 2, 3]), None),
        delta_frame(0, None, Some([1, 2, 3])),
        delta_frame(0, Some([1, 2, 3]), Some([4, 5, 6])),
    ] {
        let kind = first.kind;
        let raw = file(vec![
            recording("ok", vec![abs_frame(0, identity_cframe())]),
            recording("Map", vec![first, abs_frame(1, identity_cframe())]),
        ]);
        let b = raw_bytes(&raw);
        // The raw layer accepts it; the reader does not.
        assert!(SnapV13::decode(&b).is_ok());
        let e = read_err(&b);
        // Recording 1 starts at 9 + 7 + 2 + 21 = 39, its first frame at 39 + 7 + 3 = 49.
        assert_at(&e, "recordings[1].frames[0].kind", 49);
        assert!(e.to_string().contains(kind.name()), "{e}");
        // The CLI's inspect path (reconstruct over a decoded raw file) reports the same.
        let again = snap::reconstruct(&SnapV13::decode(&b).unwrap()).unwrap_err();
        assert_eq!(again, e);
    }
}

#[test]
fn unknown_frame_bitfields() {
    for value in [5u8, 0b111, 0x80, 0xFF, 0b1100] {
        let raw = file(vec![recording(
            "Map",
            vec![
                abs_frame(0, identity_cframe()),
                delta_frame(16, Some([1, 2, 3]), None),
                delta_frame(16, None, None),
            ],
        )]);
        let mut b = raw_bytes(&raw);
        // Frame 2 starts at 9 + 7 + 3 + 21 + 9 = 49.
        assert_eq!(b[49], 0);
        b[49] = value;
        let e = read_err(&b);
        assert_at(&e, "recordings[0].frames[2].kind", 49);
        assert!(
            matches!(
                e.kind,
                DecodeErrorKind::UnknownEnum { enum_name: "frame_kind", value: v } if v == i128::from(value)
            ),
            "{e}"
        );
    }
    // An unknown bitfield on the first frame is reported as unknown, not as "not absolute".
    let mut b = raw_bytes(&file(vec![recording(
        "",
        vec![abs_frame(0, identity_cframe())],
    )]));
    b[16] = 0b101;
    let e = read_err(&b);
    assert_at(&e, "recordings[0].frames[0].kind", 16);
    assert!(matches!(
        e.kind,
        DecodeErrorKind::UnknownEnum { value: 5, .. }
    ));
}

#[test]
fn total_duration_must_equal_the_sum_of_dt() {
    let raw = file(vec![
        recording("a", vec![abs_frame(10, identity_cframe())]),
        recording(
            "Map",
            vec![
                abs_frame(0, identity_cframe()),
                delta_frame(16, None, None),
                delta_frame(17, None, None),
            ],
        ),
    ]);
    let mut b = raw_bytes(&raw);
    // Recording 1 starts at 9 + 7 + 1 + 21 = 38; its duration at 38 + 1 + 3 + 2 = 44.
    assert_eq!(&b[44..48], &33u32.to_le_bytes());
    for wrong in [0u32, 32, 34, u32::MAX] {
        b[44..48].copy_from_slice(&wrong.to_le_bytes());
        let e = read_err(&b);
        assert_at(&e, "recordings[1].total_duration_ms", 44);
        let shown = e.to_string();
        assert!(
            shown.contains(&wrong.to_string()) && shown.contains("33"),
            "{shown}"
        );
    }
}

#[test]
fn map_name_must_be_utf8() {
    let raw = file(vec![
        recording("ok", vec![abs_frame(0, identity_cframe())]),
        recording("abcd", vec![abs_frame(0, identity_cframe())]),
    ]);
    let mut b = raw_bytes(&raw);
    // Recording 1 starts at 9 + 7 + 2 + 21 = 39; its name at 40..44.
    assert_eq!(&b[40..44], b"abcd");
    for bad in [
        [b'a', 0xFF, b'c', b'd'],
        [b'a', b'b', b'c', 0xC3],
        [0x80; 4],
    ] {
        b[40..44].copy_from_slice(&bad);
        let e = read_err(&b);
        assert_at(&e, "recordings[1].map_name", 40);
        assert!(
            matches!(
                e.kind,
                DecodeErrorKind::BadString {
                    encoding: "UTF-8",
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn trailing_bytes_are_refused() {
    let b = raw_bytes(&small_raw_file());
    for extra in [&[0u8][..], b"SNAPV1.3", &[4, 0, 0]] {
        let mut long = b.clone();
        long.extend_from_slice(extra);
        let e = read_err(&long);
        // The error belongs to the file as a whole, at the first byte past its end.
        assert!(e.path.is_empty());
        assert_eq!(e.offset, b.len() as u64);
        assert!(
            matches!(e.kind, DecodeErrorKind::TrailingBytes { count } if count == extra.len()),
            "{e}"
        );
        assert!(e.to_string().contains(&format!("byte offset {}", b.len())));
    }
}

#[test]
fn non_finite_absolute_position_is_refused() {
    for (x, z_bits) in [
        (f32::NAN, 3.0f32.to_bits()),
        (f32::INFINITY, 3.0f32.to_bits()),
        (1.0, f32::NEG_INFINITY.to_bits()),
    ] {
        let cf = Cframe {
            x,
            y: 0.0,
            z_bits,
            q: [0; 3],
        };
        let raw = file(vec![recording(
            "ab",
            vec![abs_frame(0, identity_cframe()), abs_frame(1, cf)],
        )]);
        let b = raw_bytes(&raw);
        let e = read_err(&b);
        // Frame 1 starts at 9 + 7 + 2 + 21 = 39; its CFrame at 42.
        assert_at(&e, "recordings[0].frames[1].cframe", 42);
    }
}

#[test]
fn every_single_byte_mutation_of_a_small_file_is_ok_or_err() {
    let b = recorded_small_file();
    let good = snap::read(&b).unwrap();
    assert_eq!(good.len(), 3);
    let mut errors = 0usize;
    for pos in 0..b.len() {
        let orig = b[pos];
        for v in [0x00, 0xFF, 0x80, 0x7F, 0x04, orig ^ 0x01, orig ^ 0x40] {
            if v == orig {
                continue;
            }
            let mut m = b.clone();
            m[pos] = v;
            let outcome = std::panic::catch_unwind(|| match snap::read(&m) {
                Ok(recs) => {
                    // A file that reads must also be usable.
                    for r in &recs {
                        for f in &r.frames {
                            assert!(f.rot.is_finite());
                        }
                        let _ = r.sample_at(0.0);
                        let _ = r.sample_at(r.total_duration_ms as f64 / 2.0);
                    }
                    true
                }
                Err(SnapError::Decode(e)) => {
                    assert!(e.offset <= m.len() as u64);
                    assert!(e.to_string().contains("byte offset"));
                    false
                }
                Err(other) => panic!("not a decode error: {other:?}"),
            });
            match outcome {
                Ok(ok) => errors += usize::from(!ok),
                Err(_) => panic!("reader panicked with byte {pos} set to {v:#04x}"),
            }
        }
    }
    // Most mutations break something; the sweep is not vacuous.
    assert!(
        errors > b.len(),
        "{errors} errors over {} positions",
        b.len()
    );
}

#[test]
fn allocation_bomb_is_stopped_by_the_count_guard() {
    // 255 recordings, the first claiming 65 535 frames, in a 30-byte buffer.
    let mut b = b"SNAPV1.3".to_vec();
    b.push(255);
    b.push(0); // name length
    b.extend_from_slice(&u16::MAX.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    b.resize(30, 0xFF);
    let e = read_err(&b);
    assert_at(&e, "recordings", 9);
    assert!(
        matches!(
            e.kind,
            DecodeErrorKind::CountTooLarge {
                count: 255,
                needed: 1785,
                available: 21
            }
        ),
        "{e}"
    );
    // With one recording the frame count is the one refused.
    b[8] = 1;
    let e = read_err(&b);
    assert_at(&e, "recordings[0].frames", 16);
    assert!(
        matches!(
            e.kind,
            DecodeErrorKind::CountTooLarge {
                count: 65535,
                needed: 196_605,
                available: 14
            }
        ),
        "{e}"
    );
    // A count of 255 with no data at all.
    let e = read_err(b"SNAPV1.3\xFF");
    assert_at(&e, "recordings", 9);
    assert!(
        matches!(
            e.kind,
            DecodeErrorKind::CountTooLarge {
                count: 255,
                available: 0,
                ..
            }
        ),
        "{e}"
    );
    // No count at all.
    let e = read_err(b"SNAPV1.3");
    assert_at(&e, "num_recordings", 8);
}

fn still(n: usize, dt_ms: u32) -> Vec<Sample> {
    (0..n)
        .map(|_| Sample {
            dt_ms,
            pos_studs: Vec3::new(1.0, 2.0, 3.0),
            rot: Quat::IDENTITY,
        })
        .collect()
}

#[test]
fn writer_refuses_dt_over_u16() {
    let mut s = still(5, 16);
    s[3].dt_ms = 70_000;
    let mut rec = Recorder::new();
    let e = encode_err(rec.add_recording("m", &s));
    assert_eq!(e.path.to_string(), "recordings[0].frames[3].dt_ms");
    assert!(
        matches!(&e.kind, EncodeErrorKind::OutOfRange { value, ty: "u16" } if value == "70000"),
        "{e}"
    );
    // The failed recording was not added; 65 535 itself fits.
    s[3].dt_ms = 65_535;
    rec.add_recording("m", &s).unwrap();
    let back = snap::read(&rec.finish().unwrap()).unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].total_duration_ms, 4 * 16 + 65_535);
    // In a later recording the path names that recording.
    s[3].dt_ms = 65_536;
    let e = encode_err(rec.add_recording("n", &s));
    assert_eq!(e.path.to_string(), "recordings[1].frames[3].dt_ms");
}

#[test]
fn writer_refuses_256_recordings() {
    let mut rec = Recorder::new();
    for _ in 0..255 {
        rec.add_recording("", &still(1, 0)).unwrap();
    }
    let bytes = rec.finish().unwrap();
    assert_eq!(bytes[8], 255);
    assert_eq!(snap::read(&bytes).unwrap().len(), 255);
    rec.add_recording("", &still(1, 0)).unwrap();
    let e = encode_err(rec.finish());
    assert_eq!(e.path.to_string(), "num_recordings");
    assert!(
        matches!(&e.kind, EncodeErrorKind::OutOfRange { value, ty: "u8" } if value == "256"),
        "{e}"
    );
}

#[test]
fn writer_refuses_a_300_byte_name() {
    let mut rec = Recorder::new();
    rec.add_recording(&"n".repeat(300), &still(2, 1)).unwrap();
    let e = encode_err(rec.finish());
    assert_eq!(e.path.to_string(), "recordings[0].len_map_name");
    assert!(
        matches!(&e.kind, EncodeErrorKind::OutOfRange { value, ty: "u8" } if value == "300"),
        "{e}"
    );
    // 255 bytes (here 85 three-byte characters) fit.
    let mut rec = Recorder::new();
    let name = "€".repeat(85);
    assert_eq!(name.len(), 255);
    rec.add_recording(&name, &still(2, 1)).unwrap();
    let back = snap::read(&rec.finish().unwrap()).unwrap();
    assert_eq!(back[0].map_name, name);
    // 256 bytes do not.
    let mut rec = Recorder::new();
    rec.add_recording(&format!("{name}x"), &still(2, 1))
        .unwrap();
    let e = encode_err(rec.finish());
    assert_eq!(e.path.to_string(), "recordings[0].len_map_name");
}

#[test]
fn writer_refuses_65536_frames() {
    let mut frames = vec![abs_frame(0, identity_cframe())];
    frames.resize(65_536, delta_frame(0, None, None));
    let raw = file(vec![recording("ok", vec![]), recording("m", frames)]);
    let e = raw.encode().unwrap_err();
    assert_eq!(e.path.to_string(), "recordings[1].num_frames");
    assert!(
        matches!(&e.kind, EncodeErrorKind::OutOfRange { value, ty: "u16" } if value == "65536"),
        "{e}"
    );
}

#[test]
fn writer_refuses_non_finite_samples() {
    let cases: [(Vec3, Quat); 5] = [
        (Vec3::new(f32::NAN, 0.0, 0.0), Quat::IDENTITY),
        (Vec3::new(0.0, f32::INFINITY, 0.0), Quat::IDENTITY),
        (Vec3::new(0.0, 0.0, f32::NEG_INFINITY), Quat::IDENTITY),
        (Vec3::ZERO, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)),
        (Vec3::ZERO, Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
    ];
    for (pos, rot) in cases {
        // On the first frame (absolute) and on a later one (would be a delta).
        for at in [0usize, 2] {
            let mut s = still(4, 16);
            s[at].pos_studs = pos;
            s[at].rot = rot;
            let mut rec = Recorder::new();
            rec.add_recording("ok", &still(1, 0)).unwrap();
            let e = encode_err(rec.add_recording("m", &s));
            assert_eq!(
                e.path.to_string(),
                format!("recordings[1].frames[{at}].cframe"),
                "{pos:?} {rot:?}"
            );
            assert!(matches!(e.kind, EncodeErrorKind::Semantic(_)), "{e}");
        }
    }
}

#[test]
fn raw_writer_refuses_fields_that_contradict_the_kind() {
    let wrong = [
        (
            // Absolute without its CFrame.
            statepack::generated::snap_v1_3::Frame {
                kind: FrameKind::Absolute,
                dt_ms: 0,
                cframe: None,
                pos_delta: None,
                rot_delta: None,
            },
            "cframe",
            "absent",
        ),
        (
            // Absolute with a delta field.
            statepack::generated::snap_v1_3::Frame {
                kind: FrameKind::Absolute,
                dt_ms: 0,
                cframe: Some(identity_cframe()),
                pos_delta: Some([1, 2, 3]),
                rot_delta: None,
            },
            "pos_delta",
            "present",
        ),
        (
            // A delta frame carrying a CFrame.
            statepack::generated::snap_v1_3::Frame {
                kind: FrameKind::DeltaNone,
                dt_ms: 0,
                cframe: Some(identity_cframe()),
                pos_delta: None,
                rot_delta: None,
            },
            "cframe",
            "present",
        ),
        (
            // Rotation bit without the rotation delta.
            statepack::generated::snap_v1_3::Frame {
                kind: FrameKind::DeltaPosRot,
                dt_ms: 0,
                cframe: None,
                pos_delta: Some([1, 2, 3]),
                rot_delta: None,
            },
            "rot_delta",
            "absent",
        ),
        (
            // Position delta without its bit.
            statepack::generated::snap_v1_3::Frame {
                kind: FrameKind::DeltaRot,
                dt_ms: 0,
                cframe: None,
                pos_delta: Some([1, 2, 3]),
                rot_delta: Some([1, 2, 3]),
            },
            "pos_delta",
            "present",
        ),
    ];
    for (frame, field, state) in wrong {
        let raw = file(vec![recording(
            "m",
            vec![abs_frame(0, identity_cframe()), frame],
        )]);
        let e = raw.encode().unwrap_err();
        assert_eq!(
            e.path.to_string(),
            format!("recordings[0].frames[1].{field}")
        );
        assert!(
            matches!(e.kind, EncodeErrorKind::PresenceMismatch { state: s, .. } if s == state),
            "{e}"
        );
    }
    // The first frame too, and the message names the path.
    let raw = file(vec![recording(
        "m",
        vec![statepack::generated::snap_v1_3::Frame {
            kind: FrameKind::Absolute,
            dt_ms: 0,
            cframe: None,
            pos_delta: None,
            rot_delta: None,
        }],
    )]);
    let e = raw.encode().unwrap_err();
    assert_eq!(e.path.to_string(), "recordings[0].frames[0].cframe");
    assert!(e.to_string().contains("recordings[0].frames[0].cframe"));
}
