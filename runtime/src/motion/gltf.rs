//! glTF 2.0 skinned animation (`.gltf` with embedded or external buffers, `.glb`) as a
//! [`Clip`]: the first skin's joints become the bones (parents first), the first animation is
//! sampled at a fixed rate.
//!
//! A small reader of its own over `serde_json`: the JSON document, base64 data URIs, buffers
//! next to the file, the GLB container; float accessors only (glTF requires floats for
//! animation outputs of translation and scale, and allows normalized integers for rotation,
//! which are refused here with a message). Channels interpolate as their sampler says:
//! `LINEAR` (nlerp for rotations, with the sign check), `STEP`, and `CUBICSPLINE` read as
//! linear between its values (the tangents are ignored; stated in the error-free path, not an
//! error). Units are the file's, metres by the glTF convention. A joint whose parent is not a
//! joint is a root; the transforms of nodes above the skeleton are not applied.

use super::{Bone, Clip, LocalTransform, Skeleton};
use glam::{DMat4, DQuat, DVec3};
use serde_json::Value;
use std::path::Path;

/// Why a glTF file cannot be read as a clip.
#[derive(Debug, thiserror::Error)]
pub enum GltfError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The document is not what glTF 2.0 says, at the JSON path given.
    #[error("glTF at {path}: {problem}")]
    Shape {
        /// JSON path (`accessors[3].count`).
        path: String,
        /// What is wrong.
        problem: String,
    },
    /// The clip built from the file is inconsistent.
    #[error(transparent)]
    Motion(#[from] super::MotionError),
}

fn shape(path: impl Into<String>, problem: impl Into<String>) -> GltfError {
    GltfError::Shape {
        path: path.into(),
        problem: problem.into(),
    }
}

fn base64_decode(s: &str, path: &str) -> Result<Vec<u8>, GltfError> {
    let mut out = Vec::with_capacity(s.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            b'\r' | b'\n' => continue,
            _ => return Err(shape(path, format!("byte {c:#04x} is not base64"))),
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}

struct Doc {
    json: Value,
    buffers: Vec<Vec<u8>>,
}

fn get<'a>(v: &'a Value, key: &str, path: &str) -> Result<&'a Value, GltfError> {
    v.get(key)
        .ok_or_else(|| shape(format!("{path}.{key}"), "missing"))
}

fn uint(v: &Value, key: &str, path: &str) -> Result<usize, GltfError> {
    get(v, key, path)?
        .as_u64()
        .map(|x| x as usize)
        .ok_or_else(|| shape(format!("{path}.{key}"), "not a whole number"))
}

impl Doc {
    fn load(bytes: &[u8], dir: &Path) -> Result<Self, GltfError> {
        let (json_bytes, bin) = if bytes.starts_with(b"glTF") {
            let mut at = 12usize;
            let mut json = None;
            let mut bin = None;
            while at + 8 <= bytes.len() {
                let len = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
                let kind = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap());
                let Some(data) = bytes.get(at + 8..at + 8 + len) else {
                    return Err(shape("glb", format!("chunk at {at} runs past the file")));
                };
                match kind {
                    0x4E4F_534A => json = Some(data.to_vec()),
                    0x004E_4942 => bin = Some(data.to_vec()),
                    _ => {}
                }
                at += 8 + len;
            }
            (json.ok_or_else(|| shape("glb", "no JSON chunk"))?, bin)
        } else {
            (bytes.to_vec(), None)
        };
        let json: Value =
            serde_json::from_slice(&json_bytes).map_err(|e| shape("", format!("not JSON: {e}")))?;
        let mut buffers = Vec::new();
        let mut bin = bin;
        for (i, b) in json
            .get("buffers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let p = format!("buffers[{i}]");
            let data = match b.get("uri").and_then(Value::as_str) {
                Some(uri) if uri.starts_with("data:") => {
                    let comma = uri
                        .find(',')
                        .ok_or_else(|| shape(&p, "data URI without a comma"))?;
                    base64_decode(&uri[comma + 1..], &p)?
                }
                Some(uri) => {
                    let f = dir.join(uri);
                    std::fs::read(&f).map_err(|source| GltfError::Io {
                        path: f.display().to_string(),
                        source,
                    })?
                }
                None => bin
                    .take()
                    .ok_or_else(|| shape(&p, "no uri and no GLB binary chunk"))?,
            };
            if data.len() < uint(b, "byteLength", &p)? {
                return Err(shape(&p, "shorter than its byteLength"));
            }
            buffers.push(data);
        }
        Ok(Self { json, buffers })
    }

    /// The float values of accessor `i`, `n` per element.
    fn floats(&self, i: usize, n: usize) -> Result<Vec<f64>, GltfError> {
        let p = format!("accessors[{i}]");
        let a = self
            .json
            .get("accessors")
            .and_then(|x| x.get(i))
            .ok_or_else(|| shape(&p, "missing"))?;
        if uint(a, "componentType", &p)? != 5126 {
            return Err(shape(&p, "only float accessors are read"));
        }
        let count = uint(a, "count", &p)?;
        let bv_i = uint(a, "bufferView", &p)?;
        let bp = format!("bufferViews[{bv_i}]");
        let bv = self
            .json
            .get("bufferViews")
            .and_then(|x| x.get(bv_i))
            .ok_or_else(|| shape(&bp, "missing"))?;
        let buf = self
            .buffers
            .get(uint(bv, "buffer", &bp)?)
            .ok_or_else(|| shape(&bp, "no such buffer"))?;
        let base = bv.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize
            + a.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let stride = bv
            .get("byteStride")
            .and_then(Value::as_u64)
            .map_or(4 * n, |s| s as usize);
        let mut out = Vec::with_capacity(count.min(buf.len() / 4 + 1) * n);
        for e in 0..count {
            for c in 0..n {
                let at = base + e * stride + 4 * c;
                let b = buf
                    .get(at..at + 4)
                    .ok_or_else(|| shape(&p, "runs past its buffer"))?;
                out.push(f32::from_le_bytes(b.try_into().unwrap()) as f64);
            }
        }
        Ok(out)
    }
}

fn rest_of(node: &Value) -> LocalTransform {
    let arr = |k: &str| -> Option<Vec<f64>> {
        node.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
    };
    if let Some(m) = arr("matrix").filter(|m| m.len() == 16) {
        let (s, r, t) = DMat4::from_cols_slice(&m).to_scale_rotation_translation();
        return LocalTransform {
            translation: t,
            rotation: r,
            scale: s,
        };
    }
    let t = arr("translation").filter(|v| v.len() == 3);
    let r = arr("rotation").filter(|v| v.len() == 4);
    let s = arr("scale").filter(|v| v.len() == 3);
    LocalTransform {
        translation: t.map_or(DVec3::ZERO, |v| DVec3::new(v[0], v[1], v[2])),
        rotation: r.map_or(DQuat::IDENTITY, |v| {
            DQuat::from_xyzw(v[0], v[1], v[2], v[3]).normalize()
        }),
        scale: s.map_or(DVec3::ONE, |v| DVec3::new(v[0], v[1], v[2])),
    }
}

/// One animation channel: the bone, what it drives, key times and values.
struct Channel {
    bone: usize,
    path: u8, // 0 translation, 1 rotation, 2 scale
    step: bool,
    times: Vec<f64>,
    values: Vec<f64>,
    width: usize,
    cubic: bool,
}

impl Channel {
    fn value(&self, k: usize) -> &[f64] {
        let w = self.width;
        let k = if self.cubic { 3 * k + 1 } else { k };
        &self.values[k * w..k * w + w]
    }

    fn apply(&self, t: f64, lt: &mut LocalTransform) {
        let n = self.times.len();
        if n == 0 {
            return;
        }
        let j = self.times.partition_point(|&x| x <= t);
        let (a, b, s) = if j == 0 {
            (0, 0, 0.0)
        } else if j >= n {
            (n - 1, n - 1, 0.0)
        } else {
            let (ta, tb) = (self.times[j - 1], self.times[j]);
            let s = if tb > ta { (t - ta) / (tb - ta) } else { 0.0 };
            (j - 1, j, if self.step { 0.0 } else { s })
        };
        let (va, vb) = (self.value(a), self.value(b));
        match self.path {
            1 => {
                let qa = DQuat::from_xyzw(va[0], va[1], va[2], va[3]).normalize();
                let qb = DQuat::from_xyzw(vb[0], vb[1], vb[2], vb[3]).normalize();
                lt.rotation = crate::curve::nlerp_d(qa, qb, s);
            }
            p => {
                let v = DVec3::new(va[0], va[1], va[2]).lerp(DVec3::new(vb[0], vb[1], vb[2]), s);
                if p == 0 {
                    lt.translation = v;
                } else {
                    lt.scale = v;
                }
            }
        }
    }
}

/// Reads a `.gltf` or `.glb` file: its first skin and first animation, sampled every
/// `frame_time_s` seconds from 0 to the last key.
///
/// Errors: the file cannot be read, is not glTF 2.0 of the shape above (named by JSON path), or
/// has no skin or no animation.
pub fn load_gltf(path: &Path, frame_time_s: f64) -> Result<Clip, GltfError> {
    let bytes = std::fs::read(path).map_err(|source| GltfError::Io {
        path: path.display().to_string(),
        source,
    })?;
    let doc = Doc::load(&bytes, path.parent().unwrap_or(Path::new(".")))?;
    let nodes = get(&doc.json, "nodes", "")?
        .as_array()
        .ok_or_else(|| shape("nodes", "not a list"))?;
    let skin = doc
        .json
        .get("skins")
        .and_then(|s| s.get(0))
        .ok_or_else(|| shape("skins", "no skin"))?;
    let joints: Vec<usize> = get(skin, "joints", "skins[0]")?
        .as_array()
        .ok_or_else(|| shape("skins[0].joints", "not a list"))?
        .iter()
        .map(|j| j.as_u64().map(|x| x as usize))
        .collect::<Option<_>>()
        .ok_or_else(|| shape("skins[0].joints", "not node indices"))?;
    let mut parent_of = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for c in n
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(c) = c.as_u64().map(|c| c as usize).filter(|&c| c < nodes.len()) {
                parent_of[c] = Some(i);
            }
        }
    }
    // Order joints parents first: roots (no joint parent) then their joint children.
    let is_joint = |n: usize| joints.contains(&n);
    let mut order: Vec<usize> = joints
        .iter()
        .copied()
        .filter(|&j| j < nodes.len() && !parent_of[j].is_some_and(is_joint))
        .collect();
    let mut k = 0;
    while k < order.len() {
        let n = order[k];
        for c in nodes[n]
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(c) = c.as_u64().map(|c| c as usize) {
                if is_joint(c) && !order.contains(&c) {
                    order.push(c);
                }
            }
        }
        k += 1;
    }
    let bone_of = |n: usize| order.iter().position(|&x| x == n);
    let rest: Vec<LocalTransform> = order.iter().map(|&n| rest_of(&nodes[n])).collect();
    let bones: Vec<Bone> = order
        .iter()
        .enumerate()
        .map(|(i, &n)| Bone {
            name: nodes[n]
                .get("name")
                .and_then(Value::as_str)
                .map_or_else(|| format!("node{n}"), str::to_owned),
            parent: parent_of[n].and_then(bone_of),
            rest_translation: rest[i].translation,
        })
        .collect();
    let skeleton = Skeleton::new(bones)?;
    let anim = doc
        .json
        .get("animations")
        .and_then(|a| a.get(0))
        .ok_or_else(|| shape("animations", "no animation"))?;
    let samplers = get(anim, "samplers", "animations[0]")?;
    let mut channels = Vec::new();
    for (ci, c) in get(anim, "channels", "animations[0]")?
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = format!("animations[0].channels[{ci}]");
        let target = get(c, "target", &p)?;
        let Some(bone) = target
            .get("node")
            .and_then(Value::as_u64)
            .and_then(|n| bone_of(n as usize))
        else {
            continue; // a node that is not a joint
        };
        let (path, width) = match target.get("path").and_then(Value::as_str) {
            Some("translation") => (0, 3),
            Some("rotation") => (1, 4),
            Some("scale") => (2, 3),
            _ => continue, // morph weights
        };
        let si = uint(c, "sampler", &p)?;
        let sp = format!("animations[0].samplers[{si}]");
        let s = samplers.get(si).ok_or_else(|| shape(&sp, "missing"))?;
        let interp = s
            .get("interpolation")
            .and_then(Value::as_str)
            .unwrap_or("LINEAR");
        let times = doc.floats(uint(s, "input", &sp)?, 1)?;
        let values = doc.floats(uint(s, "output", &sp)?, width)?;
        let cubic = interp == "CUBICSPLINE";
        let need = times.len() * width * if cubic { 3 } else { 1 };
        if values.len() < need {
            return Err(shape(&sp, "fewer output values than key times"));
        }
        channels.push(Channel {
            bone,
            path,
            step: interp == "STEP",
            times,
            values,
            width,
            cubic,
        });
    }
    let end = channels
        .iter()
        .filter_map(|c| c.times.last().copied())
        .fold(0.0f64, f64::max);
    let n = (end / frame_time_s).floor() as usize + 1;
    let mut frames = Vec::with_capacity(n);
    for f in 0..n {
        let t = f as f64 * frame_time_s;
        let mut row = rest.clone();
        for c in &channels {
            c.apply(t, &mut row[c.bone]);
        }
        frames.push(row);
    }
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(Clip::new(name, skeleton, frame_time_s, frames)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip() {
        assert_eq!(base64_decode("TWFu", "").unwrap(), b"Man");
        assert_eq!(base64_decode("TWE=", "").unwrap(), b"Ma");
        assert!(base64_decode("T*E=", "").is_err());
    }

    #[test]
    fn fixtures_load() {
        for (f, min_bones) in [
            ("motion/cesium-man.gltf", 19),
            ("motion/fox.glb", 20),
            ("motion/rigged-simple.gltf", 2),
        ] {
            let Some(p) = crate::fixtures::fixture_for_test(f) else {
                return;
            };
            let c = load_gltf(&p, 1.0 / 30.0).unwrap();
            assert!(c.skeleton.len() >= min_bones, "{f}: {}", c.skeleton.len());
            assert!(c.frame_count() > 1, "{f}");
            for row in &c.frames {
                for t in row {
                    assert!(t.is_finite());
                    assert!((t.rotation.length() - 1.0).abs() < 1e-6);
                }
            }
        }
    }
}
