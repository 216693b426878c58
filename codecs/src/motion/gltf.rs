//! Reader for glTF 2.0 skins and animations (`.gltf` with embedded or side-by-side buffers,
//! `.glb`), through the `gltf` crate.
//!
//! The first skin's joints become the [`Skeleton`], parents first (joints are ordered by their
//! depth in the node tree, ties in skin order; a joint's parent bone is its nearest ancestor
//! node that is also a joint). Static transforms of the nodes above a root joint (an armature,
//! a Z-up fix) are folded into that root's local transform, so world positions match the
//! scene's. One animation becomes one [`Clip`]: every channel that targets a joint's
//! translation, rotation or scale is sampled at a fixed rate from the animation's first to its
//! last key time; joints without a channel hold their node's transform. Samplers:
//!
//! - `STEP`: the value of the key at or before the time;
//! - `LINEAR`: linear interpolation (rotations: spherical, on the shorter arc);
//! - `CUBICSPLINE`: the glTF Hermite spline (tangents times the key interval; rotations are
//!   normalised after evaluation).
//!
//! Times before the first key hold the first value, after the last the last value. Distances
//! are multiplied by `metres_per_unit` (the Khronos Fox is in centimetres: 0.01). Scale follows
//! statepack's motion model (a bone's scale stretches its children's offsets and does not
//! accumulate), which equals glTF's own rule while scales are 1, as in the fixtures.

use std::path::Path;

use glam::{DMat4, DQuat, DVec3};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation, Property};

use super::{Bone, Clip, LocalTransform, MotionError, Skeleton};

fn err(problem: String) -> MotionError {
    MotionError::Clip {
        clip: "glTF".into(),
        problem,
    }
}

/// What to read from a glTF file.
#[derive(Debug, Clone, PartialEq)]
pub struct GltfOptions {
    /// Animation by name, or `None` for the first.
    pub animation: Option<String>,
    /// Metres per file unit.
    pub metres_per_unit: f64,
    /// Sampling rate in frames per second; `None` uses the animation's own key rate (one
    /// over the median interval between keys, rounded to a whole number).
    pub fps: Option<f64>,
}

impl Default for GltfOptions {
    fn default() -> Self {
        Self {
            animation: None,
            metres_per_unit: 1.0,
            fps: None,
        }
    }
}

fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut n) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' | b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((acc >> n) as u8);
            acc &= (1 << n) - 1;
        }
    }
    Some(out)
}

/// The names of the animations in a glTF file, in file order (`""` for unnamed ones).
///
/// # Errors
///
/// [`MotionError::Clip`] when the bytes are not glTF.
pub fn animation_names(bytes: &[u8]) -> Result<Vec<String>, MotionError> {
    let g = gltf::Gltf::from_slice(bytes).map_err(|e| err(format!("not glTF: {e}")))?;
    Ok(g.animations()
        .map(|a| a.name().unwrap_or("").to_owned())
        .collect())
}

/// Reads one animation of a glTF file (see the [module documentation](self)). `dir` is where
/// relative buffer URIs are looked up (`None`: only embedded buffers).
///
/// # Errors
///
/// [`MotionError::Clip`] when the bytes are not glTF, a buffer cannot be loaded, there is no
/// skin or no such animation, an accessor is malformed, or the rate is not positive.
pub fn parse_gltf(
    bytes: &[u8],
    dir: Option<&Path>,
    opts: &GltfOptions,
) -> Result<Clip, MotionError> {
    let g = gltf::Gltf::from_slice(bytes).map_err(|e| err(format!("not glTF: {e}")))?;
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    for b in g.buffers() {
        let data = match b.source() {
            gltf::buffer::Source::Bin => g
                .blob
                .clone()
                .ok_or_else(|| err("buffer 0 refers to a missing GLB binary chunk".into()))?,
            gltf::buffer::Source::Uri(uri) => {
                if let Some(rest) = uri.strip_prefix("data:") {
                    let b64 = rest.split_once(";base64,").map(|(_, d)| d).ok_or_else(|| {
                        err(format!(
                            "buffer {}: only base64 data URIs are supported",
                            b.index()
                        ))
                    })?;
                    decode_base64(b64)
                        .ok_or_else(|| err(format!("buffer {}: bad base64", b.index())))?
                } else {
                    let d = dir.ok_or_else(|| {
                        err(format!(
                            "buffer {} is an external file ({uri}) and no folder was given",
                            b.index()
                        ))
                    })?;
                    std::fs::read(d.join(uri))
                        .map_err(|e| err(format!("buffer {} ({uri}): {e}", b.index())))?
                }
            }
        };
        if data.len() < b.length() {
            return Err(err(format!(
                "buffer {} holds {} bytes, {} declared",
                b.index(),
                data.len(),
                b.length()
            )));
        }
        buffers.push(data);
    }
    let skin = g
        .skins()
        .next()
        .ok_or_else(|| err("the file has no skin".into()))?;
    let node_count = g.nodes().count();
    let mut parent_of = vec![None; node_count];
    for n in g.nodes() {
        for c in n.children() {
            parent_of[c.index()] = Some(n.index());
        }
    }
    let nodes: Vec<gltf::Node> = g.nodes().collect();
    let local_of = |i: usize| {
        let (t, r, s) = nodes[i].transform().decomposed();
        (
            DVec3::from_array(t.map(f64::from)),
            DQuat::from_array(r.map(f64::from)).normalize(),
            DVec3::from_array(s.map(f64::from)),
        )
    };
    let depth = |mut i: usize| {
        let mut d = 0;
        while let Some(p) = parent_of[i] {
            d += 1;
            i = p;
            if d > node_count {
                break;
            }
        }
        d
    };
    let mut joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
    joints.sort_by_key(|&j| depth(j)); // stable: ties keep skin order
    let mut bone_of = vec![None; node_count];
    for (b, &j) in joints.iter().enumerate() {
        bone_of[j] = Some(b);
    }
    let m = opts.metres_per_unit;
    let mut bones = Vec::with_capacity(joints.len());
    let mut base = Vec::with_capacity(joints.len());
    for &j in &joints {
        // Nearest joint ancestor; static transforms of non-joint ancestors of a root.
        let mut p = parent_of[j];
        let mut above = DMat4::IDENTITY;
        let mut parent_bone = None;
        while let Some(pi) = p {
            if let Some(b) = bone_of[pi] {
                parent_bone = Some(b);
                break;
            }
            let (t, r, s) = local_of(pi);
            above = DMat4::from_scale_rotation_translation(s, r, t * m) * above;
            p = parent_of[pi];
        }
        let (t, r, s) = local_of(j);
        let mut lt = LocalTransform {
            translation: t * m,
            rotation: r,
            scale: s,
        };
        if parent_bone.is_none() {
            lt = fold(above, lt);
        }
        bones.push(Bone {
            // Unnamed joints are named after their node index, so every bone has a name of
            // its own (recordings and reports match bones by name).
            name: match nodes[j].name() {
                Some(n) if !n.is_empty() => n.to_owned(),
                _ => format!("node{j}"),
            },
            parent: parent_bone,
            rest_translation: lt.translation,
            rest_rotation: lt.rotation.normalize(),
        });
        base.push((above, lt));
    }
    let skeleton = Skeleton::new(bones)?;
    let anim = match &opts.animation {
        None => g.animations().next(),
        Some(name) => g.animations().find(|a| a.name() == Some(name.as_str())),
    }
    .ok_or_else(|| match &opts.animation {
        None => err("the file has no animation".into()),
        Some(n) => err(format!("no animation is called {n:?}")),
    })?;
    let name = anim.name().unwrap_or("").to_owned();
    // Channels: (bone, property, interpolation, times, values as [f64; 4]).
    type Chan = (usize, Property, Interpolation, Vec<f64>, Vec<[f64; 4]>);
    let mut chans: Vec<Chan> = Vec::new();
    let (mut t0, mut t1) = (f64::INFINITY, f64::NEG_INFINITY);
    let mut intervals = Vec::new();
    for c in anim.channels() {
        let node = c.target().node().index();
        let Some(b) = bone_of[node] else { continue };
        let reader = c.reader(|buf| buffers.get(buf.index()).map(Vec::as_slice));
        let times: Vec<f64> = reader
            .read_inputs()
            .ok_or_else(|| err(format!("channel of node {node}: no input accessor")))?
            .map(f64::from)
            .collect();
        let values: Vec<[f64; 4]> = match reader.read_outputs() {
            Some(ReadOutputs::Translations(it)) => it
                .map(|v| {
                    [
                        f64::from(v[0]) * m,
                        f64::from(v[1]) * m,
                        f64::from(v[2]) * m,
                        0.0,
                    ]
                })
                .collect(),
            Some(ReadOutputs::Scales(it)) => it
                .map(|v| [f64::from(v[0]), f64::from(v[1]), f64::from(v[2]), 0.0])
                .collect(),
            Some(ReadOutputs::Rotations(r)) => r.into_f32().map(|v| v.map(f64::from)).collect(),
            _ => continue,
        };
        let interp = c.sampler().interpolation();
        let need = if interp == Interpolation::CubicSpline {
            times.len() * 3
        } else {
            times.len()
        };
        if times.is_empty()
            || values.len() != need
            || times.windows(2).any(|w| w[1] < w[0])
            || times.iter().any(|t| !t.is_finite())
            || values.iter().flatten().any(|v| !v.is_finite())
        {
            return Err(err(format!(
                "channel of node {node}: {} times and {} values do not make a sampler",
                times.len(),
                values.len()
            )));
        }
        t0 = t0.min(times[0]);
        t1 = t1.max(times[times.len() - 1]);
        intervals.extend(times.windows(2).map(|w| w[1] - w[0]).filter(|d| *d > 0.0));
        chans.push((b, c.target().property(), interp, times, values));
    }
    let fps = match opts.fps {
        Some(f) => f,
        None => {
            intervals.sort_by(f64::total_cmp);
            match intervals.get(intervals.len() / 2) {
                Some(d) => (1.0 / d).round().max(1.0),
                None => 30.0,
            }
        }
    };
    if !(fps.is_finite() && fps > 0.0) {
        return Err(err(format!("sampling rate {fps} is not positive")));
    }
    if !t0.is_finite() {
        t0 = 0.0;
        t1 = 0.0;
    }
    let n = ((t1 - t0) * fps + 1e-6).floor() as usize + 1;
    if n > 1_000_000 {
        return Err(err(format!("{n} frames at {fps} fps is too long")));
    }
    let mut frames = vec![base.iter().map(|(_, lt)| *lt).collect::<Vec<_>>(); n];
    // Animated values are the joint's own local values; roots get the static transform above.
    let mut raw: Vec<Vec<LocalTransform>> = vec![
        joints
            .iter()
            .map(|&j| {
                let (t, r, s) = local_of(j);
                LocalTransform {
                    translation: t * m,
                    rotation: r,
                    scale: s,
                }
            })
            .collect();
        n
    ];
    for (b, prop, interp, times, values) in &chans {
        for (f, row) in raw.iter_mut().enumerate() {
            let t = t0 + f as f64 / fps;
            let v = sample(times, values, *interp, t, *prop == Property::Rotation);
            match prop {
                Property::Translation => row[*b].translation = DVec3::new(v[0], v[1], v[2]),
                Property::Scale => row[*b].scale = DVec3::new(v[0], v[1], v[2]),
                Property::Rotation => row[*b].rotation = DQuat::from_array(v).normalize(),
                Property::MorphTargetWeights => {}
            }
        }
    }
    for (f, row) in raw.iter().enumerate() {
        for (b, lt) in row.iter().enumerate() {
            frames[f][b] = if skeleton.bones()[b].parent.is_none() {
                fold(base[b].0, *lt)
            } else {
                *lt
            };
        }
    }
    Clip::new(name, skeleton, 1.0 / fps, frames)
}

/// `above × local` as a local transform (translation, rotation and scale of the product).
fn fold(above: DMat4, lt: LocalTransform) -> LocalTransform {
    let m = above * DMat4::from_scale_rotation_translation(lt.scale, lt.rotation, lt.translation);
    let (s, r, t) = m.to_scale_rotation_translation();
    LocalTransform {
        translation: t,
        rotation: r.normalize(),
        scale: s,
    }
}

fn sample(
    times: &[f64],
    values: &[[f64; 4]],
    interp: Interpolation,
    t: f64,
    rotation: bool,
) -> [f64; 4] {
    let cubic = interp == Interpolation::CubicSpline;
    let val = |k: usize| if cubic { values[3 * k + 1] } else { values[k] };
    let n = times.len();
    if t <= times[0] {
        return val(0);
    }
    if t >= times[n - 1] {
        return val(n - 1);
    }
    let k = times.partition_point(|&x| x <= t) - 1;
    let (ta, tb) = (times[k], times[k + 1]);
    let dt = tb - ta;
    let u = if dt > 0.0 { (t - ta) / dt } else { 0.0 };
    match interp {
        Interpolation::Step => val(k),
        Interpolation::Linear => {
            let (a, b) = (val(k), val(k + 1));
            if rotation {
                DQuat::from_array(a)
                    .normalize()
                    .slerp(DQuat::from_array(b).normalize(), u)
                    .to_array()
            } else {
                let mut o = [0.0; 4];
                for c in 0..4 {
                    o[c] = a[c] + (b[c] - a[c]) * u;
                }
                o
            }
        }
        Interpolation::CubicSpline => {
            let (p0, m0) = (values[3 * k + 1], values[3 * k + 2]);
            let (p1, m1) = (values[3 * (k + 1) + 1], values[3 * (k + 1)]);
            let (u2, u3) = (u * u, u * u * u);
            let mut o = [0.0; 4];
            for c in 0..4 {
                o[c] = (2.0 * u3 - 3.0 * u2 + 1.0) * p0[c]
                    + (u3 - 2.0 * u2 + u) * dt * m0[c]
                    + (-2.0 * u3 + 3.0 * u2) * p1[c]
                    + (u3 - u2) * dt * m1[c];
            }
            o
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samplers_step_linear_cubic() {
        let times = [0.0, 1.0];
        let lin = [[0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]];
        assert_eq!(
            sample(&times, &lin, Interpolation::Step, 0.5, false)[0],
            0.0
        );
        assert_eq!(
            sample(&times, &lin, Interpolation::Linear, 0.25, false)[0],
            0.5
        );
        assert_eq!(
            sample(&times, &lin, Interpolation::Linear, 7.0, false)[0],
            2.0
        );
        // in-tangent, value, out-tangent per key: a straight line of slope 2 stays straight.
        let cub = [
            [2.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0, 0.0],
        ];
        assert!(
            (sample(&times, &cub, Interpolation::CubicSpline, 0.25, false)[0] - 0.5).abs() < 1e-12
        );
        assert_eq!(decode_base64("QUJD").unwrap(), b"ABC");
    }

    #[test]
    fn reads_the_fixtures() {
        use statepack_fixtures::fixture_for_test;
        if let Some(p) = fixture_for_test("motion/fox.glb") {
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(animation_names(&bytes).unwrap(), ["Survey", "Walk", "Run"]);
            let opts = GltfOptions {
                animation: Some("Walk".into()),
                metres_per_unit: 0.01,
                fps: None,
            };
            let c = parse_gltf(&bytes, None, &opts).unwrap();
            assert_eq!(c.skeleton.len(), 24);
            assert_eq!((c.frame_count(), c.fps()), (18, 24.0));
        }
        if let Some(p) = fixture_for_test("motion/cesium-man.gltf") {
            let c = parse_gltf(&std::fs::read(&p).unwrap(), None, &GltfOptions::default()).unwrap();
            assert_eq!(c.skeleton.len(), 19);
            assert_eq!((c.frame_count(), c.fps()), (49, 24.0));
            // Its joints have no names: each gets its node's, and no two are the same.
            let names: std::collections::BTreeSet<&str> =
                c.skeleton.bones().iter().map(|b| b.name.as_str()).collect();
            assert_eq!(names.len(), 19);
            assert!(names.iter().all(|n| !n.is_empty()), "{names:?}");
        }
        if let Some(p) = fixture_for_test("motion/rigged-simple.gltf") {
            let c = parse_gltf(&std::fs::read(&p).unwrap(), None, &GltfOptions::default()).unwrap();
            assert_eq!(c.skeleton.len(), 2);
            assert!(c.frame_count() > 40);
        }
    }
}
