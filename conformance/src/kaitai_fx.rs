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
//! these types through `statepack_codegen::Options::processors`; [`suite_extensions`]
//! registers them, and the suite's opaque types, with the interpreter.

use statepack_codegen::interp::{Extensions, ProcArgs, SchemaOpaque};
use statepack_runtime::process::CustomProcessor;
use std::path::Path;

/// The opaque types the suite's `ks-opaque-types` schemas use: each is the suite schema of
/// the same name (`formats/<name>.ksy`), as the generated code uses that schema's module.
pub const SUITE_OPAQUE_TYPES: &[&str] = &["hello_world", "opaque_external_type_02_child"];

/// The interpreter's registry for the suite: the three processors of this module, built
/// from the evaluated `process:` arguments as the generated code builds them, and each of
/// [`SUITE_OPAQUE_TYPES`] as its schema in `formats` (the suite's `formats/` folder), read by
/// the interpreter itself. Errors: an opaque type's schema that cannot be read or loaded,
/// named with its first diagnostic.
pub fn suite_extensions(formats: &Path) -> Result<Extensions, String> {
    let mut ext = Extensions::default()
        .processor("my_custom_fx", |a: &ProcArgs<'_>| {
            a.expect_len(3)?;
            let p = MyCustomFx::new(a.int(0)?, a.bool(1)?, a.bytes(2)?);
            Ok(Box::new(p) as Box<dyn CustomProcessor>)
        })
        .processor("custom_fx_no_args", |a: &ProcArgs<'_>| {
            a.expect_len(0)?;
            Ok(Box::new(CustomFxNoArgs::new()) as Box<dyn CustomProcessor>)
        })
        .processor("nested.deeply.custom_fx", |a: &ProcArgs<'_>| {
            a.expect_len(1)?;
            Ok(Box::new(NestedCustomFx::new(a.int(0)?)) as Box<dyn CustomProcessor>)
        });
    for name in SUITE_OPAQUE_TYPES {
        let path = formats.join(format!("{name}.ksy"));
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let shown = format!("formats/{name}.ksy");
        let schema =
            statepack_codegen::load_checked(&text, &shown, &path, &[formats.join("ks_path")])
                .map_err(|d| {
                    format!(
                        "{shown}: {}",
                        d.first().map(|d| d.message.clone()).unwrap_or_default()
                    )
                })?;
        ext = ext.opaque(name, SchemaOpaque::new(schema)?);
    }
    Ok(ext)
}

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
