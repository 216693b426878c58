//! The custom processors that Kaitai Struct's test suite names in `process:` keys, with the
//! semantics the suite's expectations pin down (written here from those expectations):
//!
//! - `my_custom_fx(key, flag, bytes)`: every byte plus `key` (wrapping), or minus `key` when
//!   `flag` is false; the byte array is not used. Encoding subtracts (or adds) it back.
//! - `nested.deeply.custom_fx(key)` and `custom_fx_no_args`: the stored bytes framed by one
//!   `_` (0x5f) on each side; `key` is not used. Encoding removes the frame, and refuses a
//!   value without it.
//!
//! The build script (`suite_options` in `conformance/build.rs`) maps the three names to
//! these types through `statepack_codegen::Options::processors`.

use statepack_runtime::process::CustomProcessor;

/// `my_custom_fx(key, flag, bytes)`: adds `key` to every byte (subtracts it when `flag` is
/// false).
#[derive(Debug, Clone, Copy)]
pub struct MyCustomFx {
    /// The amount added to every byte on decode, modulo 256.
    add: u8,
}

impl MyCustomFx {
    /// The processor for `my_custom_fx(key, flag, some_bytes)`; `some_bytes` is not used.
    pub fn new(key: i128, flag: bool, _some_bytes: &[u8]) -> Self {
        let k = key.rem_euclid(256) as u8;
        Self {
            add: if flag { k } else { k.wrapping_neg() },
        }
    }
}

impl CustomProcessor for MyCustomFx {
    fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
        Ok(stored.iter().map(|b| b.wrapping_add(self.add)).collect())
    }
    fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
        Ok(value.iter().map(|b| b.wrapping_sub(self.add)).collect())
    }
}

/// The stored bytes between two `_` frame bytes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Framed;

impl CustomProcessor for Framed {
    fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
        let mut v = Vec::with_capacity(stored.len() + 2);
        v.push(b'_');
        v.extend_from_slice(stored);
        v.push(b'_');
        Ok(v)
    }
    fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
        value
            .strip_prefix(b"_")
            .and_then(|v| v.strip_suffix(b"_"))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| "the value is not framed by `_` on both sides".to_owned())
    }
}

/// `custom_fx_no_args`: [`Framed`].
#[derive(Debug, Clone, Copy, Default)]
pub struct CustomFxNoArgs(Framed);

impl CustomFxNoArgs {
    /// The processor (it has no arguments).
    pub fn new() -> Self {
        Self(Framed)
    }
}

impl CustomProcessor for CustomFxNoArgs {
    fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
        self.0.decode(stored)
    }
    fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
        self.0.encode(value)
    }
}

/// `nested.deeply.custom_fx(key)`: [`Framed`]; `key` is not used.
#[derive(Debug, Clone, Copy, Default)]
pub struct NestedCustomFx(Framed);

impl NestedCustomFx {
    /// The processor for `nested.deeply.custom_fx(key)`.
    pub fn new(_key: i128) -> Self {
        Self(Framed)
    }
}

impl CustomProcessor for NestedCustomFx {
    fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
        self.0.decode(stored)
    }
    fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
        self.0.encode(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_expectations() {
        // process_rotate.bin's first bytes and the kst's expected values.
        let p = MyCustomFx::new(7, true, &[0x20]);
        assert_eq!(
            p.decode(&[0x09, 0xac, 0x8d, 0x8d, 0xed]).unwrap(),
            [0x10, 0xb3, 0x94, 0x94, 0xf4]
        );
        let q = MyCustomFx::new(1, false, &[0]);
        assert_eq!(q.decode(&[0x2a, 0x34]).unwrap(), [0x29, 0x33]);
        assert_eq!(q.encode(&[0x29, 0x33]).unwrap(), [0x2a, 0x34]);
        let f = NestedCustomFx::new(7);
        assert_eq!(f.decode(&[0xba, 0x7b]).unwrap(), [0x5f, 0xba, 0x7b, 0x5f]);
        assert_eq!(f.encode(&[0x5f, 1, 0x5f]).unwrap(), [1]);
        assert!(f.encode(&[1, 2]).is_err());
    }
}
