//! Processors written in Rust for a schema's `process: name(args)` keys, and the external
//! (opaque) types of `ks-opaque-types: true` schemas.
//!
//! **Custom processors.** A field with `process: my_fx(7, true, [0x20])` (any name other than
//! Kaitai Struct's built-in `zlib`, `xor`, `rol`, `ror`) is generated as a call to a Rust
//! type implementing [`CustomProcessor`]: by default `super::MyFx`, the name in CamelCase
//! looked up in the module that holds the generated module (a dotted name
//! `nested.deeply.my_fx` becomes `super::nested::deeply::MyFx`); a build can map a name to
//! any path instead (`Options::processors` of statepack-codegen). The generated reader builds
//! the processor with `MyFx::new(args...)` from the key's arguments in order, each as
//! `i128` (integers), `bool` (conditions), `f64` (floats), `&str` (strings) or `&[u8]`
//! (byte arrays), and a name with no arguments with `MyFx::new()`. On read the stored bytes
//! (the field's `size`) go through [`CustomProcessor::decode`]; on write the value goes
//! through [`CustomProcessor::encode`], except that the bytes read are written back
//! unchanged while they still decode to the value (so decode then encode is byte-identical
//! whatever the processor's encoder would choose).
//!
//! **Opaque types.** In a schema with `meta.ks-opaque-types: true`, a field type that the
//! schema does not define names an external Rust type implementing [`OpaqueType`]: by
//! default `super::CamelName`, or the path given for the name in `Options::opaque_types`.
//! The generated module names it through a local alias (`pub type Name = <path>;`) and reads
//! and writes it with the methods of [`OpaqueType`] on the field's stream (a sized field
//! gives a substream of its size).

use crate::io::{
    ByteReader, ByteWriter, DecodeError, DecodeErrorKind, EncodeError, EncodeErrorKind, Tracer,
};
use std::borrow::Cow;

/// A byte transformation named by `process: name(args)`: `decode` turns the stored bytes
/// into the field's value, `encode` the value back into stored bytes.
pub trait CustomProcessor {
    /// The value of a field from its stored bytes. Errors: a message saying why the bytes
    /// cannot be decoded (the reader reports it with the field's path and offset).
    fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String>;
    /// The stored bytes for a value. Errors: a message saying why the value cannot be
    /// stored (the writer reports it with the field's path).
    fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String>;
}

/// Read side of a custom processor: `decode` of the stored bytes found at byte offset `at`.
/// Errors: `Semantic` with the processor's message.
pub fn unprocess_custom<P: CustomProcessor + ?Sized>(
    p: &P,
    stored: &[u8],
    at: u64,
) -> Result<Vec<u8>, DecodeError> {
    p.decode(stored)
        .map_err(|m| DecodeError::new(at, DecodeErrorKind::Semantic(format!("process: {m}"))))
}

/// [`unprocess_custom`] as generated readers call it, with the room left in the file's
/// processed-bytes budget: a custom processor's output is charged after it returns (see
/// [`crate::io::ByteReader::charge_processed`]), so `room` only matches the signature of
/// [`crate::io::unprocess_within`]. Errors: as [`unprocess_custom`].
pub fn unprocess_custom_within<P: CustomProcessor + ?Sized>(
    p: &P,
    stored: &[u8],
    at: u64,
    _room: u64,
) -> Result<Vec<u8>, DecodeError> {
    unprocess_custom(p, stored, at)
}

/// Write side of a custom processor: the bytes read (`kept`) when they still decode to
/// `value`, else `encode(value)`. Errors: `Semantic` with the processor's message.
pub fn reprocess_custom<'v, P: CustomProcessor + ?Sized>(
    p: &P,
    value: &[u8],
    kept: Option<&'v [u8]>,
) -> Result<Cow<'v, [u8]>, EncodeError> {
    if let Some(k) = kept {
        if p.decode(k).is_ok_and(|v| v == value) {
            return Ok(Cow::Borrowed(k));
        }
    }
    p.encode(value)
        .map(Cow::Owned)
        .map_err(|m| EncodeError::new(EncodeErrorKind::Semantic(format!("process: {m}"))))
}

/// An external type used by a schema with `ks-opaque-types: true`: read from the field's
/// stream, written back to the writer. The generated code names the type through a local
/// alias and calls these methods as `Name::read_from(r)`, `v.write_to(w)` and
/// `v.encoded_len()`, like those of a generated type; a generated type of another schema
/// can be made an opaque type by forwarding to its own methods. The containing generated
/// struct derives `Debug`, `Clone`, `PartialEq` and serde's `Serialize`/`Deserialize`, and
/// its dynamic view calls [`crate::reflect::ToValue`], so the type implements those too.
pub trait OpaqueType: Sized {
    /// The least number of bytes a value takes (bounds the count of a list before it is
    /// allocated); 0 when unknown.
    const MIN_LEN: usize = 0;
    /// Reads a value at the reader's position (for a sized field, the reader is limited to
    /// the field's bytes, which must all be used). Errors: a [`DecodeError`] at the offset
    /// where the bytes are wrong (the generated caller adds the field's path).
    fn read_from<T: Tracer>(r: &mut ByteReader<'_, T>) -> Result<Self, DecodeError>;
    /// Writes the value. Errors: an [`EncodeError`] for a value that cannot be stored.
    fn write_to(&self, w: &mut ByteWriter) -> Result<(), EncodeError>;
    /// The number of bytes [`OpaqueType::write_to`] writes.
    fn encoded_len(&self) -> usize;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adds `k` to every byte; refuses an empty buffer.
    struct AddK(u8);
    impl CustomProcessor for AddK {
        fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
            if stored.is_empty() {
                return Err("nothing to decode".into());
            }
            Ok(stored.iter().map(|b| b.wrapping_add(self.0)).collect())
        }
        fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
            Ok(value.iter().map(|b| b.wrapping_sub(self.0)).collect())
        }
    }

    #[test]
    fn kept_bytes_are_reused_while_they_decode_to_the_value() {
        let p = AddK(3);
        let stored = [1u8, 2, 3];
        let value = unprocess_custom(&p, &stored, 0).unwrap();
        assert_eq!(value, [4, 5, 6]);
        let out = reprocess_custom(&p, &value, Some(&stored)).unwrap();
        assert!(matches!(out, Cow::Borrowed(_)));
        let out = reprocess_custom(&p, &[9], Some(&stored)).unwrap();
        assert_eq!(&*out, &[6]);
    }

    #[test]
    fn processor_errors_carry_the_offset() {
        let e = unprocess_custom(&AddK(1), &[], 17).unwrap_err();
        assert_eq!(e.offset, 17);
        assert!(e.to_string().contains("nothing to decode"), "{e}");
    }
}
