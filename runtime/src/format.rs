//! The one shape of a generated root type: [`RootType`], which the generator implements for
//! every schema's root type (one without `params`), so that tools written once work over
//! every format: decode a whole file, decode it while recording or streaming its structure,
//! and encode it back.
//!
//! JSON is not part of the trait: every generated type also derives `serde::Serialize` and
//! `serde::Deserialize` (the raw layer as `statepack decode` prints it), and code that needs
//! JSON asks for those bounds beside `RootType` (`R: RootType + Serialize +
//! DeserializeOwned`), so this module does not depend on serde.

use crate::io::{ByteReader, DecodeError, EncodeError, TraceNode, Tracer, TreeTracer};

/// A schema's root type: a whole file's raw layer.
///
/// Implemented by the generated code for each root type without `params` (a root type with
/// params needs its arguments, which a file alone does not give). The provided methods read
/// the whole input: the data must end exactly where the root type ends.
pub trait RootType: Sized {
    /// The schema's `meta.id` (`rply_v3`), also the stem of its `.ksy` file and generated
    /// module.
    const SCHEMA_ID: &'static str;

    /// Reads one value at the reader's position (the generated `read_from`).
    ///
    /// Errors: [`DecodeError`] with the field path (from the root) and the absolute byte
    /// offset.
    fn read_root<T: Tracer>(r: &mut ByteReader<'_, T>) -> Result<Self, DecodeError>;

    /// Encodes the value to a new byte vector; counts, lengths and sums are derived from the
    /// data.
    ///
    /// Errors: [`EncodeError`] when a value does not fit its stored type or breaks a schema
    /// rule, naming the field.
    fn encode_root(&self) -> Result<Vec<u8>, EncodeError>;

    /// Decodes a whole file.
    ///
    /// Errors: any [`DecodeError`] of [`RootType::read_root`], or trailing bytes after the
    /// root type's end (naming their offset).
    fn decode_root(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = ByteReader::new(bytes);
        let v = Self::read_root(&mut r)?;
        r.finish()?;
        Ok(v)
    }

    /// Decodes a whole file sending every field to `tracer`; returns the result and the byte
    /// offset where reading stopped (the end of the file on success, the failing field's
    /// position on error).
    fn decode_root_with<T: Tracer>(bytes: &[u8], tracer: T) -> (Result<Self, DecodeError>, u64) {
        let mut r = ByteReader::with_tracer(bytes, tracer);
        let v = Self::read_root(&mut r).and_then(|v| {
            r.finish()?;
            Ok(v)
        });
        (v, r.offset())
    }

    /// Decodes a whole file recording its structure: every field's byte range and value, as
    /// `statepack inspect` prints it. The tree is returned even when decoding fails, up to
    /// the failing field.
    fn decode_root_traced(bytes: &[u8]) -> (Result<Self, DecodeError>, TraceNode) {
        let mut r = ByteReader::with_tracer(bytes, TreeTracer::new(Self::SCHEMA_ID));
        let v = Self::read_root(&mut r).and_then(|v| {
            r.finish()?;
            Ok(v)
        });
        let end = r.offset();
        (v, r.tracer.finish(end))
    }
}
