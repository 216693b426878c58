//! Full decoding (raw layer plus each format's own rules and reconstruction) of arbitrary
//! bytes, for every format in the registry.
//!
//! - `decode_full` never panics, and accepts only what `decode_raw` accepts.
//! - For any input it accepts, the JSON view (`to_json`, what `statepack decode` prints)
//!   exists, and `from_json` (what `statepack encode` writes) turns it back into the same bytes.
#![no_main]

// Each target checks one of the shared properties.
#[allow(dead_code)]
#[path = "../properties.rs"]
mod properties;

use libfuzzer_sys::fuzz_target;
use statepack::formats::FORMATS;

fuzz_target!(|data: &[u8]| {
    for f in FORMATS {
        properties::check_full(f, data);
    }
});
