//! Helpers shared by the SNAP integration tests: building raw files by hand, the demo file,
//! and a few samplers.
#![allow(dead_code)]

use glam::{Quat, Vec3};
use statepack::formats::snap::{self, Recorder, Sample};
use statepack::generated::snap_v1_3::{Cframe, Frame, FrameKind, Recording, SnapV13};

/// An absolute raw frame.
pub fn abs_frame(dt_ms: u16, cframe: Cframe) -> Frame {
    Frame {
        kind: FrameKind::Absolute,
        dt_ms,
        cframe: Some(cframe),
        pos_delta: None,
        rot_delta: None,
    }
}

/// A delta raw frame whose kind matches the optional fields given.
pub fn delta_frame(dt_ms: u16, pos: Option<[i16; 3]>, rot: Option<[i16; 3]>) -> Frame {
    let kind = match (pos.is_some(), rot.is_some()) {
        (false, false) => FrameKind::DeltaNone,
        (true, false) => FrameKind::DeltaPos,
        (false, true) => FrameKind::DeltaRot,
        (true, true) => FrameKind::DeltaPosRot,
    };
    Frame {
        kind,
        dt_ms,
        cframe: None,
        pos_delta: pos,
        rot_delta: rot,
    }
}

/// A plain CFrame: position (1, 2, 3) studs (Z's low bits are zero in f32) with index 3 and
/// the identity rotation.
pub fn identity_cframe() -> Cframe {
    Cframe {
        x: 1.0,
        y: 2.0,
        z_bits: 3.0f32.to_bits() | 3,
        q: [0, 0, 0],
    }
}

/// A raw file with the given recordings.
pub fn file(recordings: Vec<Recording>) -> SnapV13 {
    SnapV13 { recordings }
}

/// A raw recording.
pub fn recording(name: &str, frames: Vec<Frame>) -> Recording {
    Recording {
        map_name: name.to_owned(),
        frames,
    }
}

/// A small valid file with every frame shape: 2 recordings.
pub fn small_raw_file() -> SnapV13 {
    file(vec![
        recording(
            "Crossroads",
            vec![
                abs_frame(0, identity_cframe()),
                delta_frame(16, Some([100, -200, 300]), None),
                delta_frame(17, None, Some([-5000, 12, 7])),
                delta_frame(16, Some([1, 2, 3]), Some([4, 5, 6])),
                delta_frame(16, None, None),
                abs_frame(33, identity_cframe()),
            ],
        ),
        recording("", vec![abs_frame(5, identity_cframe())]),
    ])
}

/// The demo's file: the study walk (generated in code) imported at the default scale.
pub fn demo_file() -> Vec<u8> {
    let clip = statepack_codecs::motion::walk::study_walk_clip();
    snap::import_clip(&clip, snap::DEFAULT_STUDS_PER_METRE)
        .expect("import the study walk")
        .finish()
        .expect("encode the study walk")
}

/// A smooth sample path of `n` frames, 16 ms apart (frame 0 has dt 0).
pub fn smooth_samples(n: usize) -> Vec<Sample> {
    (0..n)
        .map(|i| {
            let t = i as f32;
            Sample {
                dt_ms: if i == 0 { 0 } else { 16 },
                pos_studs: Vec3::new(10.0 + 0.05 * t, 5.0 + (0.1 * t).sin(), -3.0 + 0.02 * t),
                rot: Quat::from_rotation_y(0.01 * t) * Quat::from_rotation_x(0.3),
            }
        })
        .collect()
}

/// A file of a few recordings made by the recorder, with absolute and all delta shapes.
pub fn recorded_small_file() -> Vec<u8> {
    let mut rec = Recorder::new();
    let mut samples = smooth_samples(70);
    // A jump (forced absolute), a pause (timing-only frames) and pure turns.
    samples[20].pos_studs += Vec3::new(30.0, 0.0, 0.0);
    for s in samples.iter_mut().skip(21) {
        s.pos_studs += Vec3::new(30.0, 0.0, 0.0);
    }
    for i in 30..34 {
        samples[i].pos_studs = samples[29].pos_studs;
        samples[i].rot = samples[29].rot;
    }
    for i in 40..44 {
        samples[i].pos_studs = samples[39].pos_studs;
    }
    rec.add_recording("Baseplate", &samples).unwrap();
    rec.add_recording("é", &smooth_samples(5)).unwrap();
    rec.add_recording("", &[]).unwrap();
    rec.finish().unwrap()
}

/// The frame kinds of one recording of a raw file.
pub fn kinds(raw: &SnapV13, rec: usize) -> Vec<FrameKind> {
    raw.recordings[rec].frames.iter().map(|f| f.kind).collect()
}
