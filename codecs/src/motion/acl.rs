//! Reader for the Animation Compression Library's clip files (`.acl.sjson`, `version = 1`).
//!
//! # Format
//!
//! Simplified JSON: the top level is a list of `key = value` pairs without braces; objects are
//! `{ key = value … }` without commas; arrays are `[ … ]` whose elements may or may not be
//! separated by commas; strings are double-quoted; `//` starts a comment to the end of the line.
//! A clip file has:
//!
//! ```text
//! version = 1
//! clip = { name, num_samples, sample_rate, error_threshold }
//! bones = [ { name, parent ("" for a root), vertex_distance,
//!             bind_rotation [x, y, z, w], bind_translation [x, y, z], bind_scale [x, y, z] } … ]
//! tracks = [ { name, rotations [[x, y, z, w] …], translations [[x, y, z] …],
//!              scales [[x, y, z] …] } … ]
//! ```
//!
//! Distances are in the file's unit; [`parse_acl_sjson`] multiplies them by `metres_per_unit`
//! (the CMU conversions are in centimetres: 0.01). A bone's bind values that are missing are
//! the identity; a track's missing `rotations`, `translations` or `scales` hold the bone's bind
//! value at every sample; a bone without a track holds its bind pose. The skeleton's rest
//! translation is the bind translation. Parents must precede their children (as ACL writes
//! them).
//!
//! Errors name the line and what was expected ([`MotionError::Clip`] with a `line N:` prefix
//! for syntax, the key path for shape errors). Sample storage is reserved only after every
//! track has been checked to hold `num_samples` entries.

use std::collections::HashMap;

use glam::{DQuat, DVec3};

use super::{Bone, Clip, LocalTransform, MotionError, Skeleton};

/// A parsed SJSON value.
#[derive(Debug, Clone, PartialEq)]
pub enum Sjson {
    /// A number.
    Num(f64),
    /// A string.
    Str(String),
    /// `true` or `false`.
    Bool(bool),
    /// `null`.
    Null,
    /// An array.
    Arr(Vec<Sjson>),
    /// An object, in file order.
    Obj(Vec<(String, Sjson)>),
}

impl Sjson {
    /// The value of `key` in an object.
    pub fn get(&self, key: &str) -> Option<&Sjson> {
        match self {
            Sjson::Obj(kv) => kv.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

fn err(problem: String) -> MotionError {
    MotionError::Clip {
        clip: "acl sjson".into(),
        problem,
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn line(&self) -> usize {
        1 + self.s[..self.i.min(self.s.len())]
            .iter()
            .filter(|&&c| c == b'\n')
            .count()
    }
    fn fail(&self, expected: &str) -> MotionError {
        let found = match self.s.get(self.i) {
            None => "end of file".to_owned(),
            Some(_) => {
                let end = (self.i + 20).min(self.s.len());
                format!("{:?}", String::from_utf8_lossy(&self.s[self.i..end]))
            }
        };
        err(format!(
            "line {}: expected {expected}, found {found}",
            self.line()
        ))
    }
    fn skip(&mut self) {
        while self.i < self.s.len() {
            match self.s[self.i] {
                b' ' | b'\t' | b'\r' | b'\n' | b',' => self.i += 1,
                b'/' if self.s.get(self.i + 1) == Some(&b'/') => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                _ => break,
            }
        }
    }
    fn key(&mut self) -> Result<String, MotionError> {
        self.skip();
        let st = self.i;
        if self.s.get(self.i) == Some(&b'"') {
            return self.string();
        }
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_')
        {
            self.i += 1;
        }
        if st == self.i {
            return Err(self.fail("a key"));
        }
        Ok(String::from_utf8_lossy(&self.s[st..self.i]).into_owned())
    }
    fn string(&mut self) -> Result<String, MotionError> {
        self.i += 1;
        let st = self.i;
        while self.i < self.s.len() && self.s[self.i] != b'"' {
            if self.s[self.i] == b'\\' {
                self.i += 1;
            }
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return Err(self.fail("a closing quote"));
        }
        let out = String::from_utf8_lossy(&self.s[st..self.i]).into_owned();
        self.i += 1;
        Ok(out)
    }
    fn pairs(&mut self, close: Option<u8>) -> Result<Vec<(String, Sjson)>, MotionError> {
        let mut out = Vec::new();
        loop {
            self.skip();
            match (self.s.get(self.i), close) {
                (None, None) => return Ok(out),
                (Some(&c), Some(cl)) if c == cl => {
                    self.i += 1;
                    return Ok(out);
                }
                (None, Some(_)) => return Err(self.fail("`}`")),
                _ => {}
            }
            let k = self.key()?;
            self.skip();
            if self.s.get(self.i) != Some(&b'=') && self.s.get(self.i) != Some(&b':') {
                return Err(self.fail("`=`"));
            }
            self.i += 1;
            let v = self.value()?;
            out.push((k, v));
        }
    }
    fn value(&mut self) -> Result<Sjson, MotionError> {
        self.skip();
        if self.depth > 64 {
            return Err(self.fail("at most 64 levels of nesting"));
        }
        match self.s.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                self.depth += 1;
                let v = self.pairs(Some(b'}'))?;
                self.depth -= 1;
                Ok(Sjson::Obj(v))
            }
            Some(b'[') => {
                self.i += 1;
                self.depth += 1;
                let mut v = Vec::new();
                loop {
                    self.skip();
                    match self.s.get(self.i) {
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        None => return Err(self.fail("`]`")),
                        _ => v.push(self.value()?),
                    }
                }
                self.depth -= 1;
                Ok(Sjson::Arr(v))
            }
            Some(b'"') => Ok(Sjson::Str(self.string()?)),
            Some(_) => {
                let st = self.i;
                while self.i < self.s.len()
                    && !matches!(
                        self.s[self.i],
                        b' ' | b'\t' | b'\r' | b'\n' | b',' | b']' | b'}'
                    )
                {
                    self.i += 1;
                }
                let tok = String::from_utf8_lossy(&self.s[st..self.i]).into_owned();
                match tok.as_str() {
                    "true" => Ok(Sjson::Bool(true)),
                    "false" => Ok(Sjson::Bool(false)),
                    "null" => Ok(Sjson::Null),
                    _ => tok.parse::<f64>().map(Sjson::Num).map_err(|_| {
                        self.i = st;
                        self.fail("a value")
                    }),
                }
            }
            None => Err(self.fail("a value")),
        }
    }
}

/// Parses SJSON text into its top-level object.
///
/// # Errors
///
/// [`MotionError::Clip`] with the line number and what was expected.
pub fn parse_sjson(text: &str) -> Result<Sjson, MotionError> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    Ok(Sjson::Obj(p.pairs(None)?))
}

fn num(v: Option<&Sjson>, path: &str) -> Result<f64, MotionError> {
    match v {
        Some(Sjson::Num(x)) if x.is_finite() => Ok(*x),
        _ => Err(err(format!("{path}: expected a finite number"))),
    }
}

fn vecn<const N: usize>(v: &Sjson, path: &str) -> Result<[f64; N], MotionError> {
    match v {
        Sjson::Arr(a) if a.len() == N => {
            let mut o = [0.0; N];
            for (i, x) in a.iter().enumerate() {
                o[i] = num(Some(x), &format!("{path}[{i}]"))?;
            }
            Ok(o)
        }
        _ => Err(err(format!("{path}: expected an array of {N} numbers"))),
    }
}

fn list<'a>(v: Option<&'a Sjson>, path: &str) -> Result<&'a [Sjson], MotionError> {
    match v {
        Some(Sjson::Arr(a)) => Ok(a),
        _ => Err(err(format!("{path}: expected an array"))),
    }
}

/// Parses an ACL clip (see the [module documentation](self)); distances are multiplied by
/// `metres_per_unit`.
///
/// # Errors
///
/// [`MotionError::Clip`] for syntax errors (with the line), a missing or mistyped field (with
/// its path), an unknown parent, a parent after its child, a track naming no bone, or a track
/// whose sample count differs from `clip.num_samples`.
pub fn parse_acl_sjson(text: &str, metres_per_unit: f64) -> Result<Clip, MotionError> {
    let root = parse_sjson(text)?;
    let clip = root
        .get("clip")
        .ok_or_else(|| err("missing `clip`".into()))?;
    let name = match clip.get("name") {
        Some(Sjson::Str(s)) => s.clone(),
        _ => String::new(),
    };
    let n = num(clip.get("num_samples"), "clip.num_samples")?;
    let rate = num(clip.get("sample_rate"), "clip.sample_rate")?;
    if !(n >= 0.0 && n.fract() == 0.0 && n <= 1e7) || rate <= 0.0 {
        return Err(err(
            "clip.num_samples must be a whole number and sample_rate positive".into(),
        ));
    }
    let n = n as usize;
    let bones_in = list(root.get("bones"), "bones")?;
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut bones = Vec::with_capacity(bones_in.len());
    let mut bind = Vec::with_capacity(bones_in.len());
    for (i, b) in bones_in.iter().enumerate() {
        let path = format!("bones[{i}]");
        let bname = match b.get("name") {
            Some(Sjson::Str(s)) => s.clone(),
            _ => return Err(err(format!("{path}.name: expected a string"))),
        };
        let parent = match b.get("parent") {
            Some(Sjson::Str(s)) if s.is_empty() => None,
            Some(Sjson::Str(s)) => Some(
                *index
                    .get(s)
                    .ok_or_else(|| err(format!("{path}.parent: {s:?} is not an earlier bone")))?,
            ),
            None => None,
            _ => return Err(err(format!("{path}.parent: expected a string"))),
        };
        let r = match b.get("bind_rotation") {
            Some(v) => {
                let q = vecn::<4>(v, &format!("{path}.bind_rotation"))?;
                DQuat::from_array(q).normalize()
            }
            None => DQuat::IDENTITY,
        };
        let t = match b.get("bind_translation") {
            Some(v) => {
                DVec3::from_array(vecn::<3>(v, &format!("{path}.bind_translation"))?)
                    * metres_per_unit
            }
            None => DVec3::ZERO,
        };
        let s = match b.get("bind_scale") {
            Some(v) => DVec3::from_array(vecn::<3>(v, &format!("{path}.bind_scale"))?),
            None => DVec3::ONE,
        };
        index.insert(bname.clone(), i);
        bones.push(Bone {
            name: bname,
            parent,
            rest_translation: t,
            rest_rotation: r,
        });
        bind.push(LocalTransform {
            translation: t,
            rotation: r,
            scale: s,
        });
    }
    let skeleton = Skeleton::new(bones)?;
    let tracks = match root.get("tracks") {
        Some(v) => list(Some(v), "tracks")?,
        None => &[],
    };
    // Check every track's shape before reserving the frames.
    let mut per_bone: Vec<Option<&Sjson>> = vec![None; skeleton.len()];
    for (i, t) in tracks.iter().enumerate() {
        let tname = match t.get("name") {
            Some(Sjson::Str(s)) => s,
            _ => return Err(err(format!("tracks[{i}].name: expected a string"))),
        };
        let b = *index
            .get(tname)
            .ok_or_else(|| err(format!("tracks[{i}]: no bone is called {tname:?}")))?;
        for key in ["rotations", "translations", "scales"] {
            if let Some(v) = t.get(key) {
                let a = list(Some(v), &format!("tracks[{i}].{key}"))?;
                if a.len() != n {
                    return Err(err(format!(
                        "tracks[{i}].{key}: {} samples, the clip has {n}",
                        a.len()
                    )));
                }
            }
        }
        per_bone[b] = Some(t);
    }
    let mut frames = vec![bind.clone(); n];
    for (b, t) in per_bone.iter().enumerate() {
        let Some(t) = t else { continue };
        if let Some(Sjson::Arr(a)) = t.get("rotations") {
            for (f, v) in a.iter().enumerate() {
                let q = vecn::<4>(v, &format!("tracks[{b}].rotations[{f}]"))?;
                let q = DQuat::from_array(q);
                if q.length() < 1e-6 {
                    return Err(err(format!("tracks[{b}].rotations[{f}]: zero quaternion")));
                }
                frames[f][b].rotation = q.normalize();
            }
        }
        if let Some(Sjson::Arr(a)) = t.get("translations") {
            for (f, v) in a.iter().enumerate() {
                frames[f][b].translation =
                    DVec3::from_array(vecn::<3>(v, &format!("tracks[{b}].translations[{f}]"))?)
                        * metres_per_unit;
            }
        }
        if let Some(Sjson::Arr(a)) = t.get("scales") {
            for (f, v) in a.iter().enumerate() {
                frames[f][b].scale =
                    DVec3::from_array(vecn::<3>(v, &format!("tracks[{b}].scales[{f}]"))?);
            }
        }
    }
    Clip::new(name, skeleton, 1.0 / rate, frames)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_small_clip() {
        let text = r#"version = 1
clip = { name = "t" num_samples = 2 sample_rate = 30 }
bones = [
  { name = "root" parent = "" bind_translation = [ 0, 100, 0 ] }
  { name = "arm", parent = "root", bind_translation = [ 10.0, 0.0, 0.0 ] }
]
// a comment
tracks = [
  { name = "arm" rotations = [ [0, 0, 0, 1] [0, 0, 0.70710678, 0.70710678] ] }
]
"#;
        let c = parse_acl_sjson(text, 0.01).unwrap();
        assert_eq!(c.skeleton.len(), 2);
        assert_eq!(c.frame_count(), 2);
        assert!((c.fps() - 30.0).abs() < 1e-9);
        assert_eq!(c.frames[1][0].translation, DVec3::new(0.0, 1.0, 0.0));
        assert!((c.frames[1][1].rotation.z - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        let e = parse_acl_sjson(
            "clip = { num_samples = 1 sample_rate = 1 }\nbones = [ { name = 1 } ]",
            1.0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("bones[0].name"), "{e}");
        let e = parse_acl_sjson("clip = {\n name = \"x\"\n", 1.0).unwrap_err();
        assert!(e.to_string().contains("line 3"), "{e}");
    }

    #[test]
    fn reads_the_cmu_fixture() {
        if let Some(p) = statepack_fixtures::fixture_for_test("motion/cmu-104-30.acl.sjson") {
            let c = crate::motion::load_motion_file(&p).unwrap();
            assert_eq!(c.skeleton.len(), 44);
            assert_eq!(c.frame_count(), 273);
            assert!((c.fps() - 24.0).abs() < 1e-9);
            assert_eq!(c.name, "104_30");
        }
    }
}
