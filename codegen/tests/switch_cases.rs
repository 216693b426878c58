//! Switch case types that are not user types: `str` and `strz` (in the switch's
//! `encoding`) and number types, in a switch with a `size` or without. Read from hand-made
//! bytes, written back byte for byte (what a case leaves of the size included), and read
//! by the interpreter to the same values as the generated reader.

use std::path::Path;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/switch_builtin.rs"]
mod switch_builtin;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/switch_expr_keys.rs"]
mod switch_expr_keys;

use switch_builtin::*;

/// The schema, loaded and checked as `decode --schema` loads it.
fn schema() -> statepack_codegen::typed::Checked {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/run/switch_builtin.ksy"
    ))
    .unwrap();
    statepack_codegen::load_checked(
        &text,
        "switch_builtin.ksy",
        Path::new("switch_builtin.ksy"),
        &[],
    )
    .unwrap()
}

/// Decodes `bytes` with the generated reader, checks that it writes them back, and that the
/// interpreter reads the same values and writes bytes that read back to them.
fn round_trip(bytes: &[u8]) -> SwitchBuiltin {
    let v = SwitchBuiltin::decode(bytes).unwrap();
    assert_eq!(v.encode().unwrap(), bytes, "decode then encode: {v:?}");
    let s = schema();
    let dynv = statepack_codegen::interp::decode(&s, bytes).unwrap();
    statepack_codegen::interp::compare(&dynv, &*switch_builtin::reflect_decode(bytes).unwrap())
        .unwrap();
    v
}

#[test]
fn strz_and_number_cases_keep_what_they_leave_of_the_size() {
    // code 1: `body` a strz in 6 bytes ("hi", its terminator, three more bytes kept),
    // `label` a strz, `num` a u1 in 4 bytes, `words` two u2 in 3 bytes each.
    let mut bytes = vec![1, 6];
    bytes.extend_from_slice(b"hi\0xyz");
    bytes.extend_from_slice("été\0".as_bytes());
    bytes.extend_from_slice(&[7, 0xaa, 0xbb, 0xcc]);
    bytes.extend_from_slice(&[0x34, 0x12, 0xee, 0x78, 0x56, 0xff]);
    let v = round_trip(&bytes);
    assert_eq!(v.body, SwitchBuiltinBody::Strz("hi".into()));
    assert_eq!(v.__tail_body.as_deref(), Some(&b"xyz"[..]));
    assert_eq!(v.label, SwitchBuiltinLabel::Strz("été".into()));
    assert_eq!(v.num, SwitchBuiltinNum::U1(7));
    assert_eq!(v.num.value(), Ok(7));
    assert_eq!(v.__tail_num.as_deref(), Some(&[0xaa, 0xbb, 0xcc][..]));
    assert_eq!(
        v.words,
        vec![
            SwitchBuiltinWords::U2le(0x1234),
            SwitchBuiltinWords::U2le(0x5678)
        ]
    );
    assert_eq!(v.__tail_words, vec![vec![0xee], vec![0xff]]);
    // Built without the kept bytes: the terminator, then zeros up to the size.
    let mut w = v.clone();
    w.__tail_body = None;
    w.__tail_num = None;
    w.__tail_words.clear();
    let mut want = vec![1, 6];
    want.extend_from_slice(b"hi\0\0\0\0");
    want.extend_from_slice("été\0".as_bytes());
    want.extend_from_slice(&[7, 0, 0, 0]);
    want.extend_from_slice(&[0x34, 0x12, 0, 0x78, 0x56, 0]);
    assert_eq!(w.encode().unwrap(), want);
    // A text that does not fit the size, or holds its terminator, is refused.
    let mut w = v.clone();
    w.body = SwitchBuiltinBody::Strz("toolong".into());
    assert!(
        w.encode().is_err(),
        "7 bytes and a terminator in a size of 6"
    );
    w.body = SwitchBuiltinBody::Strz("a\0b".into());
    assert!(w.encode().is_err(), "a zero inside a strz");
    // The case must be the one the switch value selects.
    let mut w = v.clone();
    w.body = SwitchBuiltinBody::Str("hi".into());
    assert!(w.encode().is_err(), "code 1 selects strz");
}

#[test]
fn str_cases_take_the_whole_size() {
    // code 2: `body` a str of 3 bytes, `label` a u1 (the default), `num` a u2be in 4
    // bytes, `words` two strz in 3 bytes each.
    let mut bytes = vec![2, 3];
    bytes.extend_from_slice(b"abc");
    bytes.push(9);
    bytes.extend_from_slice(&[0x01, 0x02, 0, 5]);
    bytes.extend_from_slice(b"a\0bcd\0");
    let v = round_trip(&bytes);
    assert_eq!(v.body, SwitchBuiltinBody::Str("abc".into()));
    assert_eq!(v.__tail_body.as_deref(), Some(&b""[..]));
    assert_eq!(v.label, SwitchBuiltinLabel::U1(9));
    assert_eq!(v.num, SwitchBuiltinNum::U2be(0x0102));
    assert_eq!(
        v.words,
        vec![
            SwitchBuiltinWords::Strz("a".into()),
            SwitchBuiltinWords::Strz("cd".into())
        ]
    );
    // The first word keeps the byte after its terminator; the second has none left.
    assert_eq!(v.__tail_words, vec![b"b".to_vec(), Vec::new()]);
    // `str` is the whole size: a shorter text is padded with zeros on write, and reads
    // back with them.
    let mut w = v.clone();
    w.body = SwitchBuiltinBody::Str("ab".into());
    w.__tail_body = None;
    let out = w.encode().unwrap();
    assert_eq!(&out[2..5], b"ab\0");
    // ASCII is checked on write.
    let mut w = v.clone();
    w.body = SwitchBuiltinBody::Str("é".into());
    assert!(w.encode().is_err(), "not ASCII");
}

#[test]
fn number_and_user_cases_in_a_sized_switch() {
    // code 3: `body` a u2 in 3 bytes; code 4: a user type keeping its own rest.
    let mut bytes = vec![3, 3, 0x02, 0x01, 0x55, 4];
    bytes.extend_from_slice(&[0xfe, 0xff, 0xff, 0xff]);
    bytes.extend_from_slice(b"x\0yz\0w");
    let v = round_trip(&bytes);
    assert_eq!(v.body, SwitchBuiltinBody::U2le(0x0102));
    assert_eq!(v.__tail_body.as_deref(), Some(&[0x55][..]));
    assert_eq!(v.num, SwitchBuiltinNum::S4le(-2));
    assert_eq!(
        v.body_number(),
        Ok(0x0103),
        "`.as<u2>` takes the number case"
    );
    let d = statepack_codegen::interp::decode(&schema(), &bytes).unwrap();
    assert!(
        matches!(
            d.get("body_number"),
            Some(statepack_codegen::interp::DynValue::Int(0x0103))
        ),
        "{:?}",
        d.get("body_number")
    );
    let mut bytes = vec![4, 2, 8, 9, 4];
    bytes.extend_from_slice(&[1, 0, 0, 0]);
    bytes.extend_from_slice(b"x\0yz\0w");
    let v = round_trip(&bytes);
    let SwitchBuiltinBody::Point(p) = &v.body else {
        panic!("{:?}", v.body)
    };
    assert_eq!((p.x, p.__unread.as_slice()), (8, &[9u8][..]));
    assert_eq!(v.__tail_body, None, "a user type keeps its own rest");
    let e = v.body_number().unwrap_err();
    assert!(e.0.contains("does not hold a `u2`"), "{e:?}");
    let d = statepack_codegen::interp::decode(&schema(), &bytes).unwrap();
    // The interpreter shows a value instance that cannot be computed as null, as it does
    // for `.as<point>` of another case.
    assert!(
        matches!(
            d.get("body_number"),
            Some(statepack_codegen::interp::DynValue::Null)
        ),
        "{:?}",
        d.get("body_number")
    );
}

#[test]
fn a_strz_case_without_its_terminator_is_an_error() {
    // code 1: the 3-byte body holds no zero byte.
    let bytes = [1, 3, b'a', b'b', b'c', b'x', 0];
    let e = SwitchBuiltin::decode(&bytes).unwrap_err();
    assert!(e.to_string().contains("body"), "{e}");
    assert!(statepack_codegen::interp::decode(&schema(), &bytes).is_err());
}

#[test]
fn the_interpreter_writes_string_and_number_cases_in_their_size() {
    use statepack_codegen::interp::{self, Given};
    let s = schema();
    let g = Given::Map(vec![
        ("code".into(), Given::Int(1)),
        ("len_body".into(), Given::Int(6)),
        ("body".into(), Given::Str("hi".into())),
        ("label".into(), Given::Str("été".into())),
        ("num".into(), Given::Int(7)),
        (
            "words".into(),
            Given::List(vec![Given::Int(0x1234), Given::Int(0x5678)]),
        ),
    ]);
    let (written, _) = interp::encode(&s, &g).unwrap();
    let mut want = vec![1, 6];
    want.extend_from_slice(b"hi\0\0\0\0");
    want.extend_from_slice("été\0".as_bytes());
    want.extend_from_slice(&[7, 0, 0, 0]);
    want.extend_from_slice(&[0x34, 0x12, 0, 0x78, 0x56, 0]);
    assert_eq!(written, want);
    // The generated writer writes the same bytes from the same values.
    let v = SwitchBuiltin::decode(&written).unwrap();
    assert_eq!(v.body, SwitchBuiltinBody::Strz("hi".into()));
    // A text longer than the size is refused naming the field.
    let mut g2 = g.clone();
    if let Given::Map(m) = &mut g2 {
        m[2].1 = Given::Str("much too long".into());
    }
    let e = interp::encode(&s, &g2).unwrap_err();
    assert!(e.starts_with("body"), "{e}");
}

#[test]
fn the_lua_backends_refuse_string_cases_by_name() {
    use statepack_codegen::lua_emit::{generate, Target};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/run/switch_builtin.ksy"
    ))
    .unwrap();
    for target in ["luau", "lua51"] {
        let t = Target::from_name(target).unwrap();
        let e = generate(&text, "switch_builtin.ksy", Path::new("."), &[], t).unwrap_err();
        let shown = statepack_codegen::render(&e);
        assert!(
            shown.contains("switch case type `strz`") && shown.contains("seq[2].type"),
            "{shown}"
        );
    }
    // `.as<u2>` of a switch that may hold a table: refused, not left unchecked.
    let mixed = "meta:\n  id: mx\n  endian: le\nseq:\n  - id: k\n    type: u1\n  - id: v\n    type:\n      switch-on: k\n      cases:\n        1: u2\n        2: pt\ninstances:\n  n:\n    value: v.as<u2>\ntypes:\n  pt:\n    seq:\n      - id: x\n        type: u1\n";
    for target in ["luau", "lua51"] {
        let t = Target::from_name(target).unwrap();
        let e = generate(mixed, "mx.ksy", Path::new("."), &[], t).unwrap_err();
        let shown = statepack_codegen::render(&e);
        assert!(shown.contains("`.as<u2>` of a switch"), "{shown}");
    }
}

#[test]
fn case_keys_may_be_expressions_tested_in_order() {
    use switch_expr_keys::{RecBody, SwitchExprKeys};
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/run/switch_expr_keys.ksy"
    ))
    .unwrap();
    let s = statepack_codegen::load_checked(
        &text,
        "switch_expr_keys.ksy",
        Path::new("switch_expr_keys.ksy"),
        &[],
    )
    .unwrap();
    // kind_a = 5: tag 5 is `_root.kind_a` (a u2), tag 3 is `1 + 2` (an s1).
    let bytes = [5, 5, 0x34, 0x12, 3, 0xff];
    let v = SwitchExprKeys::decode(&bytes).unwrap();
    assert_eq!(v.recs[0].body, RecBody::U2le(0x1234));
    assert_eq!(v.recs[1].body, RecBody::S1(-1));
    assert_eq!(v.encode().unwrap(), bytes);
    // kind_a = 3: both keys equal 3, and the first one written selects its case.
    let bytes = [3, 3, 0x34, 0x12, 7, 9];
    let v = SwitchExprKeys::decode(&bytes).unwrap();
    assert_eq!(v.recs[0].body, RecBody::U2le(0x1234));
    assert!(matches!(&v.recs[1].body, RecBody::Pt(p) if p.x == 9));
    assert_eq!(v.encode().unwrap(), bytes);
    for bytes in [
        &[5u8, 5, 0x34, 0x12, 3, 0xff][..],
        &[3, 3, 0x34, 0x12, 7, 9],
        &[1, 2, 8, 4, 4],
    ] {
        let d = statepack_codegen::interp::decode(&s, bytes).unwrap();
        statepack_codegen::interp::compare(&d, &*switch_expr_keys::reflect_decode(bytes).unwrap())
            .unwrap();
        assert_eq!(
            SwitchExprKeys::decode(bytes).unwrap().encode().unwrap(),
            bytes
        );
    }
    // The writer refuses a case no key selects.
    let mut w = SwitchExprKeys::decode(&[5, 5, 0x34, 0x12, 3, 0xff]).unwrap();
    w.recs[1].body = RecBody::U2le(1);
    assert!(w.encode().is_err(), "tag 3 does not select u2");
}
