//! The study's "walk" clip, generated in code.
//!
//! The animation keyframe-compression study (`specs/animation-keyframe-compression.txt`) measures
//! its pipeline on a deterministic 30-bone humanoid (a 1.8 m character) walking for 3 s at
//! 60 fps. This module rebuilds that rig and that clip from the study's motion model, so the demo
//! and the tests have a real-shaped input without any file:
//!
//! - rig: [`study_skeleton`], 30 bones with rest offsets in metres (hips 0.95 m above the
//!   origin, legs 0.42 m + 0.40 m, arms 0.28 m + 0.26 m, ...);
//! - clip: [`study_walk_clip`], 180 frames at 60 fps, a 1 Hz gait (two steps per second).
//!
//! # Motion model
//!
//! With `t = frame / 60` seconds and gait phase `p = 2π · t` (radians):
//!
//! - root (hips) translation, metres: `x = 0.020 sin p` (sway), `y = 0.95 + 0.025 sin 2p` (bob at
//!   twice the step frequency), `z = 1.40 t` (forward travel at 1.4 m/s);
//! - every other translation stays at the bone's rest offset, every scale is 1;
//! - rotations are Euler angles in degrees, turned into a quaternion as
//!   `Rx(x) * Ry(y) * Rz(z)` (intrinsic X, then Y, then Z). Left and right limbs use the same
//!   curve half a cycle apart (the right side adds π to the phase). Knees and toes use
//!   `max(0, sin …)`, which puts a genuine corner in the curve at knee lock and toe-off.
//!   Shoulders, fingers, prop, jaw and eyes are never animated (identity rotation).
//!
//! | bone | X (deg) | Y (deg) | Z (deg) |
//! |---|---|---|---|
//! | hips | −4 + 1.5 sin 2p | 3 sin p | 2 sin p |
//! | spine | 2 sin 2p | −2 sin p | 0 |
//! | chest | 1.5 sin 2p | 4 sin(p + π) | 0 |
//! | neck | 0 | −2 sin p | 0 |
//! | head | 1.5 sin 2p | 2 sin p | 0 |
//! | upperarm (L / R) | −8 + 25 sin(p + s) | 0 | +8 / −8 |
//! | forearm | −(20 + 15 sin(p + 0.6 + s)) | 0 | 0 |
//! | hand | 5 sin(p + s) | 0 | 0 |
//! | thigh | 28 sin(p + s) | 0 | 0 |
//! | shin | −(4 + 46 max(0, sin(p + 1.2 + s))) | 0 | 0 |
//! | foot | 12 sin(p + 2.0 + s) | 0 | 0 |
//! | toe | 30 max(0, sin(p + 2.6 + s)) | 0 | 0 |
//! | cape | 6 sin(p − 0.8) | 0 | 3 sin 2p |
//!
//! (`s` = 0 on the left, π on the right.) The study's "mocap" clip adds seeded jitter to this
//! walk and its "jump" clip is a separate model; neither is generated here (their JSON fixtures
//! are read with [`super::study`]).

use std::f64::consts::{PI, TAU};

use glam::{DQuat, DVec3};

use super::{Bone, Clip, LocalTransform, Skeleton};

/// Frame rate of the study's clips, frames per second.
pub const STUDY_FPS: f64 = 60.0;

/// Number of frames of the study's walk clip (3 s at 60 fps).
pub const STUDY_WALK_FRAMES: usize = 180;

/// The study's rig: name, parent index, rest offset from the parent in metres.
const RIG: [(&str, Option<usize>, [f64; 3]); 30] = [
    ("hips", None, [0.0, 0.95, 0.0]),
    ("spine", Some(0), [0.0, 0.12, 0.0]),
    ("chest", Some(1), [0.0, 0.16, 0.0]),
    ("neck", Some(2), [0.0, 0.20, 0.0]),
    ("head", Some(3), [0.0, 0.09, 0.0]),
    ("shoulder.L", Some(2), [0.05, 0.16, 0.0]),
    ("upperarm.L", Some(5), [0.13, 0.0, 0.0]),
    ("forearm.L", Some(6), [0.28, 0.0, 0.0]),
    ("hand.L", Some(7), [0.26, 0.0, 0.0]),
    ("shoulder.R", Some(2), [-0.05, 0.16, 0.0]),
    ("upperarm.R", Some(9), [-0.13, 0.0, 0.0]),
    ("forearm.R", Some(10), [-0.28, 0.0, 0.0]),
    ("hand.R", Some(11), [-0.26, 0.0, 0.0]),
    ("thigh.L", Some(0), [0.09, -0.06, 0.0]),
    ("shin.L", Some(13), [0.0, -0.42, 0.0]),
    ("foot.L", Some(14), [0.0, -0.40, 0.0]),
    ("toe.L", Some(15), [0.0, -0.06, 0.12]),
    ("thigh.R", Some(0), [-0.09, -0.06, 0.0]),
    ("shin.R", Some(17), [0.0, -0.42, 0.0]),
    ("foot.R", Some(18), [0.0, -0.40, 0.0]),
    ("toe.R", Some(19), [0.0, -0.06, 0.12]),
    ("finger1.L", Some(8), [0.06, 0.0, 0.02]),
    ("finger2.L", Some(8), [0.06, 0.0, -0.02]),
    ("finger1.R", Some(12), [-0.06, 0.0, 0.02]),
    ("finger2.R", Some(12), [-0.06, 0.0, -0.02]),
    ("prop_sword", Some(12), [-0.04, 0.0, 0.0]),
    ("jaw", Some(4), [0.0, -0.03, 0.04]),
    ("eye.L", Some(4), [0.03, 0.04, 0.06]),
    ("eye.R", Some(4), [-0.03, 0.04, 0.06]),
    ("cape", Some(2), [0.0, 0.05, -0.08]),
];

/// The study's 30-bone humanoid rig (1.8 m character), rest offsets in metres, parents first.
///
/// Bone 0 is `hips` (the only root, rest position 0.95 m above the origin); the order and names
/// are the study's: hips, spine, chest, neck, head, shoulder/upperarm/forearm/hand .L then .R,
/// thigh/shin/foot/toe .L then .R, finger1/finger2 .L and .R, prop_sword, jaw, eye.L, eye.R,
/// cape.
pub fn study_skeleton() -> Skeleton {
    let bones = RIG
        .iter()
        .map(|&(name, parent, rest)| Bone {
            name: name.to_owned(),
            parent,
            rest_translation: DVec3::from_array(rest),
            rest_rotation: glam::DQuat::IDENTITY,
        })
        .collect();
    // The table is ordered parents first; `Skeleton::new` cannot fail on it.
    Skeleton::new(bones).unwrap_or_default()
}

/// Quaternion for Euler angles in degrees, composed `Rx * Ry * Rz` (X applied last to a vector,
/// i.e. intrinsic X, then Y, then Z). The result has `w ≥ 0` for the angles used here, matching
/// the sign the study stores.
fn euler_xyz_deg(x: f64, y: f64, z: f64) -> DQuat {
    DQuat::from_rotation_x(x.to_radians())
        * DQuat::from_rotation_y(y.to_radians())
        * DQuat::from_rotation_z(z.to_radians())
}

/// Euler angles (degrees, X/Y/Z) of an animated bone at gait phase `p` (radians); `None` for
/// bones that never move.
fn walk_angles_deg(name: &str, p: f64) -> Option<[f64; 3]> {
    let (base, side) = match name.rsplit_once('.') {
        Some((base, "L")) => (base, 0.0),
        Some((base, "R")) => (base, PI),
        _ => (name, 0.0),
    };
    let mirror = if side == 0.0 { 1.0 } else { -1.0 };
    let knee = |offset: f64| (p + offset + side).sin().max(0.0);
    let angles = match base {
        "hips" => [-4.0 + 1.5 * (2.0 * p).sin(), 3.0 * p.sin(), 2.0 * p.sin()],
        "spine" => [2.0 * (2.0 * p).sin(), -2.0 * p.sin(), 0.0],
        "chest" => [1.5 * (2.0 * p).sin(), 4.0 * (p + PI).sin(), 0.0],
        "neck" => [0.0, -2.0 * p.sin(), 0.0],
        "head" => [1.5 * (2.0 * p).sin(), 2.0 * p.sin(), 0.0],
        "upperarm" => [-8.0 + 25.0 * (p + side).sin(), 0.0, 8.0 * mirror],
        "forearm" => [-(20.0 + 15.0 * (p + 0.6 + side).sin()), 0.0, 0.0],
        "hand" => [5.0 * (p + side).sin(), 0.0, 0.0],
        "thigh" => [28.0 * (p + side).sin(), 0.0, 0.0],
        "shin" => [-(4.0 + 46.0 * knee(1.2)), 0.0, 0.0],
        "foot" => [12.0 * (p + 2.0 + side).sin(), 0.0, 0.0],
        "toe" => [30.0 * knee(2.6), 0.0, 0.0],
        "cape" => [6.0 * (p - 0.8).sin(), 0.0, 3.0 * (2.0 * p).sin()],
        _ => return None,
    };
    Some(angles)
}

/// Local transforms of every bone of [`study_skeleton`] at `frame` of the walk.
fn walk_pose(skeleton: &Skeleton, frame: usize) -> Vec<LocalTransform> {
    let t = frame as f64 / STUDY_FPS;
    let p = TAU * t;
    skeleton
        .bones()
        .iter()
        .enumerate()
        .map(|(index, bone)| {
            let mut local = LocalTransform::rest(bone);
            if index == 0 {
                local.translation =
                    DVec3::new(0.020 * p.sin(), 0.95 + 0.025 * (2.0 * p).sin(), 1.40 * t);
            }
            if let Some([x, y, z]) = walk_angles_deg(&bone.name, p) {
                local.rotation = euler_xyz_deg(x, y, z);
            }
            local
        })
        .collect()
}

/// The study's walk clip: [`study_skeleton`], 180 frames at 60 fps (3 s, frame time 1/60 s),
/// named `walk`.
///
/// Root translation in metres, rotations as unit quaternions with the study's sign (`w > 0`),
/// scale 1 everywhere; see the [module documentation](self) for every curve. Matches the
/// fixture `study/study-walk.json` to within 1e-9 in every value.
pub fn study_walk_clip() -> Clip {
    let skeleton = study_skeleton();
    let frames = (0..STUDY_WALK_FRAMES)
        .map(|f| walk_pose(&skeleton, f))
        .collect();
    Clip {
        name: "walk".to_owned(),
        skeleton,
        frame_time_s: 1.0 / STUDY_FPS,
        frames,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::motion::study::parse_study_json;
    use statepack_fixtures::fixture_for_test;

    #[test]
    fn shape_and_units() {
        let clip = study_walk_clip();
        assert_eq!(clip.skeleton.len(), 30);
        assert_eq!(clip.frame_count(), 180);
        // 179 frame times from the first frame to the last.
        assert!((clip.duration_s() - 179.0 / 60.0).abs() < 1e-12);
        // Passes the same checks as any other clip.
        let checked = Clip::new(
            clip.name.clone(),
            clip.skeleton.clone(),
            clip.frame_time_s,
            clip.frames.clone(),
        )
        .unwrap();
        assert_eq!(checked, clip);
        // Root travels 1.4 m/s forward.
        let last = clip.frames[179][0].translation;
        assert!((last.z - 1.4 * 179.0 / 60.0).abs() < 1e-12);
        // Head about 1.5 m up at frame 0.
        let head = clip.skeleton.find("head").unwrap();
        let y = clip.world_pose(0)[head].position.y;
        assert!((1.4..1.7).contains(&y), "{y}");
        // Never-animated bones keep identity rotations.
        let jaw = clip.skeleton.find("jaw").unwrap();
        assert!(clip
            .frames
            .iter()
            .all(|r| r[jaw].rotation == DQuat::IDENTITY));
    }

    #[test]
    fn euler_composition_is_x_then_y_then_z() {
        let q = euler_xyz_deg(30.0, 40.0, 50.0);
        // The study's closed form for Rx * Ry * Rz (half angles).
        let (hx, hy, hz) = (15f64.to_radians(), 20f64.to_radians(), 25f64.to_radians());
        let (sx, cx, sy, cy, sz, cz) = (hx.sin(), hx.cos(), hy.sin(), hy.cos(), hz.sin(), hz.cos());
        let expected = DQuat::from_xyzw(
            sx * cy * cz + cx * sy * sz,
            cx * sy * cz - sx * cy * sz,
            cx * cy * sz + sx * sy * cz,
            cx * cy * cz - sx * sy * sz,
        );
        assert!(q.abs_diff_eq(expected, 1e-15));
    }

    #[test]
    fn matches_the_study_fixture() {
        let Some(path) = fixture_for_test("study/study-walk.json") else {
            return;
        };
        let fixture = parse_study_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let clip = study_walk_clip();
        assert_eq!(clip.name, fixture.name);
        assert_eq!(clip.frame_count(), fixture.frame_count());
        assert!((clip.frame_time_s - fixture.frame_time_s).abs() < 1e-15);
        assert_eq!(clip.skeleton.len(), fixture.skeleton.len());
        for (ours, theirs) in clip.skeleton.bones().iter().zip(fixture.skeleton.bones()) {
            assert_eq!(ours.name, theirs.name);
            assert_eq!(ours.parent, theirs.parent, "{}", ours.name);
            assert!(
                (ours.rest_translation - theirs.rest_translation)
                    .abs()
                    .max_element()
                    < 1e-12,
                "{}",
                ours.name
            );
        }
        const TOLERANCE: f64 = 1e-9;
        let mut worst = 0.0f64;
        for (f, (ours, theirs)) in clip.frames.iter().zip(&fixture.frames).enumerate() {
            for (b, (a, e)) in ours.iter().zip(theirs).enumerate() {
                let name = &clip.skeleton.bones()[b].name;
                // Quaternions are compared component by component, sign included: the fixture
                // stores the generator's quaternions as produced.
                let diffs = [
                    (a.translation - e.translation).abs().max_element(),
                    (a.rotation.xyz() - e.rotation.xyz())
                        .abs()
                        .max_element()
                        .max((a.rotation.w - e.rotation.w).abs()),
                    (a.scale - e.scale).abs().max_element(),
                ];
                for (what, diff) in ["translation", "rotation", "scale"].iter().zip(diffs) {
                    worst = worst.max(diff);
                    assert!(
                        diff <= TOLERANCE,
                        "frame {f}, bone {b} ({name}): {what} differs by {diff:e}"
                    );
                }
            }
        }
        println!("study walk: largest difference from the fixture {worst:e}");
    }
}
