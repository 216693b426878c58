//! The properties every decoder must have on any input, in one place: the fuzz targets check
//! them on generated inputs and `tests/fuzz_regressions.rs` on the saved ones and the samples.

use statepack::formats::FormatSpec;

/// Raw decoding: `decode_raw` and `decode_traced` agree (same value or same error); an input
/// that decodes re-encodes (`reencode`) to exactly the input bytes, which decode and re-encode
/// to themselves again; an input that does not decode is refused by `reencode` too.
pub fn check_raw(f: &FormatSpec, data: &[u8]) {
    let raw = (f.decode_raw)(data);
    let (traced, _tree) = (f.decode_traced)(data);
    assert_eq!(
        raw, traced,
        "{}: decode_raw and decode_traced disagree",
        f.name
    );
    match raw {
        Ok(()) => {
            let bytes = (f.reencode)(data)
                .unwrap_or_else(|e| panic!("{}: decoded input fails to re-encode: {e}", f.name));
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

/// Full decoding: `decode_full` accepts only what `decode_raw` accepts, and for any input it
/// accepts, the JSON view (`to_json`, what `statepack decode` prints) exists and `from_json`
/// (what `statepack encode` writes) turns it back into the same bytes.
pub fn check_full(f: &FormatSpec, data: &[u8]) {
    if (f.decode_full)(data).is_err() {
        return;
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
