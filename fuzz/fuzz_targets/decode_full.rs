//! Full decoding (raw layer plus each format's own rules and reconstruction) of arbitrary
//! bytes, for every format in the registry.
//!
//! - `decode_full` never panics, and accepts only what `decode_raw` accepts.
//! - For any input it accepts, the JSON view (`to_json`, what `statepack decode` prints)
//!   exists, and `from_json` (what `statepack encode` writes) turns it back into the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use statepack::formats::FORMATS;

fuzz_target!(|data: &[u8]| {
    for f in FORMATS {
        if (f.decode_full)(data).is_err() {
            continue;
        }
        assert_eq!(
            (f.decode_raw)(data),
            Ok(()),
            "{}: decode_full accepts input that decode_raw refuses",
            f.name
        );
        let json = (f.to_json)(data)
            .unwrap_or_else(|e| panic!("{}: a fully decoded input has no JSON view: {e}", f.name));
        let bytes = (f.from_json)(&json)
            .unwrap_or_else(|e| panic!("{}: the JSON view does not encode: {e}\n{json}", f.name));
        assert!(
            bytes == data,
            "{}: the JSON round trip changed the bytes ({} in, {} out)",
            f.name,
            data.len(),
            bytes.len()
        );
    }
});
