//! Reader for the JSON clips of the animation keyframe-compression study
//! (`study/study-walk.json`, `study-jump.json`, `study-mocap.json` in the fixtures).
//!
//! # Format
//!
//! ```text
//! { "name":  string,
//!   "fps":   number > 0                        frames per second
//!   "frames": integer >= 0                     frame count F
//!   "bones": [ { "name": string,
//!                "parent": integer,            -1 for a root, else the index of an earlier bone
//!                "rest": [x, y, z] } ... ],    metres, parent space; at least one bone
//!   "translation":   [bone][axis 0..3][frame]  metres, local (parent space)
//!   "rotation_xyzw": [bone][frame][x, y, z, w] unit quaternion, local
//!   "scale":         [bone][axis 0..3][frame]  dimensionless }
//! ```
//!
//! Other keys are ignored. Quaternions are kept exactly as stored (no renormalisation, no sign
//! change); one whose length differs from 1 by more than [`UNIT_TOLERANCE`] is rejected.
//! The clip's `frame_time_s` is `1 / fps`.
//!
//! # Bad input
//!
//! Every shape or type error is a [`MotionError::StudyJson`] naming the JSON path (such as
//! `$.rotation_xyzw[4][17][2]`), what was expected and what was found; malformed JSON is a
//! [`MotionError::JsonSyntax`] with line and column. Frame storage is allocated only after every
//! per-bone array has been checked to hold `frames` entries, so the `frames` field alone cannot
//! make the reader reserve memory.

use glam::{DQuat, DVec3};
use serde_json::{Map, Value};

use super::{Bone, Clip, LocalTransform, MotionError, Skeleton};

/// Largest accepted difference between a stored quaternion's length and 1.
pub const UNIT_TOLERANCE: f64 = 1e-3;

type Result<T> = std::result::Result<T, MotionError>;

/// Parses a study JSON clip (see the [module documentation](self)) into a [`Clip`].
///
/// The clip has the file's `name`, one bone per entry of `bones` (rest translation in metres),
/// `frame_time_s = 1 / fps` seconds and `frames` frames of local transforms.
///
/// # Errors
///
/// [`MotionError::JsonSyntax`] when the text is not JSON; [`MotionError::StudyJson`] naming the
/// JSON path when a field is missing or of the wrong type, an array has the wrong length,
/// `fps` is not positive, a parent index is not `-1` or an earlier bone, or a quaternion is not
/// of unit length.
pub fn parse_study_json(text: &str) -> Result<Clip> {
    let root: Value = serde_json::from_str(text)?;
    parse_study_value(&root)
}

/// Like [`parse_study_json`], from an already parsed JSON value.
///
/// # Errors
///
/// As [`parse_study_json`], except for syntax errors.
pub fn parse_study_value(root: &Value) -> Result<Clip> {
    let top = root.as_object().ok_or_else(|| {
        mismatch(
            "$".into(),
            "an object with name, fps, frames, bones, translation, rotation_xyzw and scale",
            root,
        )
    })?;

    let name = field(top, "name")?;
    let name = name
        .as_str()
        .ok_or_else(|| mismatch("$.name".into(), "a string", name))?
        .to_owned();

    let fps_value = field(top, "fps")?;
    let fps = match fps_value.as_f64() {
        Some(fps) if fps > 0.0 && (1.0 / fps).is_finite() => fps,
        _ => {
            return Err(mismatch(
                "$.fps".into(),
                "a positive number of frames per second",
                fps_value,
            ))
        }
    };

    let frames_value = field(top, "frames")?;
    let frame_count = frames_value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| mismatch("$.frames".into(), "a non-negative integer", frames_value))?;

    let bones = read_bones(top)?;
    let bone_count = bones.len();

    let translation = per_axis_columns(top, "translation", bone_count, frame_count)?;
    let scale = per_axis_columns(top, "scale", bone_count, frame_count)?;
    let rotation = per_frame_rows(top, "rotation_xyzw", bone_count, frame_count)?;

    // Every bone's arrays hold `frame_count` entries (checked above), so the rows are backed by
    // the input.
    let mut rows = Vec::with_capacity(frame_count);
    for f in 0..frame_count {
        let mut row = Vec::with_capacity(bone_count);
        for b in 0..bone_count {
            let vector = |key: &str, columns: &[[&[Value]; 3]]| -> Result<DVec3> {
                let mut xyz = [0.0; 3];
                for (axis, out) in xyz.iter_mut().enumerate() {
                    let value = &columns[b][axis][f];
                    *out = number(value, || format!("$.{key}[{b}][{axis}][{f}]"))?;
                }
                Ok(DVec3::from_array(xyz))
            };
            row.push(LocalTransform {
                translation: vector("translation", &translation)?,
                rotation: quaternion(&rotation[b][f], b, f)?,
                scale: vector("scale", &scale)?,
            });
        }
        rows.push(row);
    }

    let skeleton = Skeleton::new(bones)?;
    Clip::new(name, skeleton, 1.0 / fps, rows)
}

/// Describes a JSON value for an error message.
fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(_) => "a string".into(),
        Value::Array(items) => format!("an array of {} items", items.len()),
        Value::Object(_) => "an object".into(),
    }
}

fn mismatch(path: String, expected: impl Into<String>, found: &Value) -> MotionError {
    MotionError::StudyJson {
        path,
        expected: expected.into(),
        found: describe(found),
    }
}

fn field<'a>(object: &'a Map<String, Value>, key: &str) -> Result<&'a Value> {
    object.get(key).ok_or_else(|| MotionError::StudyJson {
        path: format!("$.{key}"),
        expected: "this field".into(),
        found: "nothing".into(),
    })
}

/// The items of an array with exactly `len` items.
fn array_of(value: &Value, len: usize, path: impl Fn() -> String) -> Result<&[Value]> {
    match value.as_array() {
        Some(items) if items.len() == len => Ok(items),
        _ => Err(mismatch(path(), format!("an array of {len} items"), value)),
    }
}

fn number(value: &Value, path: impl Fn() -> String) -> Result<f64> {
    // serde_json only produces finite numbers.
    value
        .as_f64()
        .ok_or_else(|| mismatch(path(), "a number", value))
}

fn read_bones(top: &Map<String, Value>) -> Result<Vec<Bone>> {
    let list = field(top, "bones")?;
    let items = match list.as_array() {
        Some(items) if !items.is_empty() => items,
        _ => return Err(mismatch("$.bones".into(), "a non-empty array", list)),
    };
    let mut bones = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let object = item.as_object().ok_or_else(|| {
            mismatch(
                format!("$.bones[{index}]"),
                "an object with name, parent and rest",
                item,
            )
        })?;
        let get = |key: &str| {
            object.get(key).ok_or_else(|| MotionError::StudyJson {
                path: format!("$.bones[{index}].{key}"),
                expected: "this field".into(),
                found: "nothing".into(),
            })
        };
        let name = get("name")?;
        let name = name
            .as_str()
            .ok_or_else(|| mismatch(format!("$.bones[{index}].name"), "a string", name))?
            .to_owned();
        let parent_value = get("parent")?;
        let parent = match parent_value.as_i64() {
            Some(-1) => None,
            Some(p) if p >= 0 && (p as u64) < index as u64 => Some(p as usize),
            _ => {
                let expected = if index == 0 {
                    "-1 (the first bone must be a root)".to_owned()
                } else {
                    format!("-1 or the index of an earlier bone (0 to {})", index - 1)
                };
                return Err(mismatch(
                    format!("$.bones[{index}].parent"),
                    expected,
                    parent_value,
                ));
            }
        };
        let rest_value = get("rest")?;
        let rest = array_of(rest_value, 3, || format!("$.bones[{index}].rest"))?;
        let mut xyz = [0.0; 3];
        for (axis, out) in xyz.iter_mut().enumerate() {
            *out = number(&rest[axis], || format!("$.bones[{index}].rest[{axis}]"))?;
        }
        bones.push(Bone {
            name,
            parent,
            rest_translation: DVec3::from_array(xyz),
            rest_rotation: glam::DQuat::IDENTITY,
        });
    }
    Ok(bones)
}

/// Checks the `[bone][axis 0..3][frame]` shape and returns the per-axis frame arrays.
fn per_axis_columns<'a>(
    top: &'a Map<String, Value>,
    key: &str,
    bone_count: usize,
    frame_count: usize,
) -> Result<Vec<[&'a [Value]; 3]>> {
    let bones = array_of(field(top, key)?, bone_count, || format!("$.{key}"))?;
    let mut columns = Vec::with_capacity(bone_count);
    for (b, bone) in bones.iter().enumerate() {
        let axes = array_of(bone, 3, || format!("$.{key}[{b}]"))?;
        let mut three: [&[Value]; 3] = [&[]; 3];
        for (axis, out) in three.iter_mut().enumerate() {
            *out = array_of(&axes[axis], frame_count, || format!("$.{key}[{b}][{axis}]"))?;
        }
        columns.push(three);
    }
    Ok(columns)
}

/// Checks the `[bone][frame]` shape and returns each bone's frame array.
fn per_frame_rows<'a>(
    top: &'a Map<String, Value>,
    key: &str,
    bone_count: usize,
    frame_count: usize,
) -> Result<Vec<&'a [Value]>> {
    let bones = array_of(field(top, key)?, bone_count, || format!("$.{key}"))?;
    bones
        .iter()
        .enumerate()
        .map(|(b, bone)| array_of(bone, frame_count, || format!("$.{key}[{b}]")))
        .collect()
}

fn quaternion(value: &Value, bone: usize, frame: usize) -> Result<DQuat> {
    let path = || format!("$.rotation_xyzw[{bone}][{frame}]");
    let xyzw = array_of(value, 4, path)?;
    let mut c = [0.0; 4];
    for (i, out) in c.iter_mut().enumerate() {
        *out = number(&xyzw[i], || format!("{}[{i}]", path()))?;
    }
    let q = DQuat::from_array(c);
    let length = q.length();
    if !(length - 1.0).abs().le(&UNIT_TOLERANCE) {
        return Err(MotionError::StudyJson {
            path: path(),
            expected: format!("a unit quaternion (length within {UNIT_TOLERANCE} of 1)"),
            found: format!("length {length}"),
        });
    }
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use statepack_fixtures::fixture_for_test;

    const SMALL: &str = r#"{
      "name": "tiny", "fps": 30, "frames": 2,
      "bones": [
        {"name": "root", "parent": -1, "rest": [0, 1, 0]},
        {"name": "tip",  "parent": 0,  "rest": [0, 0.5, 0]}
      ],
      "translation": [ [[0, 0.1], [1, 1], [0, 0]], [[0, 0], [0.5, 0.5], [0, 0]] ],
      "rotation_xyzw": [ [[0, 0, 0, 1], [0, 0, 0, -1]],
                         [[0, 0, 0.6, 0.8], [0, 0, 0, 1]] ],
      "scale": [ [[1, 2], [1, 1], [1, 1]], [[1, 1], [1, 1], [1, 1]] ]
    }"#;

    fn study_error(text: &str) -> (String, String) {
        match parse_study_json(text) {
            Err(e @ MotionError::StudyJson { .. }) => {
                let MotionError::StudyJson { ref path, .. } = e else {
                    unreachable!()
                };
                (path.clone(), e.to_string())
            }
            other => panic!("expected a study JSON error, got {other:?}"),
        }
    }

    #[test]
    fn small_clip() {
        let clip = parse_study_json(SMALL).unwrap();
        assert_eq!(clip.name, "tiny");
        assert_eq!(clip.frame_count(), 2);
        assert!((clip.frame_time_s - 1.0 / 30.0).abs() < 1e-15);
        assert_eq!(clip.skeleton.bones()[1].parent, Some(0));
        assert_eq!(clip.frames[1][0].translation, DVec3::new(0.1, 1.0, 0.0));
        assert_eq!(clip.frames[1][0].scale, DVec3::new(2.0, 1.0, 1.0));
        // Stored sign is kept.
        assert_eq!(clip.frames[1][0].rotation.w, -1.0);
        assert_eq!(clip.frames[0][1].rotation.z, 0.6);
        // Root scale stretches the child offset in frame 1: (0, 0.5, 0) ⊙ (2, 1, 1).
        let world = clip.world_pose(1);
        assert!((world[1].position - DVec3::new(0.1, 1.5, 0.0)).length() < 1e-12);
    }

    #[test]
    fn errors_name_the_json_path() {
        let (path, message) =
            study_error(&SMALL.replace("[[1, 2], [1, 1], [1, 1]]", "[[1, 2], [1, 1], [1, \"x\"]]"));
        assert_eq!(path, "$.scale[0][2][1]", "{message}");
        assert!(
            message.contains("expected a number, found a string"),
            "{message}"
        );

        let (path, message) =
            study_error(&SMALL.replace("[[0, 0.1], [1, 1], [0, 0]]", "[[0, 0.1], [1], [0, 0]]"));
        assert_eq!(path, "$.translation[0][1]");
        assert!(
            message.contains("an array of 2 items, found an array of 1 items"),
            "{message}"
        );

        let (path, _) = study_error(&SMALL.replace("\"parent\": 0,", "\"parent\": 1,"));
        assert_eq!(path, "$.bones[1].parent");
        let (path, _) = study_error(&SMALL.replace("\"parent\": -1,", "\"parent\": -2,"));
        assert_eq!(path, "$.bones[0].parent");

        let (path, message) = study_error(&SMALL.replace("[0, 0, 0, -1]", "[0, 0, 0, 0.5]"));
        assert_eq!(path, "$.rotation_xyzw[0][1]");
        assert!(message.contains("unit quaternion"), "{message}");

        let (path, _) = study_error(&SMALL.replace("[0, 0, 0, -1]", "[0, 0, -1]"));
        assert_eq!(path, "$.rotation_xyzw[0][1]");

        let (path, _) = study_error(&SMALL.replace("\"fps\": 30", "\"fps\": 0"));
        assert_eq!(path, "$.fps");
        let (path, _) = study_error(&SMALL.replace("\"fps\": 30", "\"fps\": 1e-320"));
        assert_eq!(path, "$.fps");
        let (path, _) = study_error(&SMALL.replace("\"frames\": 2", "\"frames\": 2.5"));
        assert_eq!(path, "$.frames");
        let (path, message) = study_error(&SMALL.replace("\"name\": \"tiny\",", ""));
        assert_eq!(path, "$.name");
        assert!(message.contains("found nothing"), "{message}");
        let (path, _) = study_error(&SMALL.replace("\"rest\": [0, 1, 0]", "\"rest\": [0, 1]"));
        assert_eq!(path, "$.bones[0].rest");
        let (path, _) = study_error("[1, 2, 3]");
        assert_eq!(path, "$");

        // A huge frame count is checked against the arrays, not allocated.
        let (path, _) =
            study_error(&SMALL.replace("\"frames\": 2", "\"frames\": 18446744073709551615"));
        assert_eq!(path, "$.translation[0][0]");

        assert!(matches!(
            parse_study_json("{\"name\": "),
            Err(MotionError::JsonSyntax(_))
        ));
        let (path, _) = study_error(
            r#"{"name":"e","fps":60,"frames":9999999999,"bones":[],"translation":[],"rotation_xyzw":[],"scale":[]}"#,
        );
        assert_eq!(path, "$.bones");
    }

    #[test]
    fn study_fixtures_load() {
        for (file, name, frames, moving_scale) in [
            ("study/study-walk.json", "walk", 180, false),
            ("study/study-jump.json", "jump", 120, true),
            ("study/study-mocap.json", "mocap", 180, false),
        ] {
            let Some(path) = fixture_for_test(file) else {
                continue;
            };
            let clip = parse_study_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(clip.name, name);
            assert_eq!(clip.skeleton.len(), 30);
            assert_eq!(clip.frame_count(), frames);
            assert!((clip.fps() - 60.0).abs() < 1e-9);
            assert_eq!(clip.skeleton.bones()[0].name, "hips");
            let root_scale_y: Vec<f64> = clip.frames.iter().map(|r| r[0].scale.y).collect();
            let varies = root_scale_y.iter().any(|&s| s != root_scale_y[0]);
            assert_eq!(varies, moving_scale, "{file}: root scale animated?");
            let world = clip.world_pose(0);
            let head = clip.skeleton.find("head").unwrap();
            println!(
                "{file}: {} frames, head at frame 0: {:.4} m",
                clip.frame_count(),
                world[head].position
            );
            // A 1.8 m character: the head joint sits between 1.3 m and 1.8 m.
            assert!((1.3..1.8).contains(&world[head].position.y));
        }
    }
}
