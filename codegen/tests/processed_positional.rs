//! A positional instance inside a processed field (`tests/run/processed_positional.ksy`): it
//! reads from the processed substream, and on write it is laid out in that substream before
//! the substream is processed again, so decode then encode is byte-identical, and a changed
//! instance that disagrees with the bytes kept around it is refused with its name instead of
//! being dropped.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/processed_positional.rs"]
mod processed_positional;

use processed_positional::ProcessedPositional;

/// `len` = 3, then the chunk [ofs = 2, 0x00, 0x77] xor 0x5a.
fn bytes() -> Vec<u8> {
    let plain = [2u8, 0x00, 0x77];
    let mut b = vec![plain.len() as u8];
    b.extend(plain.iter().map(|x| x ^ 0x5a));
    b
}

#[test]
fn instances_read_from_their_streams_and_write_back_identically() {
    let b = bytes();
    let v = ProcessedPositional::decode(&b).unwrap();
    assert_eq!(v.chunk.ofs, 2);
    assert_eq!(v.chunk.at_ofs, 0x77);
    assert_eq!(v.encode().unwrap(), b);
}

#[test]
fn a_changed_instance_is_refused_not_dropped() {
    let mut v = ProcessedPositional::decode(&bytes()).unwrap();
    v.chunk.at_ofs = 0x78;
    let e = v.encode().unwrap_err().to_string();
    assert!(e.contains("at_ofs"), "{e}");
}
