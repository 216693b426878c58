//! Raw decoding of arbitrary bytes, for every format in the registry.
//!
//! - `decode_raw` and `decode_traced` never panic and agree (same value or same error).
//! - For any input that decodes, `reencode` succeeds and gives back exactly the input (the raw
//!   layer mirrors the bytes and a decode must consume the whole input), and those bytes
//!   decode and re-encode to themselves again.
//! - Input that does not decode is refused by `reencode` too.
#![no_main]

// Each target checks one of the shared properties.
#[allow(dead_code)]
#[path = "../properties.rs"]
mod properties;

use libfuzzer_sys::fuzz_target;
use statepack::formats::FORMATS;

fuzz_target!(|data: &[u8]| {
    for f in FORMATS {
        properties::check_raw(f, data);
    }
});
