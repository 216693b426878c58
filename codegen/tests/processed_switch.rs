//! A switch of types read from processed bytes (`size` and `process` on a `switch-on`), and a
//! zlib stream cut at a terminator (`tests/run/processed_switch.ksy`): the selected case reads
//! the processed bytes as its own stream, the terminated field's bytes before the terminator
//! are inflated, and decode then encode is byte-identical; a changed value is processed anew.

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/processed_switch.rs"]
mod processed_switch;

use processed_switch::*;

/// `kind` 1, the pair (0x0201, 0x0403) xored with 0x5a, "hello hello hello" deflated at
/// level 6, the terminator, and `last` = 9.
fn bytes() -> Vec<u8> {
    let mut b = vec![1u8];
    b.extend([1u8, 2, 3, 4].iter().map(|x| x ^ 0x5a));
    let packed = statepack_runtime::zlib::deflate(b"hello hello hello", 6);
    assert!(!packed.contains(&0xff));
    b.extend(packed);
    b.extend([0xff, 9]);
    b
}

#[test]
fn the_case_and_the_terminated_stream_read_from_the_processed_bytes() {
    let b = bytes();
    let v = ProcessedSwitch::decode(&b).unwrap();
    let ProcessedSwitchBody::Pair(p) = &v.body else {
        panic!("{:?}", v.body)
    };
    assert_eq!((p.a, p.b), (0x0201, 0x0403));
    assert_eq!(v.packed.s, "hello hello hello");
    assert_eq!(v.last, 9);
    assert_eq!(v.encode().unwrap(), b);
}

#[test]
fn a_changed_value_is_processed_anew() {
    let mut v = ProcessedSwitch::decode(&bytes()).unwrap();
    v.kind = 2;
    v.body = ProcessedSwitchBody::Word(Word {
        w: 0x0a0b0c0d,
        ..Default::default()
    });
    v.packed.s = "bye".into();
    let out = v.encode().unwrap();
    assert_eq!(
        &out[..5],
        &[2, 0x0d ^ 0x5a, 0x0c ^ 0x5a, 0x0b ^ 0x5a, 0x0a ^ 0x5a]
    );
    let back = ProcessedSwitch::decode(&out).unwrap();
    assert_eq!(back.body, v.body);
    assert_eq!(back.packed.s, "bye");
    assert_eq!(back.last, 9);
    // The switch value must select the case the value holds.
    v.kind = 1;
    assert!(v.encode().is_err());
}
