//! Motion input as one model: a [`Skeleton`] plus, per frame, one [`LocalTransform`] per bone.
//!
//! Every motion source is read into a [`Clip`]:
//!
//! - [`bvh`]: Biovision hierarchy files (own parser, [`bvh::parse_bvh`]),
//! - [`study`]: the JSON clips of the animation keyframe-compression study
//!   ([`study::parse_study_json`]),
//! - [`acl`]: the Animation Compression Library's `.acl.sjson` clips (own parser,
//!   [`acl::parse_acl_sjson`]),
//! - [`gltf`]: glTF 2.0 skins and animations ([`gltf::parse_gltf`], resampled to a fixed rate),
//! - [`walk`]: the study's walk clip generated in code ([`walk::study_walk_clip`]).
//!
//! [`load_motion_file`] picks the reader from a file's extension; [`load_motion_file_with`]
//! also takes the file's length unit ([`LoadOptions::metres_per_unit`]; defaults per format in
//! [`default_metres_per_unit`]: BVH, study JSON and glTF metres, ACL centimetres), and
//! [`height_warning`] says when a figure's size suggests the unit is wrong.
//!
//! # Units and conventions
//!
//! Distances are metres, times seconds, angles radians unless a name says degrees. Numbers are
//! `f64` ([`glam::DVec3`], [`glam::DQuat`]). Quaternions rotate column vectors and compose like
//! matrices: `a * b` applies `b` first.
//!
//! Local transforms live in the parent's space. [`forward_kinematics`] follows the study's
//! convention: a root's world transform is its local translation and rotation; for a child `b`
//! of parent `p`,
//!
//! ```text
//! position_b = position_p + rotation_p * (translation_b ⊙ scale_p)
//! rotation_b = rotation_p * rotation_b_local
//! ```
//!
//! where `⊙` is the componentwise product and `scale_p` is the parent's *local* scale. Scale
//! does not accumulate down the chain and never affects rotations.

pub mod acl;
pub mod bvh;
#[cfg(feature = "gltf")]
pub mod gltf;
pub mod study;
pub mod walk;

use std::path::{Path, PathBuf};

use glam::{DQuat, DVec3};
use serde::{Deserialize, Serialize};

pub use bvh::parse_bvh;
pub use study::parse_study_json;
pub use walk::{study_skeleton, study_walk_clip};

/// What went wrong while reading or building motion.
///
/// Every variant says where (line number, JSON path, bone index or file) and what was expected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MotionError {
    /// A BVH file does not follow the grammar or holds a bad value.
    #[error("BVH line {line}: expected {expected}, found {found}")]
    Bvh {
        /// 1-based line number in the text (one past the last line for a premature end).
        line: usize,
        /// What the parser wanted at that point.
        expected: String,
        /// What it got (shortened to a few dozen characters), or `end of file`.
        found: String,
    },
    /// A study JSON clip is valid JSON but not the study's shape.
    #[error("study JSON at {path}: expected {expected}, found {found}")]
    StudyJson {
        /// JSON path of the offending value, such as `translation[3][1][57]`.
        path: String,
        /// What the value should have been.
        expected: String,
        /// What it was (a JSON type, a length or a number).
        found: String,
    },
    /// A study JSON clip is not valid JSON at all (the message has line and column).
    #[error("study JSON is not valid JSON: {0}")]
    JsonSyntax(#[from] serde_json::Error),
    /// A skeleton is inconsistent.
    #[error("skeleton bone {index} ({name:?}): {problem}")]
    Skeleton {
        /// Index of the offending bone.
        index: usize,
        /// Its name.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A clip's frames or frame time do not fit its skeleton.
    #[error("clip {clip:?}: {problem}")]
    Clip {
        /// The clip's name.
        clip: String,
        /// What is wrong with it, naming the frame and bone where there is one.
        problem: String,
    },
    /// A motion file could not be read.
    ///
    /// The message holds the underlying error's text, so it is not repeated as a `source`
    /// (an error chain printed in full would show it twice).
    #[error("cannot read {}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        error: std::io::Error,
    },
    /// A motion file has an extension no reader handles.
    #[error(
        "cannot load {}: unsupported extension {extension:?}; supported: {}",
        path.display(),
        SUPPORTED_EXTENSIONS
    )]
    UnsupportedFormat {
        /// The file.
        path: PathBuf,
        /// Its extension as found (empty when it has none).
        extension: String,
    },
    /// A motion file was read but its content is bad; `error` says where inside it (its
    /// text is part of this message, not repeated as a `source`).
    #[error("cannot load motion {}: {error}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// The error inside the file.
        error: Box<MotionError>,
    },
    /// A length unit (metres per file unit) that is not a finite positive number.
    #[error("{option} must be a finite positive number of metres per file unit, not {value}")]
    Unit {
        /// The option or field that gave the unit (`--unit-m`).
        option: String,
        /// The value given.
        value: f64,
    },
}

/// The extensions [`load_motion_file`] understands, as shown in its error message.
#[cfg(feature = "gltf")]
pub const SUPPORTED_EXTENSIONS: &str =
    ".bvh (Biovision hierarchy), .json (study clip), .sjson (ACL clip, centimetres), \
     .gltf/.glb (first animation, metres)";

/// The extensions [`load_motion_file`] understands, as shown in its error message (a build
/// without the `gltf` feature reads no glTF).
#[cfg(not(feature = "gltf"))]
pub const SUPPORTED_EXTENSIONS: &str =
    ".bvh (Biovision hierarchy), .json (study clip), .sjson (ACL clip, centimetres); \
     .gltf/.glb need the cargo feature `gltf`";

/// Metres per unit of `.acl.sjson` clips read by [`load_motion_file`] (the CMU conversions
/// are in centimetres).
pub const ACL_METRES_PER_UNIT: f64 = 0.01;

/// One bone of a [`Skeleton`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bone {
    /// Name as given by the source (not required to be unique).
    pub name: String,
    /// Index of the parent bone, which is always smaller than this bone's index; `None` for a
    /// root.
    pub parent: Option<usize>,
    /// Rest (bind) offset from the parent, in the parent's space, metres. For a root it is the
    /// rest position in world space.
    pub rest_translation: DVec3,
    /// Rest (bind) rotation relative to the parent; a unit quaternion. Identity for formats
    /// whose rest pose has no rotation (BVH's `OFFSET`, the study's clips); glTF's node
    /// rotation, ACL's `bind_rotation`. Missing in serialized data: identity.
    #[serde(default = "identity_rotation")]
    pub rest_rotation: DQuat,
}

fn identity_rotation() -> DQuat {
    DQuat::IDENTITY
}

/// A bone hierarchy in which every parent precedes its children.
///
/// Built with [`Skeleton::new`], which checks the ordering, so every consumer can walk bones
/// front to back and find each parent already done. Several roots are allowed.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Skeleton {
    bones: Vec<Bone>,
}

impl Skeleton {
    /// Builds a skeleton from bones listed parents first.
    ///
    /// # Errors
    ///
    /// [`MotionError::Skeleton`] naming the first bone whose parent index is not smaller than
    /// its own index, or whose rest translation or rest rotation is not finite, or whose rest
    /// rotation is not a unit quaternion (length off 1 by more than 1e-6).
    pub fn new(bones: Vec<Bone>) -> Result<Self, MotionError> {
        for (index, bone) in bones.iter().enumerate() {
            if let Some(parent) = bone.parent {
                if parent >= index {
                    return Err(MotionError::Skeleton {
                        index,
                        name: bone.name.clone(),
                        problem: format!(
                            "parent index {parent} does not precede the bone (parents must come \
                             before their children)"
                        ),
                    });
                }
            }
            if !bone.rest_translation.is_finite() {
                return Err(MotionError::Skeleton {
                    index,
                    name: bone.name.clone(),
                    problem: format!("rest translation {} is not finite", bone.rest_translation),
                });
            }
            let q = bone.rest_rotation;
            if !q.is_finite() || (q.length() - 1.0).abs() > 1e-6 {
                return Err(MotionError::Skeleton {
                    index,
                    name: bone.name.clone(),
                    problem: format!("rest rotation {q} is not a finite unit quaternion"),
                });
            }
        }
        Ok(Self { bones })
    }

    /// The bones, parents before children.
    pub fn bones(&self) -> &[Bone] {
        &self.bones
    }

    /// Number of bones.
    pub fn len(&self) -> usize {
        self.bones.len()
    }

    /// True when the skeleton has no bones.
    pub fn is_empty(&self) -> bool {
        self.bones.is_empty()
    }

    /// Index of the first bone called `name`, if any.
    pub fn find(&self, name: &str) -> Option<usize> {
        self.bones.iter().position(|b| b.name == name)
    }

    /// The rest pose: each bone's rest translation and rest rotation, unit scale.
    pub fn rest_pose(&self) -> Vec<LocalTransform> {
        self.bones.iter().map(LocalTransform::rest).collect()
    }

    /// Consumes the skeleton and returns its bones.
    pub fn into_bones(self) -> Vec<Bone> {
        self.bones
    }
}

/// A bone's transform relative to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LocalTransform {
    /// Offset from the parent, in the parent's space, metres.
    pub translation: DVec3,
    /// Rotation relative to the parent; a unit quaternion.
    pub rotation: DQuat,
    /// Scale factors per axis (dimensionless, 1 = unscaled). In forward kinematics a bone's
    /// scale stretches its children's translations (see [`forward_kinematics`]).
    pub scale: DVec3,
}

impl LocalTransform {
    /// Zero translation, identity rotation, unit scale.
    pub const IDENTITY: Self = Self {
        translation: DVec3::ZERO,
        rotation: DQuat::IDENTITY,
        scale: DVec3::ONE,
    };

    /// The bone's rest transform: its rest translation and rest rotation, unit scale.
    pub fn rest(bone: &Bone) -> Self {
        Self {
            translation: bone.rest_translation,
            rotation: bone.rest_rotation,
            ..Self::IDENTITY
        }
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

impl Default for LocalTransform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

/// A bone's placement in world space, as computed by [`forward_kinematics`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorldTransform {
    /// Joint position, metres.
    pub position: DVec3,
    /// Accumulated rotation (the product of the local rotations from the root down).
    pub rotation: DQuat,
}

/// A sampled animation: a skeleton and, per frame, one local transform per bone.
///
/// Frames are evenly spaced `frame_time_s` apart, frame 0 at time 0. [`Clip::new`] checks the
/// shape; the fields stay public for easy reading, and the methods stay panic-free even if they
/// are later edited into an inconsistent state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clip {
    /// Name of the clip (from the source; a file's stem for BVH).
    pub name: String,
    /// The bones every frame refers to.
    pub skeleton: Skeleton,
    /// Time between consecutive frames, seconds (> 0).
    pub frame_time_s: f64,
    /// Local transforms, `[frame][bone]`; every row has `skeleton.len()` entries.
    pub frames: Vec<Vec<LocalTransform>>,
}

impl Clip {
    /// Builds a clip after checking that it is consistent.
    ///
    /// # Errors
    ///
    /// [`MotionError::Clip`] when `frame_time_s` is not finite and positive, when a frame does
    /// not have exactly one transform per bone, or when a transform holds a non-finite number
    /// (the message names frame and bone).
    pub fn new(
        name: impl Into<String>,
        skeleton: Skeleton,
        frame_time_s: f64,
        frames: Vec<Vec<LocalTransform>>,
    ) -> Result<Self, MotionError> {
        let name = name.into();
        let fail = |problem: String| MotionError::Clip {
            clip: name.clone(),
            problem,
        };
        if !(frame_time_s.is_finite() && frame_time_s > 0.0) {
            return Err(fail(format!(
                "frame time {frame_time_s} s is not a finite positive number"
            )));
        }
        for (f, row) in frames.iter().enumerate() {
            if row.len() != skeleton.len() {
                return Err(fail(format!(
                    "frame {f} has {} transforms, the skeleton has {} bones",
                    row.len(),
                    skeleton.len()
                )));
            }
            if let Some(b) = row.iter().position(|t| !t.is_finite()) {
                return Err(fail(format!(
                    "frame {f}, bone {b}: transform holds a non-finite number"
                )));
            }
        }
        Ok(Self {
            name,
            skeleton,
            frame_time_s,
            frames,
        })
    }

    /// Number of frames (may be 0).
    pub fn frame_count(&self) -> usize {
        self.frames.len()
    }

    /// Frames per second, `1 / frame_time_s`.
    pub fn fps(&self) -> f64 {
        1.0 / self.frame_time_s
    }

    /// Length of the clip in seconds: the time from its first frame to its last,
    /// `(frame_count − 1) × frame_time_s` (so the study's 180-frame walk at 60 fps lasts
    /// 2.983 s, and a clip of one frame or none lasts 0 s). A rate per second of motion (bytes
    /// per second, keys per second) divides by this.
    pub fn duration_s(&self) -> f64 {
        self.frames.len().saturating_sub(1) as f64 * self.frame_time_s
    }

    /// The local transforms of frame `frame`, or `None` past the end.
    pub fn frame(&self, frame: usize) -> Option<&[LocalTransform]> {
        self.frames.get(frame).map(Vec::as_slice)
    }

    /// World transforms of every bone at frame `frame` (one per bone, skeleton order).
    ///
    /// A frame index past the end holds the last frame, as playback does after a clip ends; a
    /// clip without frames gives the skeleton's rest pose.
    pub fn world_pose(&self, frame: usize) -> Vec<WorldTransform> {
        let last = self.frames.len().checked_sub(1);
        match last {
            Some(last) => forward_kinematics(&self.skeleton, &self.frames[frame.min(last)]),
            None => forward_kinematics(&self.skeleton, &self.skeleton.rest_pose()),
        }
    }
}

/// World transforms of every bone from local transforms (the study's convention, see the
/// [module documentation](self)).
///
/// `locals[i]` belongs to `skeleton.bones()[i]`. The result always has `skeleton.len()`
/// entries: a bone without a local transform (when `locals` is shorter) is taken at its rest
/// transform, and extra entries of `locals` are ignored. Positions are metres in the space the
/// roots live in.
pub fn forward_kinematics(skeleton: &Skeleton, locals: &[LocalTransform]) -> Vec<WorldTransform> {
    let mut world: Vec<WorldTransform> = Vec::with_capacity(skeleton.len());
    for (index, bone) in skeleton.bones().iter().enumerate() {
        let local = locals
            .get(index)
            .copied()
            .unwrap_or_else(|| LocalTransform::rest(bone));
        // Skeleton::new guarantees parent < index, so the parent is already in `world`.
        let parent = bone
            .parent
            .and_then(|p| world.get(p).copied().map(|w| (p, w)));
        let placed = match parent {
            None => WorldTransform {
                position: local.translation,
                rotation: local.rotation,
            },
            Some((p, parent_world)) => {
                let parent_scale = locals.get(p).map_or(DVec3::ONE, |l| l.scale);
                WorldTransform {
                    position: parent_world.position
                        + parent_world.rotation * (local.translation * parent_scale),
                    rotation: parent_world.rotation * local.rotation,
                }
            }
        };
        world.push(placed);
    }
    world
}

/// Reads a motion file into a [`Clip`] with the default options (each format's own length
/// unit, the first glTF animation at its own key rate); see [`load_motion_file_with`].
///
/// # Errors
///
/// As [`load_motion_file_with`].
pub fn load_motion_file(path: &Path) -> Result<Clip, MotionError> {
    load_motion_file_with(path, &LoadOptions::default())
}

/// How [`load_motion_file_with`] reads a motion file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadOptions {
    /// Metres per distance unit of the file; `None` takes the format's default
    /// ([`default_metres_per_unit`]: BVH, study JSON and glTF metres, ACL centimetres). Must be
    /// finite and positive.
    pub metres_per_unit: Option<f64>,
    /// glTF: the animation to read by name (`None`: the first). Ignored by other formats.
    pub animation: Option<String>,
    /// glTF: the sampling rate in frames per second (`None`: the animation's own key rate).
    /// Ignored by other formats, which keep the file's own frames.
    pub fps: Option<f64>,
}

/// The name of a motion file's format, from its extension (`"BVH"`, `"study JSON"`,
/// `"ACL sjson"`, `"glTF"` with the `gltf` feature), or `None` for an extension no reader
/// handles.
pub fn format_name(path: &Path) -> Option<&'static str> {
    match extension_of(path).as_str() {
        "bvh" => Some("BVH"),
        "json" => Some("study JSON"),
        "sjson" => Some("ACL sjson"),
        #[cfg(feature = "gltf")]
        "gltf" | "glb" => Some("glTF"),
        _ => None,
    }
}

/// Metres per distance unit that [`load_motion_file_with`] assumes for a file when no unit is
/// given: 0.01 (centimetres, [`ACL_METRES_PER_UNIT`]) for `.sjson`, 1 (metres) for `.bvh`,
/// study `.json`, `.gltf` and `.glb` (glTF's own unit is the metre).
pub fn default_metres_per_unit(path: &Path) -> f64 {
    if extension_of(path) == "sjson" {
        ACL_METRES_PER_UNIT
    } else {
        1.0
    }
}

/// Checks a length unit given as `option`: `Ok(value)` when it is finite and positive.
///
/// # Errors
///
/// [`MotionError::Unit`] for zero, a negative number, NaN or an infinity.
pub fn check_metres_per_unit(option: &str, value: f64) -> Result<f64, MotionError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(MotionError::Unit {
            option: option.to_owned(),
            value,
        })
    }
}

fn extension_of(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

/// Reads a motion file into a [`Clip`], choosing the reader by extension (any ASCII case):
///
/// - `.bvh`: [`bvh::parse_bvh`]; the clip is named after the file's stem,
/// - `.json`: [`study::parse_study_json`] (the study's clip format),
/// - `.sjson`: [`acl::parse_acl_sjson`],
/// - `.gltf`, `.glb`: [`gltf::parse_gltf`] (buffers relative to the file).
///
/// Every distance (rest offsets and animated translations) is multiplied by
/// `opts.metres_per_unit`, or by the format's default ([`default_metres_per_unit`]) when it
/// is `None`, so the clip is in metres.
///
/// # Errors
///
/// [`MotionError::Unit`] for a unit that is not finite and positive,
/// [`MotionError::UnsupportedFormat`] for any other extension (the message lists the supported
/// ones), [`MotionError::Io`] when the file cannot be read (as UTF-8 text for the text
/// formats), and [`MotionError::InFile`] wrapping the reader's error (with line number or JSON
/// path) when the content is bad.
pub fn load_motion_file_with(path: &Path, opts: &LoadOptions) -> Result<Clip, MotionError> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let kind = extension.to_ascii_lowercase();
    if format_name(path).is_none() {
        return Err(MotionError::UnsupportedFormat {
            path: path.to_owned(),
            extension,
        });
    }
    let unit = match opts.metres_per_unit {
        Some(u) => check_metres_per_unit("the length unit", u)?,
        None => default_metres_per_unit(path),
    };
    let in_file = |error: MotionError| MotionError::InFile {
        path: path.to_owned(),
        error: Box::new(error),
    };
    let stem = || {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    #[cfg(feature = "gltf")]
    if kind == "gltf" || kind == "glb" {
        let bytes = std::fs::read(path).map_err(|error| MotionError::Io {
            path: path.to_owned(),
            error,
        })?;
        let gopts = gltf::GltfOptions {
            animation: opts.animation.clone(),
            metres_per_unit: unit,
            fps: opts.fps,
        };
        let mut clip = gltf::parse_gltf(&bytes, path.parent(), &gopts).map_err(in_file)?;
        if clip.name.is_empty() {
            clip.name = stem();
        }
        return Ok(clip);
    }
    let text = std::fs::read_to_string(path).map_err(|error| MotionError::Io {
        path: path.to_owned(),
        error,
    })?;
    if kind == "sjson" {
        let mut clip = acl::parse_acl_sjson(&text, unit).map_err(in_file)?;
        if clip.name.is_empty() {
            clip.name = stem();
        }
        return Ok(clip);
    }
    let mut clip = if kind == "bvh" {
        let mut clip = parse_bvh(&text).map_err(in_file)?;
        clip.name = stem();
        clip
    } else {
        parse_study_json(&text).map_err(in_file)?
    };
    if unit != 1.0 {
        clip.scale_lengths(unit);
    }
    Ok(clip)
}

/// The range of heights, metres, that a human-scale figure is expected to have; outside it
/// [`height_warning`] suspects a wrong length unit.
pub const HUMAN_HEIGHT_RANGE_M: (f64, f64) = (0.3, 3.0);

/// The height, metres, that [`height_warning`] aims its suggested unit at: an adult's.
pub const TYPICAL_FIGURE_HEIGHT_M: f64 = 1.7;

/// Skeletons with fewer bones than this are not taken for a figure by [`height_warning`]
/// (test rigs of two or three bones have no expected size).
pub const FIGURE_MIN_BONES: usize = 8;

/// The size of the figure in a clip, metres: the largest extent along one world axis of its
/// joints in the first frame (the rest pose when there are no frames). For a standing human
/// this is the height from the feet to the head.
pub fn figure_height_m(clip: &Clip) -> f64 {
    let pose = clip.world_pose(0);
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    for w in &pose {
        lo = lo.min(w.position);
        hi = hi.max(w.position);
    }
    if pose.is_empty() {
        return 0.0;
    }
    (hi - lo).max_element()
}

/// A warning when a clip read with `metres_per_unit` has a figure ([`figure_height_m`], for
/// skeletons of at least [`FIGURE_MIN_BONES`] bones) outside [`HUMAN_HEIGHT_RANGE_M`]: the
/// computed height, the unit used, and the value of `option` (the command's unit option, such
/// as `--unit-m`) to try: of centimetres, millimetres, inches, feet and metres (the unit used
/// left out), the one that gives a height inside the range nearest (by ratio) to
/// [`TYPICAL_FIGURE_HEIGHT_M`], or else the unit that makes the figure that tall. The range
/// spans a factor of ten, so several units often fit (a 1.7-unit figure is 0.52 m in feet and
/// 1.7 m in metres; a 68-unit one 0.68 m in centimetres and 1.73 m in inches): the nearest is
/// the likely one. `None` when the size looks right.
pub fn height_warning(clip: &Clip, metres_per_unit: f64, option: &str) -> Option<String> {
    if clip.skeleton.len() < FIGURE_MIN_BONES {
        return None;
    }
    let h = figure_height_m(clip);
    let (lo, hi) = HUMAN_HEIGHT_RANGE_M;
    if !h.is_finite() || (lo..=hi).contains(&h) || h == 0.0 {
        return None;
    }
    let file_units = h / metres_per_unit;
    // Of the common units that give a figure of human size, the one nearest a typical height.
    let off_typical = |u: f64| (file_units * u / TYPICAL_FIGURE_HEIGHT_M).ln().abs();
    let best = [
        (0.01, "centimetres"),
        (0.001, "millimetres"),
        (0.0254, "inches"),
        (0.3048, "feet"),
        (1.0, "metres"),
    ]
    .into_iter()
    .filter(|(u, _)| (lo..=hi).contains(&(file_units * u)) && *u != metres_per_unit)
    .min_by(|a, b| off_typical(a.0).total_cmp(&off_typical(b.0)));
    let hint = match best {
        Some((u, name)) => format!(
            "if the file is in {name}, pass {option} {u} ({:.2} m tall)",
            file_units * u
        ),
        None => format!(
            "pass {option} with the file's metres per unit ({option} {:.3} makes it {TYPICAL_FIGURE_HEIGHT_M} m tall)",
            TYPICAL_FIGURE_HEIGHT_M / file_units
        ),
    };
    Some(format!(
        "the skeleton is {h:.2} m tall at {metres_per_unit} m per file unit, outside the {lo}-{hi} m of a human figure; {hint}"
    ))
}

impl Clip {
    /// Multiplies every distance of the clip (rest offsets and animated translations) by
    /// `factor`, turning a clip read in some unit into metres. Rotations and scales are kept.
    pub fn scale_lengths(&mut self, factor: f64) {
        let bones: Vec<Bone> = self
            .skeleton
            .bones()
            .iter()
            .map(|b| Bone {
                rest_translation: b.rest_translation * factor,
                ..b.clone()
            })
            .collect();
        self.skeleton = Skeleton { bones };
        for row in &mut self.frames {
            for t in row {
                t.translation *= factor;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::FRAC_PI_2;

    fn bone(name: &str, parent: Option<usize>, rest: [f64; 3]) -> Bone {
        Bone {
            name: name.into(),
            parent,
            rest_translation: DVec3::from_array(rest),
            rest_rotation: DQuat::IDENTITY,
        }
    }

    fn close(a: DVec3, b: DVec3) -> bool {
        (a - b).abs().max_element() < 1e-12
    }

    /// Root at (1, 0, 0) turned 90° about +Z and scaled (2, 1, 1); child one unit along the
    /// root's +X, turned 90° about +X and scaled 3 on Z; grandchild one unit along the child's
    /// +Z.
    #[test]
    fn forward_kinematics_by_hand() {
        let skeleton = Skeleton::new(vec![
            bone("root", None, [0.0; 3]),
            bone("child", Some(0), [1.0, 0.0, 0.0]),
            bone("grandchild", Some(1), [0.0, 0.0, 1.0]),
        ])
        .unwrap();
        let locals = [
            LocalTransform {
                translation: DVec3::new(1.0, 0.0, 0.0),
                rotation: DQuat::from_rotation_z(FRAC_PI_2),
                scale: DVec3::new(2.0, 1.0, 1.0),
            },
            LocalTransform {
                translation: DVec3::new(1.0, 0.0, 0.0),
                rotation: DQuat::from_rotation_x(FRAC_PI_2),
                scale: DVec3::new(1.0, 1.0, 3.0),
            },
            LocalTransform {
                translation: DVec3::new(0.0, 0.0, 1.0),
                rotation: DQuat::IDENTITY,
                scale: DVec3::ONE,
            },
        ];
        let world = forward_kinematics(&skeleton, &locals);
        assert_eq!(world.len(), 3);
        // Root: world = local.
        assert!(close(world[0].position, DVec3::new(1.0, 0.0, 0.0)));
        // Child: (1,0,0) ⊙ (2,1,1) = (2,0,0); Rz(90°) maps +X to +Y: (0,2,0); plus (1,0,0).
        assert!(close(world[1].position, DVec3::new(1.0, 2.0, 0.0)));
        // Grandchild: (0,0,1) ⊙ (1,1,3) = (0,0,3); Rx(90°) maps +Z to -Y: (0,-3,0); Rz(90°)
        // maps -Y to +X: (3,0,0); plus (1,2,0).
        assert!(close(world[2].position, DVec3::new(4.0, 2.0, 0.0)));
        let expected = DQuat::from_rotation_z(FRAC_PI_2) * DQuat::from_rotation_x(FRAC_PI_2);
        assert!(world[2].rotation.abs_diff_eq(expected, 1e-12));
        // Scale does not accumulate: the root's scale only stretched the child's offset.
    }

    #[test]
    fn forward_kinematics_tolerates_short_locals() {
        let skeleton = Skeleton::new(vec![
            bone("a", None, [0.0, 1.0, 0.0]),
            bone("b", Some(0), [0.0, 0.5, 0.0]),
        ])
        .unwrap();
        let world = forward_kinematics(&skeleton, &[]);
        assert!(close(world[1].position, DVec3::new(0.0, 1.5, 0.0)));
        let world = forward_kinematics(&skeleton, &[LocalTransform::IDENTITY; 5]);
        assert_eq!(world.len(), 2);
    }

    #[test]
    fn skeleton_rejects_bad_order_and_values() {
        let err = Skeleton::new(vec![bone("a", Some(0), [0.0; 3])]).unwrap_err();
        assert!(err.to_string().contains("parent index 0"), "{err}");
        let err = Skeleton::new(vec![
            bone("a", None, [0.0; 3]),
            bone("b", Some(2), [0.0; 3]),
            bone("c", Some(0), [0.0; 3]),
        ])
        .unwrap_err();
        assert!(
            matches!(err, MotionError::Skeleton { index: 1, .. }),
            "{err}"
        );
        let err = Skeleton::new(vec![bone("a", None, [f64::NAN, 0.0, 0.0])]).unwrap_err();
        assert!(err.to_string().contains("not finite"), "{err}");
    }

    #[test]
    fn clip_checks_shape_and_clamps_frames() {
        let skeleton = Skeleton::new(vec![bone("a", None, [0.0; 3])]).unwrap();
        assert!(Clip::new("x", skeleton.clone(), 0.0, vec![]).is_err());
        assert!(Clip::new("x", skeleton.clone(), f64::NAN, vec![]).is_err());
        let err = Clip::new("x", skeleton.clone(), 0.1, vec![vec![]]).unwrap_err();
        assert!(
            err.to_string().contains("frame 0 has 0 transforms"),
            "{err}"
        );
        let mut bad = LocalTransform::IDENTITY;
        bad.scale.y = f64::INFINITY;
        assert!(Clip::new("x", skeleton.clone(), 0.1, vec![vec![bad]]).is_err());

        let empty = Clip::new("x", skeleton.clone(), 0.1, vec![]).unwrap();
        assert_eq!(empty.frame_count(), 0);
        assert_eq!(empty.duration_s(), 0.0);
        assert_eq!(empty.world_pose(7).len(), 1);

        let moved = LocalTransform {
            translation: DVec3::new(0.0, 0.0, 2.0),
            ..LocalTransform::IDENTITY
        };
        let clip = Clip::new(
            "x",
            skeleton,
            0.5,
            vec![vec![LocalTransform::IDENTITY], vec![moved]],
        )
        .unwrap();
        // Two frames half a second apart: 0.5 s from the first to the last.
        assert_eq!(clip.duration_s(), 0.5);
        assert_eq!(clip.fps(), 2.0);
        assert_eq!(clip.world_pose(1)[0].position.z, 2.0);
        assert_eq!(clip.world_pose(99)[0].position.z, 2.0);
        assert!(clip.frame(2).is_none());
    }

    #[test]
    fn load_motion_file_rejects_unknown_extensions() {
        let err = load_motion_file(Path::new("clip.fbx")).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(".bvh") && text.contains(".json"), "{text}");
        assert!(matches!(err, MotionError::UnsupportedFormat { .. }));
        let err = load_motion_file(Path::new("no-extension")).unwrap_err();
        assert!(matches!(err, MotionError::UnsupportedFormat { .. }));
        let err = load_motion_file(Path::new("/no/such/file.bvh")).unwrap_err();
        assert!(matches!(err, MotionError::Io { .. }), "{err}");
    }

    #[test]
    fn load_motion_file_dispatches_on_fixtures() {
        use statepack_fixtures::fixture_for_test;
        if let Some(path) = fixture_for_test("motion/cmu-131-01-walk.bvh") {
            let clip = load_motion_file(&path).unwrap();
            assert_eq!(clip.name, "cmu-131-01-walk");
            assert_eq!(clip.skeleton.len(), 31);
        }
        if let Some(path) = fixture_for_test("study/study-jump.json") {
            let clip = load_motion_file(&path).unwrap();
            assert_eq!(clip.name, "jump");
        }
        if let Some(path) = fixture_for_test("motion/fox.glb") {
            let clip = load_motion_file(&path).unwrap();
            assert_eq!(clip.name, "Survey");
        }
        let err = load_motion_file(Path::new("clip.fbx")).unwrap_err();
        assert!(
            matches!(err, MotionError::UnsupportedFormat { .. }),
            "{err}"
        );
    }

    /// A vertical chain of `n` bones, `step` units apart, one frame at rest.
    fn column(n: usize, step: f64) -> Clip {
        let bones = (0..n)
            .map(|i| {
                let rest = if i == 0 { [0.0; 3] } else { [0.0, step, 0.0] };
                bone(&format!("b{i}"), i.checked_sub(1), rest)
            })
            .collect();
        let skeleton = Skeleton::new(bones).unwrap();
        let frames = vec![skeleton.rest_pose()];
        Clip::new("column", skeleton, 1.0 / 30.0, frames).unwrap()
    }

    /// The figure's height is the extent of its joints; scaling lengths scales it; a figure
    /// outside 0.3-3 m gets a warning naming the height, the unit and the option value that
    /// brings it to human size; a small rig gets none.
    #[test]
    fn height_and_unit_warning() {
        // 10 bones 19 units apart: 171 units tall.
        let mut c = column(10, 19.0);
        assert!((figure_height_m(&c) - 171.0).abs() < 1e-9);
        let w = height_warning(&c, 1.0, "--unit-m").expect("171 m is not human");
        assert!(w.contains("171.00 m tall at 1 m per file unit"), "{w}");
        assert!(w.contains("pass --unit-m 0.01 (1.71 m tall)"), "{w}");
        c.scale_lengths(0.01);
        assert!((figure_height_m(&c) - 1.71).abs() < 1e-9);
        assert_eq!(height_warning(&c, 0.01, "--unit-m"), None);
        // 29 units: too short in centimetres, so inches are suggested.
        let c = column(10, 29.0 / 9.0);
        let w = height_warning(&c, 1.0, "--unit-m").unwrap();
        assert!(
            w.contains("if the file is in inches, pass --unit-m 0.0254 (0.74 m tall)"),
            "{w}"
        );
        // Too small: millimetres read as kilometres-ish (unit 1000 given).
        let c = column(10, 0.0002);
        let w = height_warning(&c, 1000.0, "--unit").unwrap();
        assert!(w.contains("--unit"), "{w}");
        // A figure in metres read as centimetres or inches: metres is suggested, not feet
        // (which also gives a height in range, 0.52 m).
        let mut m = column(10, 0.19);
        for wrong in [0.01, 0.0254] {
            m.scale_lengths(wrong);
            let w = height_warning(&m, wrong, "--unit-m").expect("too small");
            assert!(
                w.contains("if the file is in metres, pass --unit-m 1 (1.71 m tall)"),
                "{w}"
            );
            m.scale_lengths(1.0 / wrong);
        }
        // 68 units read as metres: inches (1.73 m), not centimetres (0.68 m, also in range).
        let w = height_warning(&column(10, 68.0 / 9.0), 1.0, "--unit-m").unwrap();
        assert!(
            w.contains("if the file is in inches, pass --unit-m 0.0254 (1.73 m tall)"),
            "{w}"
        );
        // 5.6 units read as metres: feet (1.71 m).
        let w = height_warning(&column(10, 5.6 / 9.0), 1.0, "--unit-m").unwrap();
        assert!(
            w.contains("if the file is in feet, pass --unit-m 0.3048 (1.71 m tall)"),
            "{w}"
        );
        // A three-bone rig has no expected size.
        assert_eq!(height_warning(&column(3, 50.0), 1.0, "--unit-m"), None);
    }

    /// Units: zero, negative, NaN and infinite are refused; a BVH read with a unit is in
    /// metres.
    #[test]
    fn load_with_a_unit() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = check_metres_per_unit("--unit-m", bad).unwrap_err();
            assert!(
                e.to_string().contains("--unit-m must be a finite positive"),
                "{e}"
            );
        }
        let dir = std::env::temp_dir().join(format!("statepack-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("two.bvh");
        std::fs::write(
            &path,
            "HIERARCHY\nROOT a\n{\n  OFFSET 0 0 0\n  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n  JOINT b\n  {\n    OFFSET 0 100 0\n    CHANNELS 3 Zrotation Xrotation Yrotation\n    End Site\n    {\n      OFFSET 0 0 0\n    }\n  }\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n5 90 0 0 0 0 0 0 0\n",
        )
        .unwrap();
        let m = load_motion_file(&path).unwrap();
        let cm = load_motion_file_with(
            &path,
            &LoadOptions {
                metres_per_unit: Some(0.01),
                ..LoadOptions::default()
            },
        )
        .unwrap();
        let (pm, pc) = (m.world_pose(0), cm.world_pose(0));
        assert!(close(pm[1].position, DVec3::new(5.0, 190.0, 0.0)));
        assert!(close(pc[1].position, DVec3::new(0.05, 1.9, 0.0)));
        let e = load_motion_file_with(
            &path,
            &LoadOptions {
                metres_per_unit: Some(0.0),
                ..LoadOptions::default()
            },
        )
        .unwrap_err();
        assert!(matches!(e, MotionError::Unit { .. }), "{e}");
        // A bad file's error names the file once and the problem once.
        std::fs::write(&path, "HIERARCHY\nROOT a\n{\n").unwrap();
        let e = load_motion_file(&path).unwrap_err().to_string();
        assert_eq!(e.matches("two.bvh").count(), 1, "{e}");
        assert!(std::error::Error::source(&load_motion_file(&path).unwrap_err()).is_none());
        std::fs::remove_dir_all(&dir).ok();
    }
}
