//! The generated readers and writers of Kaitai-language schemas on arbitrary bytes: every
//! schema of `codegen/tests/run/` (instances with `pos` from the data, recursive types,
//! counts from the data, process, params, `_parent` / `_root` / `_io`, switches, bit fields,
//! terminators, encodings, value instances), including `adversarial.ksy`, whose counts,
//! offsets, depths and sizes all come from the input.
//!
//! The first byte picks the schema; the rest is its input. For that input:
//! - decoding never panics, never hangs and never allocates more than the input justifies
//!   (libFuzzer's `-rss_limit_mb` and `-timeout` catch the last two);
//! - an input that decodes encodes again, and the bytes written are the bytes the reader
//!   consumed (a prefix of the input: root types may stop before its end).
#![no_main]

use libfuzzer_sys::fuzz_target;
use statepack_runtime::io::DecodeError;
use statepack_runtime::reflect::Reflect;

type DecodeFn = fn(&[u8]) -> Result<Box<dyn Reflect>, DecodeError>;
type RoundtripFn = fn(&[u8]) -> Result<Vec<u8>, String>;

include!(concat!(env!("OUT_DIR"), "/run_modules.rs"));

fuzz_target!(|data: &[u8]| {
    let Some((&pick, input)) = data.split_first() else {
        return;
    };
    let (name, decode, roundtrip) = SCHEMAS[usize::from(pick) % SCHEMAS.len()];
    if decode(input).is_err() {
        return;
    }
    let written = roundtrip(input)
        .unwrap_or_else(|e| panic!("{name}: an input that decodes does not re-encode: {e}"));
    assert!(
        input.starts_with(&written),
        "{name}: re-encoding wrote other bytes than it read\n read:  {input:02x?}\n wrote: {written:02x?}"
    );
});
