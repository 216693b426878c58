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
//! gives a substream of its size); a field that gives the type arguments (`type:
//! name(len, true)`) reads it with [`OpaqueType::read_with_args`].

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

/// An argument a schema gives an opaque type (`type: name(5, true)`), one per expression
/// written, in the forms custom processors take theirs: integers as `i128`, conditions,
/// floats as `f64`, strings and byte arrays borrowed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OpaqueArg<'a> {
    /// An integer expression.
    Int(i128),
    /// A condition.
    Bool(bool),
    /// A float expression.
    Float(f64),
    /// A string.
    Str(&'a str),
    /// A byte array.
    Bytes(&'a [u8]),
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
    /// Reads a value with the arguments the schema gives the type (`type: name(5, true)`:
    /// `[OpaqueArg::Int(5), OpaqueArg::Bool(true)]`), evaluated where the field is read. The
    /// generated code calls it instead of [`OpaqueType::read_from`] for a field that gives
    /// arguments; the writer calls [`OpaqueType::write_to`] as for any other (the value
    /// holds what it needs). The default reads with `read_from` when there are no arguments
    /// and refuses any. Errors: as `read_from`; the default's refusal is `Semantic` at the
    /// reader's offset.
    fn read_with_args<T: Tracer>(
        r: &mut ByteReader<'_, T>,
        args: &[OpaqueArg<'_>],
    ) -> Result<Self, DecodeError> {
        if args.is_empty() {
            return Self::read_from(r);
        }
        Err(DecodeError::new(
            r.offset(),
            DecodeErrorKind::Semantic(format!(
                "this opaque type takes no arguments, but the schema gives {}",
                args.len()
            )),
        ))
    }
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

    /// One byte, an opaque type that takes no arguments.
    #[derive(Debug)]
    struct OneByte(u8);
    impl OpaqueType for OneByte {
        fn read_from<T: Tracer>(r: &mut ByteReader<'_, T>) -> Result<Self, DecodeError> {
            Ok(OneByte(r.read_u8()?))
        }
        fn write_to(&self, w: &mut ByteWriter) -> Result<(), EncodeError> {
            w.write_u8(self.0);
            Ok(())
        }
        fn encoded_len(&self) -> usize {
            1
        }
    }

    #[test]
    fn an_opaque_type_without_arguments_refuses_them_by_default() {
        let bytes = [7u8, 8];
        let mut r = ByteReader::new(&bytes);
        assert_eq!(OneByte::read_with_args(&mut r, &[]).unwrap().0, 7);
        let e = OneByte::read_with_args(&mut r, &[OpaqueArg::Int(5), OpaqueArg::Bool(true)])
            .unwrap_err();
        assert_eq!(e.offset, 1);
        assert!(
            e.to_string()
                .contains("takes no arguments, but the schema gives 2"),
            "{e}"
        );
    }

    #[test]
    fn processor_errors_carry_the_offset() {
        let e = unprocess_custom(&AddK(1), &[], 17).unwrap_err();
        assert_eq!(e.offset, 17);
        assert!(e.to_string().contains("nothing to decode"), "{e}");
    }
}
