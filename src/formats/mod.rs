//! One module per format: the semantic API (recorders, readers, players) over the generated
//! raw types and statepack-codecs' quantizers and delta chains.
//!
//! [`FORMATS`] lists every format with the same few entry points, so tools and checks that
//! apply to all formats (the CLI's `inspect`/`decode`, the Kaitai oracle, fuzzing, truncation
//! and mutation sweeps, the allocation bound) iterate over it. A format joins them by
//! implementing [`Format`] for its generated root type (its name, how to recognise it, its
//! full decode and its samples) and adding `FormatSpec::of::<Root>()` here; the entry points
//! every format shares (raw, traced and streamed decode, re-encode, JSON both ways) are
//! written once, below, over [`statepack_runtime::format::RootType`], which the generator
//! implements for every root type.

use serde::{de::DeserializeOwned, Serialize};
use statepack_runtime::format::RootType;
use statepack_runtime::io::{DecodeError, TraceNode};

pub mod events;
pub mod json;
pub mod trace;

pub mod anim_clip;
pub mod cbtrack;
pub mod rply;
pub mod snap;
pub mod study_tracks;
pub mod world_snapshot;

/// A traced raw decode: the result and the tree of every field read.
pub type TracedDecode = (Result<(), DecodeError>, TraceNode);

/// The entry points every format provides, for format-independent tools and checks.
#[derive(Debug, Clone, Copy)]
pub struct FormatSpec {
    /// Short name used on the command line (`snap`).
    pub name: &'static str,
    /// Human name with version (`SNAP v1.3`).
    pub title: &'static str,
    /// Stem of the schema file in `schema/` and of the generated module (`snap_v1_3`).
    pub schema: &'static str,
    /// True when `bytes` start like this format (a prefix of the header counts, so a file
    /// cut inside its header is still recognised and its decoder can say where it ends).
    pub detect: fn(&[u8]) -> bool,
    /// Raw decode (the generated layer only). Errors name the field path and byte offset.
    pub decode_raw: fn(&[u8]) -> Result<(), DecodeError>,
    /// Raw decode recording every field's byte range and value, as `inspect` prints it, in a
    /// tree of at most [`trace::trace_budget`] bytes: past it the tree is cut, with a
    /// [`trace::NOT_KEPT`] marker counting the fields read but not kept (the result is the
    /// decode's own either way).
    pub decode_traced: fn(&[u8]) -> TracedDecode,
    /// Raw decode sending every field to an event sink (what `inspect` prints as it reads,
    /// without a tree in memory); the result and the offset where reading stopped.
    pub decode_events: fn(&[u8], events::SinkTracer<'_>) -> (Result<(), DecodeError>, u64),
    /// Full decode: raw layer plus the format's own rules and reconstruction.
    pub decode_full: fn(&[u8]) -> Result<(), DecodeError>,
    /// Raw decode then encode: for any input that decodes, the bytes that encoding gives.
    pub reencode: fn(&[u8]) -> Result<Vec<u8>, String>,
    /// The raw layer as JSON (what `statepack decode` prints), for valid files.
    pub to_json: fn(&[u8]) -> Result<serde_json::Value, String>,
    /// The raw layer as JSON written straight to `out` in [`json::write_pretty`]'s layout
    /// (what `statepack decode` prints), for valid files; the same content as `to_json`.
    /// Errors: an invalid file (`InvalidData`, before anything is written) or the writer's.
    pub write_json: fn(&[u8], &mut dyn std::io::Write) -> std::io::Result<()>,
    /// Bytes from the raw layer's JSON (what `statepack encode` writes).
    pub from_json: fn(&serde_json::Value) -> Result<Vec<u8>, String>,
    /// [`Self::from_json`] from JSON text, read straight into the raw layer's types without a
    /// `serde_json::Value` of the whole document (which takes about 32 bytes per number).
    pub from_json_text: fn(&str) -> Result<Vec<u8>, String>,
    /// Sample files built in code (spec goldens and writer output), name and bytes; the
    /// seed of every sweep, fuzz corpus and oracle run.
    pub samples: fn() -> Vec<(String, Vec<u8>)>,
}

/// What a format supplies itself, implemented on its generated root type; everything else
/// of its [`FormatSpec`] comes from [`FormatSpec::of`].
pub trait Format: RootType + Serialize + DeserializeOwned {
    /// Short name used on the command line (`snap`).
    const NAME: &'static str;
    /// Human name with version (`SNAP v1.3`).
    const TITLE: &'static str;
    /// True when `bytes` start like this format (a prefix of the header counts); see
    /// [`FormatSpec::detect`].
    fn detect(bytes: &[u8]) -> bool;
    /// Full decode: raw layer plus the format's own rules and reconstruction (its `verify`).
    /// `decode` JSON is only given for files that pass it, and `encode` only writes bytes
    /// that pass it.
    ///
    /// Errors: the first rule broken, naming the field path and byte offset.
    fn decode_full(bytes: &[u8]) -> Result<(), DecodeError>;
    /// Limits the raw layer is read within that its schema does not say, checked on the
    /// whole input before the raw layer reads it (by every raw entry point: raw, traced and
    /// streamed decode, re-encode). None unless a format has some.
    ///
    /// Errors: the limit passed, naming the field path and byte offset.
    fn check_raw_limits(bytes: &[u8]) -> Result<(), DecodeError> {
        let _ = bytes;
        Ok(())
    }
    /// Sample files built in code; see [`FormatSpec::samples`].
    fn samples() -> Vec<(String, Vec<u8>)>;
}

impl FormatSpec {
    /// The registry entry of format `F`: its own parts from [`Format`], the shared entry
    /// points from the generic functions of this module (the schema stem is the root type's
    /// [`RootType::SCHEMA_ID`]).
    pub const fn of<F: Format>() -> FormatSpec {
        FormatSpec {
            name: F::NAME,
            title: F::TITLE,
            schema: F::SCHEMA_ID,
            detect: F::detect,
            decode_raw: decode_raw::<F>,
            decode_traced: decode_traced::<F>,
            decode_events: decode_events::<F>,
            decode_full: F::decode_full,
            reencode: reencode::<F>,
            to_json: to_json::<F>,
            write_json: write_json::<F>,
            from_json: from_json::<F>,
            from_json_text: from_json_text::<F>,
            samples: F::samples,
        }
    }
}

fn decode_raw<F: Format>(bytes: &[u8]) -> Result<(), DecodeError> {
    F::check_raw_limits(bytes)?;
    F::decode_root(bytes).map(|_| ())
}

fn decode_traced<F: Format>(bytes: &[u8]) -> TracedDecode {
    if let Err(e) = F::check_raw_limits(bytes) {
        return (
            Err(e),
            trace::TreeBuilder::new(F::SCHEMA_ID, bytes.len()).finish(0),
        );
    }
    let (r, t) = trace::decode_budgeted::<F>(bytes);
    (r.map(|_| ()), t)
}

fn decode_events<F: Format>(
    bytes: &[u8],
    tracer: events::SinkTracer<'_>,
) -> (Result<(), DecodeError>, u64) {
    if let Err(e) = F::check_raw_limits(bytes) {
        let at = e.offset;
        return (Err(e), at);
    }
    let (r, end) = F::decode_root_with(bytes, tracer);
    (r.map(|_| ()), end)
}

fn reencode<F: Format>(bytes: &[u8]) -> Result<Vec<u8>, String> {
    F::check_raw_limits(bytes).map_err(|e| e.to_string())?;
    let raw = F::decode_root(bytes).map_err(|e| e.to_string())?;
    raw.encode_root().map_err(|e| e.to_string())
}

fn to_json<F: Format>(bytes: &[u8]) -> Result<serde_json::Value, String> {
    F::decode_full(bytes).map_err(|e| e.to_string())?;
    let raw = F::decode_root(bytes).map_err(|e| e.to_string())?;
    serde_json::to_value(&raw).map_err(|e| e.to_string())
}

fn write_json<F: Format>(bytes: &[u8], out: &mut dyn std::io::Write) -> std::io::Result<()> {
    F::decode_full(bytes).map_err(invalid)?;
    let raw = F::decode_root(bytes).map_err(invalid)?;
    json::write_pretty(out, &raw)
}

/// serde_path_to_error names the field a bad value sits in (`recordings[0].frames[3].dt_ms`);
/// the bytes written must pass the format's full decode.
fn from_json<F: Format>(value: &serde_json::Value) -> Result<Vec<u8>, String> {
    // Read from the borrowed value: no copy of the document.
    let raw: F = serde_path_to_error::deserialize(value)
        .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
    let bytes = raw.encode_root().map_err(|e| e.to_string())?;
    F::decode_full(&bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// [`from_json`] from text; serde_json's own error text (value, line and column) follows the
/// field path.
fn from_json_text<F: Format>(text: &str) -> Result<Vec<u8>, String> {
    let mut de = serde_json::Deserializer::from_str(text);
    let raw: F = serde_path_to_error::deserialize(&mut de)
        .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
    de.end().map_err(|e| e.to_string())?;
    let bytes = raw.encode_root().map_err(|e| e.to_string())?;
    drop(raw);
    F::decode_full(&bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// The shape of a JSON document without its values, for [`unknown_key`]: objects keep their
/// keys, each with its value's shape; an array whose elements are all scalars becomes empty
/// (no keys can sit in it); an array holding objects or arrays keeps its length, scalars as
/// `null`; every scalar is `null`. Its size grows with the document's keys and nested
/// containers, not with its numbers.
///
/// # Errors
///
/// Text that is not one JSON document (serde_json's error, with line and column).
pub fn key_shape(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_str(text);
    let s = Shape::deserialize(&mut de)?;
    de.end()?;
    Ok(s.0)
}

/// The value of [`key_shape`] for one JSON value.
struct Shape(serde_json::Value);

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ShapeVisitor)
    }
}

struct ShapeVisitor;

impl<'de> serde::de::Visitor<'de> for ShapeVisitor {
    type Value = Shape;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape(serde_json::Value::Null))
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape(serde_json::Value::Null))
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape(serde_json::Value::Null))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape(serde_json::Value::Null))
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape(serde_json::Value::Null))
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape(serde_json::Value::Null))
    }
    fn visit_none<E>(self) -> Result<Shape, E> {
        Ok(Shape(serde_json::Value::Null))
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Shape, D::Error> {
        serde::Deserialize::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        let (mut n, mut kept) = (0usize, Vec::new());
        while let Some(Shape(v)) = seq.next_element()? {
            if !v.is_null() {
                kept.push((n, v));
            }
            n += 1;
        }
        if kept.is_empty() {
            return Ok(Shape(serde_json::Value::Array(Vec::new())));
        }
        let mut out = vec![serde_json::Value::Null; n];
        for (i, v) in kept {
            out[i] = v;
        }
        Ok(Shape(serde_json::Value::Array(out)))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        let mut m = serde_json::Map::new();
        while let Some((k, Shape(v))) = map.next_entry::<String, Shape>()? {
            m.insert(k, v);
        }
        Ok(Shape(serde_json::Value::Object(m)))
    }
}

/// Every format statepack implements.
pub const FORMATS: &[FormatSpec] = &[
    snap::FORMAT,
    rply::FORMAT,
    cbtrack::FORMAT,
    world_snapshot::FORMAT,
    study_tracks::FORMAT,
    anim_clip::FORMAT,
];

/// The format whose header `bytes` start with, if any.
pub fn detect(bytes: &[u8]) -> Option<&'static FormatSpec> {
    FORMATS.iter().find(|f| (f.detect)(bytes))
}

/// The format with this command-line name, if any.
pub fn by_name(name: &str) -> Option<&'static FormatSpec> {
    FORMATS.iter().find(|f| f.name == name)
}

/// Bytes from a format's raw-layer JSON, strictly: [`FormatSpec::from_json`], then two checks
/// it does not make on its own.
///
/// - Every object key of `value` must be a key of the layout. The written bytes are decoded
///   back to JSON ([`FormatSpec::to_json`]) and every key of `value` that has no counterpart
///   there, at the same path, is refused; the error names its path (`recordings[0].team`).
/// - The written bytes pass the format's full decode ([`FormatSpec::decode_full`]), the check
///   `statepack inspect` and `verify` make, so no file is written that they would refuse.
///
/// # Errors
///
/// The format's own error for JSON it cannot encode, `unknown key <path>` (with the keys the
/// layout has there), or the full decode's error (field path and byte offset).
pub fn from_json_strict(spec: &FormatSpec, value: &serde_json::Value) -> Result<Vec<u8>, String> {
    let bytes = (spec.from_json)(value)?;
    strict_checks(spec, value, bytes)
}

/// [`from_json_strict`] from JSON text and its [`key_shape`], in memory that grows with the
/// raw layer's own size rather than with `serde_json::Value`s of the document: the text is read
/// straight into the raw types, and the keys are checked against the shape of the JSON the
/// written bytes decode to (printed to text, then shaped), not against a `Value` of it.
///
/// # Errors
///
/// As for [`from_json_strict`].
pub fn from_json_text_strict(
    spec: &FormatSpec,
    text: &str,
    shape: &serde_json::Value,
) -> Result<Vec<u8>, String> {
    let bytes = (spec.from_json_text)(text)?;
    let mut back = Vec::new();
    (spec.write_json)(&bytes, &mut back).map_err(|e| e.to_string())?;
    let back = std::str::from_utf8(&back)
        .map_err(|e| e.to_string())
        .and_then(|t| key_shape(t).map_err(|e| e.to_string()))?;
    unknown_key(shape, &back, &mut String::new())?;
    (spec.decode_full)(&bytes).map_err(|e| {
        format!(
            "the bytes this JSON gives are not a valid {} file: {e}",
            spec.title
        )
    })?;
    Ok(bytes)
}

fn strict_checks(
    spec: &FormatSpec,
    value: &serde_json::Value,
    bytes: Vec<u8>,
) -> Result<Vec<u8>, String> {
    let back = (spec.to_json)(&bytes)?;
    unknown_key(value, &back, &mut String::new())?;
    (spec.decode_full)(&bytes).map_err(|e| {
        format!(
            "the bytes this JSON gives are not a valid {} file: {e}",
            spec.title
        )
    })?;
    Ok(bytes)
}

/// The first key of `given` with no counterpart in `known` at the same path, as an error.
fn unknown_key(
    given: &serde_json::Value,
    known: &serde_json::Value,
    path: &mut String,
) -> Result<(), String> {
    use serde_json::Value;
    match (given, known) {
        (Value::Object(g), Value::Object(k)) => {
            for (key, v) in g {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match k.get(key) {
                    Some(kv) => unknown_key(v, kv, path)?,
                    None => {
                        let mut names: Vec<&str> = k.keys().map(String::as_str).collect();
                        names.sort_unstable();
                        return Err(format!(
                            "unknown key `{path}` (the layout has here: {})",
                            names.join(", ")
                        ));
                    }
                }
                path.truncate(len);
            }
            Ok(())
        }
        (Value::Array(g), Value::Array(k)) => {
            for (i, (gv, kv)) in g.iter().zip(k).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                unknown_key(gv, kv, path)?;
                path.truncate(len);
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// An invalid file, as the `io::Error` of [`FormatSpec::write_json`].
pub(crate) fn invalid(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string())
}
