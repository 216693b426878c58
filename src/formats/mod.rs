//! One module per format: the semantic API (recorders, readers, players) over the generated
//! raw types and the runtime's quantizers and delta chains.
//!
//! [`FORMATS`] lists every format with the same few entry points, so tools and checks that
//! apply to all formats (the CLI's `inspect`/`decode`, the Kaitai oracle, fuzzing, truncation
//! and mutation sweeps, the allocation bound) iterate over it. A new format joins them by
//! adding one [`FormatSpec`] here.

use statepack_runtime::io::{DecodeError, TraceNode};

pub mod events;
pub mod json;

pub mod acl_compare;
pub mod anim_clip;
pub mod cbtrack;
pub mod rply;
pub mod rply_crowd;
pub mod rply_samples;
pub mod snap;
pub mod study_report;
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
    /// Raw decode recording every field's byte range and value, as `inspect` prints it.
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
    /// Sample files built in code (spec goldens and writer output), name and bytes; the
    /// seed of every sweep, fuzz corpus and oracle run.
    pub samples: fn() -> Vec<(String, Vec<u8>)>,
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
