//! RPLY v3 in the format registry.

use super::*;
use statepack_runtime::io::{DecodeError, DecodeErrorKind};

/// RPLY v3 in the format registry ([`crate::formats::FORMATS`]).
pub const FORMAT: crate::formats::FormatSpec = crate::formats::FormatSpec::of::<RplyV3>();

/// RPLY v3's own parts of its registry entry; the rest is shared ([`crate::formats::FormatSpec::of`]).
impl crate::formats::Format for RplyV3 {
    const NAME: &'static str = "rply";
    const TITLE: &'static str = "RPLY v3";
    fn detect(b: &[u8]) -> bool {
        b.starts_with(MAGIC) || (!b.is_empty() && MAGIC.starts_with(b))
    }
    fn decode_full(b: &[u8]) -> Result<(), DecodeError> {
        verify(b).map(|_| ()).map_err(|e| match e {
            RplyError::Decode(d) => d,
            other => DecodeError::new(0, DecodeErrorKind::Semantic(other.to_string())),
        })
    }
    fn samples() -> Vec<(String, Vec<u8>)> {
        super::samples::sample_files()
    }
}
