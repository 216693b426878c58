//! RPLY v3 in the format registry.

use super::*;
use statepack_runtime::io::{DecodeError, DecodeErrorKind};

/// RPLY v3 in the format registry ([`crate::formats::FORMATS`]).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec {
    name: "rply",
    title: "RPLY v3",
    schema: "rply_v3",
    detect: |b| b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b)),
    decode_raw: |b| RplyV3::decode(b).map(|_| ()),
    decode_traced: |b| {
        let (r, t) = RplyV3::decode_traced(b);
        (r.map(|_| ()), t)
    },
    decode_events: crate::formats::events::decode_events_of!(RplyV3),
    decode_full: |b| {
        verify(b).map(|_| ()).map_err(|e| match e {
            RplyError::Decode(d) => d,
            other => DecodeError::new(0, DecodeErrorKind::Semantic(other.to_string())),
        })
    },
    reencode: |b| {
        let raw = RplyV3::decode(b).map_err(|e| e.to_string())?;
        raw.encode().map_err(|e| e.to_string())
    },
    to_json: |b| {
        verify(b).map_err(|e| e.to_string())?;
        let raw = RplyV3::decode(b).map_err(|e| e.to_string())?;
        serde_json::to_value(&raw).map_err(|e| e.to_string())
    },
    write_json: |b, out| {
        verify(b).map_err(crate::formats::invalid)?;
        let raw = RplyV3::decode(b).map_err(crate::formats::invalid)?;
        crate::formats::json::write_pretty(out, &raw)
    },
    from_json: |v| {
        let raw: RplyV3 = serde_path_to_error::deserialize(v.clone())
            .map_err(|e| format!("{}: {}", e.path(), e.inner()))?;
        let bytes = raw.encode().map_err(|e| e.to_string())?;
        verify(&bytes).map_err(|e| e.to_string())?;
        Ok(bytes)
    },
    samples: super::samples::sample_files,
};
