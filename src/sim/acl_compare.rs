//! The clips of the comparison with the Animation Compression Library (ACL 2.1), with ACL's
//! sizes and worst errors as measured for the issue that introduced animation clips
//! (`docs/formats/anim_clip.md`). `statepack clip versus-acl` prints the table; an ignored test
//! in `tests/anim_clip.rs` checks it.

use std::path::{Path, PathBuf};

use statepack_codecs::anim::Metric;
use statepack_codecs::motion::{self, Clip};

/// One clip of the comparison: label, preparation, metric, ACL's bytes and error.
pub struct AclRow {
    /// What the clip is and how it was prepared.
    pub label: &'static str,
    /// The clip as prepared.
    pub clip: Clip,
    /// The worst error to compress at (ACL's measured worst error, same metric).
    pub metric: Metric,
    /// ACL 2.1's compressed size, bytes.
    pub acl_bytes: usize,
    /// ACL 2.1's worst error, as reported.
    pub acl_error: &'static str,
}

fn fixture(rel: &str) -> Result<PathBuf, String> {
    statepack_fixtures::fixture_path(rel).map_err(|e| e.to_string())
}

fn load(path: &Path) -> Result<Clip, String> {
    motion::load_motion_file(path).map_err(|e| e.to_string())
}

/// The comparison's clips, prepared as the issue describes ACL's runs: the CMU walk BVH at
/// 120 fps and every 2nd frame (60 fps), the CMU 104-30 sjson clip (centimetres), the Fox's
/// three animations (1 unit = 1 cm) and CesiumMan, glTF sampled at its 24 fps keys.
///
/// # Errors
///
/// Always in this build, which leaves out the `gltf` feature: four of the clips are glTF.
#[cfg(not(feature = "gltf"))]
pub fn rows() -> Result<Vec<AclRow>, String> {
    Err(
        "the comparison's Fox and CesiumMan clips are glTF, and this build leaves out the \
         cargo feature `gltf`"
            .to_owned(),
    )
}

/// The comparison's clips, prepared as the issue describes ACL's runs: the CMU walk BVH at
/// 120 fps and every 2nd frame (60 fps), the CMU 104-30 sjson clip (centimetres), the Fox's
/// three animations (1 unit = 1 cm) and CesiumMan, glTF sampled at its 24 fps keys.
///
/// # Errors
///
/// A message when a fixture is missing or does not read.
#[cfg(feature = "gltf")]
pub fn rows() -> Result<Vec<AclRow>, String> {
    let walk = load(&fixture("motion/cmu-131-01-walk.bvh")?)?;
    let mut walk60 = walk.clone();
    walk60.frames = walk.frames.iter().step_by(2).cloned().collect();
    walk60.frame_time_s *= 2.0;
    let c104 = load(&fixture("motion/cmu-104-30.acl.sjson")?)?;
    let fox = std::fs::read(fixture("motion/fox.glb")?).map_err(|e| e.to_string())?;
    let fx = |n: &str| {
        motion::gltf::parse_gltf(
            &fox,
            None,
            &motion::gltf::GltfOptions {
                animation: Some(n.into()),
                metres_per_unit: 0.01,
                fps: None,
            },
        )
        .map_err(|e| e.to_string())
    };
    let cesium = load(&fixture("motion/cesium-man.gltf")?)?;
    let j = |mm: f64| Metric {
        tolerance_m: mm / 1000.0,
        shell_m: 0.0,
    };
    let sh = |mm: f64| Metric {
        tolerance_m: mm / 1000.0,
        shell_m: 0.03,
    };
    Ok(vec![
        AclRow {
            label: "cmu-131-01-walk, 60 fps (every 2nd frame), 31 bones",
            clip: walk60.clone(),
            metric: j(7.22),
            acl_bytes: 15_429,
            acl_error: "7.22 mm joint",
        },
        AclRow {
            label: "cmu-131-01-walk, 120 fps",
            clip: walk,
            metric: j(7.25),
            acl_bytes: 20_262,
            acl_error: "7.25 mm joint",
        },
        AclRow {
            label: "cmu-131-01-walk, 60 fps, 3 cm shell",
            clip: walk60,
            metric: sh(0.17),
            acl_bytes: 46_403,
            acl_error: "0.17 mm shell (0.11 mm joint)",
        },
        AclRow {
            label: "cmu-104-30 (44 bones, 24 fps), 3 cm shell",
            clip: c104.clone(),
            metric: sh(0.225),
            acl_bytes: 24_377,
            acl_error: "0.225 mm shell",
        },
        AclRow {
            label: "cmu-104-30, joints",
            clip: c104,
            metric: j(7.23),
            acl_bytes: 11_978,
            acl_error: "7.23 mm joint",
        },
        AclRow {
            label: "fox Walk (1 unit = 1 cm, 24 fps)",
            clip: fx("Walk")?,
            metric: j(7.23),
            acl_bytes: 1_442,
            acl_error: "7.23 mm joint",
        },
        AclRow {
            label: "fox Run",
            clip: fx("Run")?,
            metric: j(7.14),
            acl_bytes: 1_906,
            acl_error: "7.14 mm joint",
        },
        AclRow {
            label: "fox Survey",
            clip: fx("Survey")?,
            metric: j(5.98),
            acl_bytes: 1_675,
            acl_error: "5.98 mm joint",
        },
        AclRow {
            label: "cesium-man (24 fps)",
            clip: cesium,
            metric: j(7.19),
            acl_bytes: 2_221,
            acl_error: "7.19 mm joint",
        },
    ])
}

/// Short cuts of the CMU 104-30 clip with ACL 2.1's sizes at its worst error on them (the
/// same measurements as [`rows`]): the first 26 frames (1.1 s) and the first 48, each on
/// joints and on a 3 cm shell. What does not shrink with a clip's length (headers, ranges,
/// constants) weighs most here.
///
/// # Errors
///
/// A message when the fixture is missing or does not read.
pub fn short_rows() -> Result<Vec<AclRow>, String> {
    let c104 = load(&fixture("motion/cmu-104-30.acl.sjson")?)?;
    let cut = |n: usize| {
        let mut c = c104.clone();
        c.frames.truncate(n);
        c
    };
    let j = |mm: f64| Metric {
        tolerance_m: mm / 1000.0,
        shell_m: 0.0,
    };
    let sh = |mm: f64| Metric {
        tolerance_m: mm / 1000.0,
        shell_m: 0.03,
    };
    Ok(vec![
        AclRow {
            label: "cmu-104-30, first 26 frames, joints",
            clip: cut(26),
            metric: j(7.09),
            acl_bytes: 1_713,
            acl_error: "7.09 mm joint",
        },
        AclRow {
            label: "cmu-104-30, first 26 frames, 3 cm shell",
            clip: cut(26),
            metric: sh(0.099),
            acl_bytes: 3_211,
            acl_error: "0.099 mm shell",
        },
        AclRow {
            label: "cmu-104-30, first 48 frames, joints",
            clip: cut(48),
            metric: j(7.17),
            acl_bytes: 2_226,
            acl_error: "7.17 mm joint",
        },
        AclRow {
            label: "cmu-104-30, first 48 frames, 3 cm shell",
            clip: cut(48),
            metric: sh(0.108),
            acl_bytes: 4_722,
            acl_error: "0.108 mm shell",
        },
    ])
}
