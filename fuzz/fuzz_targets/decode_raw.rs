//! Raw decoding of arbitrary bytes, for every format in the registry.
//!
//! - `decode_raw` and `decode_traced` never panic and agree (same value or same error).
//! - For any input that decodes, `reencode` succeeds and gives back exactly the input (the raw
//!   layer mirrors the bytes and a decode must consume the whole input), and those bytes
//!   decode and re-encode to themselves again.
//! - Input that does not decode is refused by `reencode` too.
#![no_main]

use libfuzzer_sys::fuzz_target;
use statepack::formats::FORMATS;

fuzz_target!(|data: &[u8]| {
    for f in FORMATS {
        let raw = (f.decode_raw)(data);
        let (traced, _tree) = (f.decode_traced)(data);
        assert_eq!(
            raw, traced,
            "{}: decode_raw and decode_traced disagree",
            f.name
        );
        match raw {
            Ok(()) => {
                let bytes = (f.reencode)(data).unwrap_or_else(|e| {
                    panic!("{}: decoded input fails to re-encode: {e}", f.name)
                });
                assert!(
                    bytes == data,
                    "{}: re-encoding changed the bytes ({} in, {} out)",
                    f.name,
                    data.len(),
                    bytes.len()
                );
                assert_eq!((f.decode_raw)(&bytes), Ok(()), "{}", f.name);
                assert_eq!(
                    (f.reencode)(&bytes).as_deref(),
                    Ok(&bytes[..]),
                    "{}",
                    f.name
                );
            }
            Err(_) => assert!(
                (f.reencode)(data).is_err(),
                "{}: reencode accepts input that decode_raw refuses",
                f.name
            ),
        }
    }
});
