//! JSON form of byte fields, for `#[serde(with = "...")]` on generated members.
//!
//! A `bytes` field is one hex string in JSON, two lowercase digits per byte in stored order
//! (`[0x53, 0x4e, 0x41]` is `"534e41"`, an empty field is `""`), instead of serde's default
//! array of one number per byte: an 8 KB field is one 16 KB line rather than 8,192 lines.
//! Reading accepts the hex string (upper or lower case digits) or an array of numbers 0..=255,
//! so JSON written before, or by hand, still reads. Works on the member shapes the generator
//! emits for byte fields: `Vec<u8>`, and `Option` or `Vec` of it (`if`, `repeat`), and an
//! `Option` of a `Vec` of them.
//!
//! Errors (on reading): a string of odd length, a character that is not a hex digit (with its
//! place in the string), or a number outside 0..=255; serde adds the member path.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use std::fmt;

/// A member shape with the hex JSON form (see the [module docs](self)).
pub trait BytesJson: Sized {
    /// Writes the member.
    fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
    /// Reads the member.
    fn de<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error>;
}

/// `serialize_with` entry point.
pub fn serialize<T: BytesJson, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    v.ser(s)
}

/// `deserialize_with` entry point.
pub fn deserialize<'de, T: BytesJson, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
    T::de(d)
}

/// Decodes a hex string into bytes. Errors: odd length or a non-hex character, named with its
/// place.
pub fn from_hex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err(format!(
            "a hex string needs two digits per byte, found {} digits",
            s.len()
        ));
    }
    let mut out = vec![0u8; s.len() / 2];
    hex::decode_to_slice(s, &mut out).map_err(|e| match e {
        hex::FromHexError::InvalidHexCharacter { c, index } => {
            format!("character {index} ({c:?}) is not a hex digit")
        }
        other => other.to_string(),
    })?;
    Ok(out)
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a hex string (two digits per byte) or an array of numbers 0..=255")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Vec<u8>, E> {
        from_hex(v).map_err(E::custom)
    }

    fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        // The hint comes from the input, which holds at least one character per element.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(out)
    }
}

impl BytesJson for Vec<u8> {
    fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(self))
    }

    fn de<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(BytesVisitor)
    }
}

/// One element of a `Vec` or `Option` member, through [`BytesJson`].
struct Elem<T>(T);

impl<T: BytesJson> serde::Serialize for Elem<&T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.ser(s)
    }
}

impl<'de, T: BytesJson> serde::Deserialize<'de> for Elem<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::de(d).map(Elem)
    }
}

impl<T: BytesJson> BytesJson for Option<T> {
    fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => s.serialize_some(&Elem(v)),
            None => s.serialize_none(),
        }
    }

    fn de<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Option<Elem<T>> = serde::Deserialize::deserialize(d)?;
        Ok(v.map(|e| e.0))
    }
}

impl BytesJson for Vec<Vec<u8>> {
    fn ser<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for v in self {
            seq.serialize_element(&Elem(v))?;
        }
        seq.end()
    }

    fn de<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Vec<Elem<Vec<u8>>> = serde::Deserialize::deserialize(d)?;
        Ok(v.into_iter().map(|e| e.0).collect())
    }
}

#[cfg(test)]
mod tests {
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct M {
        #[serde(with = "super")]
        a: Vec<u8>,
        #[serde(with = "super")]
        b: Option<Vec<u8>>,
        #[serde(with = "super")]
        c: Vec<Vec<u8>>,
        #[serde(with = "super")]
        d: Option<Vec<Vec<u8>>>,
    }

    #[test]
    fn hex_strings_both_ways() {
        let m = M {
            a: vec![0x53, 0x4e, 0x00, 0xff],
            b: None,
            c: vec![vec![], vec![1, 2]],
            d: Some(vec![vec![0xab]]),
        };
        let j = serde_json::to_string(&m).unwrap();
        assert_eq!(j, r#"{"a":"534e00ff","b":null,"c":["","0102"],"d":["ab"]}"#);
        assert_eq!(serde_json::from_str::<M>(&j).unwrap(), m);
    }

    #[test]
    fn number_arrays_and_upper_case_still_read() {
        let m: M =
            serde_json::from_str(r#"{"a":[83,78],"b":"ABcd","c":[[1],"02"],"d":null}"#).unwrap();
        assert_eq!(m.a, vec![83, 78]);
        assert_eq!(m.b, Some(vec![0xab, 0xcd]));
        assert_eq!(m.c, vec![vec![1], vec![2]]);
        assert_eq!(m.d, None);
    }

    #[test]
    fn bad_hex_is_refused_with_its_place() {
        let e = serde_json::from_str::<M>(r#"{"a":"0g","b":null,"c":[],"d":null}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("character 1 ('g') is not a hex digit"), "{e}");
        let e = serde_json::from_str::<M>(r#"{"a":"abc","b":null,"c":[],"d":null}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("two digits per byte, found 3 digits"), "{e}");
        let e = serde_json::from_str::<M>(r#"{"a":[256],"b":null,"c":[],"d":null}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("256"), "{e}");
    }
}
