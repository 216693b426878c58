//! The study's track container in the hostile-input tests: files written from a cut of the
//! study's walk fixture, and its allocation bombs.

use super::NamedFile;
use statepack::formats::study_tracks::{encode_plan, encode_raw, MAGIC};
use statepack_codecs::keyframe::{plan, PlanOptions};

/// The first 30 frames of `study/study-walk.json` as float32 linear keys and quantised cubic
/// keys at 1 mm, and the first 4 frames raw.
pub fn fixture_files() -> Vec<NamedFile> {
    let Some(path) = statepack_fixtures::fixture_for_test("study/study-walk.json") else {
        return Vec::new();
    };
    let mut clip = statepack_codecs::motion::load_motion_file(&path).expect("read the walk");
    clip.frames.truncate(30);
    let mut out = Vec::new();
    for (name, cubic, quant) in [
        ("study walk 30 frames, linear float32 keys", false, false),
        ("study walk 30 frames, quantised cubic keys", true, true),
    ] {
        let b = encode_plan(&plan(&clip, PlanOptions::at_mm(1.0, cubic, quant))).expect("encode");
        out.push((name.to_owned(), b));
    }
    clip.frames.truncate(4);
    out.push((
        "study walk 4 frames raw".to_owned(),
        encode_raw(&clip).expect("encode raw"),
    ));
    out
}

/// The 16-byte header of a key layout (1 = float, 2 = quantised).
fn header(layout: u8, frames: u16, bones: u16, scalars: u16, rotations: u16) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.push(layout);
    b.push(0);
    b.extend_from_slice(&60u16.to_le_bytes());
    for v in [frames, bones, scalars, rotations] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    b
}

/// Every count at its maximum over nothing, a record claiming 65 535 keys, and the largest
/// files of the smallest records (6-byte quantised constants, 8-byte packed constants).
pub fn bombs() -> Vec<NamedFile> {
    let mut out = Vec::new();
    // Raw: 65 535 frames x 65 535 bones x 10 floats over no bytes.
    let mut b = MAGIC.to_vec();
    b.push(0);
    b.push(0);
    b.extend_from_slice(&60u16.to_le_bytes());
    b.extend_from_slice(&u16::MAX.to_le_bytes());
    b.extend_from_slice(&u16::MAX.to_le_bytes());
    b.extend_from_slice(&0u32.to_le_bytes());
    out.push(("raw 65 535 frames x 65 535 bones, no values".to_owned(), b));
    for layout in [1u8, 2] {
        out.push((
            format!("layout {layout}: 65 535 scalar and rotation records over nothing"),
            header(layout, u16::MAX, u16::MAX, u16::MAX, u16::MAX),
        ));
        let mut b = header(layout, u16::MAX, u16::MAX, 1, 0);
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(&u16::MAX.to_le_bytes());
        out.push((
            format!("layout {layout}: one record claiming 65 535 keys"),
            b,
        ));
    }
    // 65 535 quantised constant scalar records (6 bytes each), ids in order, all frames and
    // bones claimed: everything decodes, the decoder allocates per record.
    let mut b = header(2, u16::MAX, 10_922, u16::MAX, 0);
    for id in 0..u16::MAX {
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0x3c00u16.to_le_bytes());
    }
    out.push(("65 535 quantised constant scalars".to_owned(), b));
    // 65 535 packed constant rotations (8 bytes each).
    let mut b = header(2, u16::MAX, u16::MAX, 0, u16::MAX);
    for bone in 0..u16::MAX {
        b.extend_from_slice(&bone.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
    }
    out.push(("65 535 packed constant rotations".to_owned(), b));
    // 65 535 float32 constant scalars (8 bytes each).
    let mut b = header(1, u16::MAX, 10_922, u16::MAX, 0);
    for id in 0..u16::MAX {
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&1u16.to_le_bytes());
        b.extend_from_slice(&1f32.to_le_bytes());
    }
    out.push(("65 535 float32 constant scalars".to_owned(), b));
    // One quantised scalar with 65 535 keys (4 bytes each), frames 0..65 534.
    let mut b = header(2, u16::MAX, 1, 1, 0);
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&u16::MAX.to_le_bytes());
    b.extend_from_slice(&0f32.to_le_bytes());
    b.extend_from_slice(&1f32.to_le_bytes());
    for f in 0..u16::MAX {
        b.extend_from_slice(&f.to_le_bytes());
        b.extend_from_slice(&f.to_le_bytes());
    }
    out.push(("one quantised scalar with 65 535 keys".to_owned(), b));
    // One packed rotation with 65 535 keys (6 bytes each).
    let mut b = header(2, u16::MAX, 1, 0, 1);
    b.extend_from_slice(&0u16.to_le_bytes());
    b.extend_from_slice(&u16::MAX.to_le_bytes());
    for f in 0..u16::MAX {
        b.extend_from_slice(&f.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
    }
    out.push(("one packed rotation with 65 535 keys".to_owned(), b));
    out
}
