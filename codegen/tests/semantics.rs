//! Generated readers and writers, run: the small schemas in `tests/run/` are generated into
//! `tests/run/<stem>.rs` (checked in; refresh with
//! `cargo run -p statepack-codegen -- codegen/tests/run codegen/tests/run`), compiled here
//! and exercised on hand-made bytes. One test per language rule, with exact values.

use statepack_runtime::reflect::Value;
use std::path::Path;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/bits_le_enum.rs"]
mod bits_le_enum;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/bits_padding.rs"]
mod bits_padding;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/expr_methods.rs"]
mod expr_methods;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/imports_main.rs"]
mod imports_main;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/io_sized.rs"]
mod io_sized;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/kaitai_rules.rs"]
mod kaitai_rules;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/lists_valid.rs"]
mod lists_valid;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/misc_bits.rs"]
mod misc_bits;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/misc_lang.rs"]
mod misc_lang;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/misc_num_switch.rs"]
mod misc_num_switch;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/misc_proc.rs"]
mod misc_proc;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/misc_root_params.rs"]
mod misc_root_params;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/misc_switch.rs"]
mod misc_switch;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/nested_scopes.rs"]
mod nested_scopes;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/custom_process.rs"]
mod custom_process;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/opaque.rs"]
mod opaque;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/recursion.rs"]
mod recursion;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/context.rs"]
mod context;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/context_write.rs"]
mod context_write;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/context_measured.rs"]
mod context_measured;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/context_whole.rs"]
mod context_whole;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/params_any_struct.rs"]
mod params_any_struct;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/params.rs"]
mod params;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/positional.rs"]
mod positional;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/mixed_switch.rs"]
mod mixed_switch;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/valid_user.rs"]
mod valid_user;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/described.rs"]
mod described;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/name_clashes.rs"]
mod name_clashes;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/name_paths.rs"]
mod name_paths;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/default.rs"]
mod default;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/positional_chain.rs"]
mod positional_chain;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/processed.rs"]
mod processed;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/processed_len.rs"]
mod processed_len;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/reflect_view.rs"]
mod reflect_view;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/seq_exprs.rs"]
mod seq_exprs;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/strict_rules.rs"]
mod strict_rules;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/switch_sized.rs"]
mod switch_sized;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/switch_str.rs"]
mod switch_str;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/terminators.rs"]
mod terminators;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/value_instances.rs"]
mod value_instances;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/endian_switch.rs"]
mod endian_switch;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/io_other.rs"]
mod io_other;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/io_values.rs"]
mod io_values;
#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/contents_cast.rs"]
mod contents_cast;

/// The checked-in generated code is what the generator makes of the schemas today.
#[test]
fn generated_code_is_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run");
    let mut stale = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some("ksy"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty());
    for p in entries {
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        let text = std::fs::read_to_string(&p).unwrap();
        let code = statepack_codegen::generate_at(&text, &format!("codegen/tests/run/{name}"), &p)
            .unwrap_or_else(|d| panic!("{name}: {}", statepack_codegen::render(&d)));
        let rs = p.with_extension("rs");
        if std::fs::read_to_string(&rs).ok().as_deref() != Some(code.as_str()) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated code for {stale:?}; run `cargo run -p statepack-codegen -- codegen/tests/run codegen/tests/run`"
    );
}

fn int(v: Option<Value<'_>>) -> i128 {
    match v {
        Some(Value::Int(i)) => i,
        other => panic!("not an integer: {other:?}"),
    }
}

#[test]
fn reflect_answers_every_member_by_schema_name() {
    // magic "RV", n = 2, two items (flag + 7 bits), kind = point, x = -3, extra = 0x0102, raw.
    let bytes = [
        0x52, 0x56, 2, 0x85, 0x01, 1, 0xfd, 0xff, 0x02, 0x01, 9, 8, 0xee,
    ];
    let root = reflect_view::reflect_decode(&bytes).expect("decodes; the trailing byte is allowed");
    assert_eq!(root.schema_type(), "reflect_view");
    assert_eq!(
        root.member_names(),
        ["magic", "n", "items", "kind", "body", "extra", "raw"]
    );
    assert!(matches!(root.member("magic"), Some(Value::Bytes(b)) if b.as_ref() == b"RV"));
    // `n` is derived on write (the count of `items`), not a struct member: still answered.
    assert_eq!(int(root.member("n")), 2);
    let Some(Value::List(items)) = root.member("items") else {
        panic!("items is a list")
    };
    assert_eq!(items.len(), 2);
    let first = items[0].as_struct().unwrap();
    assert_eq!(first.schema_type(), "item");
    assert!(matches!(first.member("flag"), Some(Value::Bool(true))));
    assert_eq!(int(first.member("rest")), 5);
    assert!(matches!(
        items[1].as_struct().unwrap().member("flag"),
        Some(Value::Bool(false))
    ));
    match root.member("kind") {
        Some(Value::Enum(e)) => {
            assert_eq!((e.enum_name, e.name, e.value), ("kind", Some("point"), 1));
        }
        other => panic!("kind: {other:?}"),
    }
    let body = root.member("body").unwrap();
    let body = body.as_struct().expect("the selected case");
    assert_eq!(body.schema_type(), "point");
    assert_eq!(int(body.member("x")), -3);
    assert_eq!(int(root.member("extra")), 0x0102);
    let Some(Value::List(raw)) = root.member("raw") else {
        panic!("raw is a list")
    };
    assert!(matches!(raw.as_slice(), [Value::Int(9), Value::Int(8)]));
    assert!(root.member("nope").is_none());
    // Decode then encode gives back the consumed prefix.
    let again = reflect_view::reflect_roundtrip(&bytes).unwrap();
    assert_eq!(again, bytes[..bytes.len() - 1]);
}

#[test]
fn reflect_absent_conditional_member_is_null() {
    let bytes = [0x52, 0x56, 1, 0x00, 1, 0x01, 0x00, 4, 5];
    let root = reflect_view::reflect_decode(&bytes).unwrap();
    assert!(matches!(root.member("extra"), Some(Value::Null)));
    assert_eq!(int(root.member("n")), 1);
}

/// -52947 as s4le.
const NEG: [u8; 4] = (-52947i32).to_le_bytes();

fn kaitai_bytes(kind: u8, pick: u8) -> Vec<u8> {
    let mut b = NEG.to_vec();
    // floors (present only when `/` floors and `%` takes the divisor's sign), len_body = 4,
    // body: `u3` reads one byte of its four.
    b.extend_from_slice(&[0xaa, 4, 7, 0xd0, 0xd1, 0xd2, kind, pick]);
    if pick == 1 {
        b.push(0x33);
    }
    b.push(0xee);
    b
}

#[test]
fn integer_division_floors_and_remainder_takes_the_divisor_sign() {
    let v = kaitai_rules::KaitaiRules::decode(&kaitai_bytes(1, 1)).unwrap();
    assert_eq!(v.neg, -52947);
    assert_eq!(
        v.floors,
        Some(0xaa),
        "the condition uses -52947 / 13 == -4073 and % == 2"
    );
}

#[test]
fn sized_type_that_stops_early_skips_and_keeps_the_rest() {
    let bytes = kaitai_bytes(1, 1);
    let v = kaitai_rules::KaitaiRules::decode(&bytes).unwrap();
    assert_eq!(v.body.a, 7);
    assert_eq!(v.body.__unread, [0xd0, 0xd1, 0xd2]);
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "the skipped bytes are written back"
    );
    let root = kaitai_rules::reflect_decode(&bytes).unwrap();
    assert_eq!(int(root.member("len_body")), 4);
    // A type named like a number type is the user type.
    assert_eq!(
        int(root
            .member("body")
            .unwrap()
            .as_struct()
            .unwrap()
            .member("a")),
        7
    );
}

#[test]
fn switch_without_matching_case_holds_nothing() {
    let bytes = kaitai_bytes(1, 9);
    let v = kaitai_rules::KaitaiRules::decode(&bytes).unwrap();
    assert_eq!(v.choice, kaitai_rules::KaitaiRulesChoice::NoCase);
    assert_eq!(v.tail, 0xee);
    assert_eq!(v.encode().unwrap(), bytes);
    let root = kaitai_rules::reflect_decode(&bytes).unwrap();
    assert!(matches!(root.member("choice"), Some(Value::Null)));
    // A `NoCase` value where the switch selects a case cannot be written.
    let mut w = v.clone();
    w.pick = 1;
    assert!(w.encode().is_err());
}

#[test]
fn enums_are_open_unknown_values_are_kept() {
    let bytes = kaitai_bytes(5, 1);
    let v = kaitai_rules::KaitaiRules::decode(&bytes).unwrap();
    assert_eq!(v.kind, kaitai_rules::Animal::Unlisted(5));
    assert_eq!(v.encode().unwrap(), bytes);
    let root = kaitai_rules::reflect_decode(&bytes).unwrap();
    match root.member("kind") {
        Some(Value::Enum(e)) => assert_eq!((e.enum_name, e.name, e.value), ("animal", None, 5)),
        other => panic!("{other:?}"),
    }
    // An unlisted value that does not fit the stored type is refused, never wrapped.
    let mut w = v.clone();
    w.kind = kaitai_rules::Animal::Unlisted(256);
    let e = w.encode().unwrap_err().to_string();
    assert!(e.contains("kind") && e.contains("256"), "{e}");
    // `-` keys inside an enum value are ignored: the value is still `dog`.
    let v = kaitai_rules::KaitaiRules::decode(&kaitai_bytes(2, 1)).unwrap();
    assert_eq!(v.kind, kaitai_rules::Animal::Dog);
}

#[test]
fn sp_strict_keeps_statepack_rules() {
    // len 2, body reads 1 of 2 bytes: refused under -sp-strict.
    let e = strict_rules::StrictRules::decode(&[2, 1, 0, 1, 1, 5, 1]).unwrap_err();
    assert!(e.to_string().contains("body"), "{e}");
    // Unknown enum value: refused.
    let e = strict_rules::StrictRules::decode(&[1, 5, 9, 1, 5, 1]).unwrap_err();
    assert!(e.to_string().contains("kind"), "{e}");
    // A switch value no case names: refused.
    let e = strict_rules::StrictRules::decode(&[1, 5, 1, 2, 1]).unwrap_err();
    assert!(e.to_string().contains("choice"), "{e}");
    // A field may opt out: `loose` keeps an unknown value.
    let v = strict_rules::StrictRules::decode(&[1, 5, 1, 1, 5, 7]).unwrap();
    assert_eq!(v.loose, strict_rules::Bird::Unlisted(7));
}

#[test]
fn value_instances_are_computed_never_stored() {
    // n = 4, so `count` (n - 1) = 3 items, then "ab".
    let bytes = [4, 10, 11, 12, b'a', b'b'];
    let v = value_instances::ValueInstances::decode(&bytes).unwrap();
    assert_eq!(
        v.items,
        [10, 11, 12],
        "a seq field's count may be a value instance"
    );
    assert_eq!(v.count(), 3);
    assert_eq!(v.double_count(), 6);
    assert_eq!(v.greeting(), "ab!");
    assert!(v.big());
    assert_eq!(v.kind(), value_instances::Animal::Dog);
    assert_eq!(v.maybe(), None);
    assert_eq!(v.encode().unwrap(), bytes, "instances take no bytes");
    let root = value_instances::reflect_decode(&bytes).unwrap();
    assert_eq!(
        root.member_names(),
        [
            "n",
            "items",
            "name",
            "count",
            "double_count",
            "greeting",
            "big",
            "kind",
            "maybe"
        ]
    );
    assert_eq!(int(root.member("double_count")), 6);
    assert!(matches!(root.member("greeting"), Some(Value::Str(s)) if s == "ab!"));
    assert!(matches!(root.member("big"), Some(Value::Bool(true))));
    assert!(matches!(root.member("kind"), Some(Value::Enum(e)) if e.name == Some("dog")));
    assert!(matches!(root.member("maybe"), Some(Value::Null)));
    // Writing checks the list against the instance: a list of the wrong length is refused.
    let mut w = v.clone();
    w.items.push(13);
    assert!(w.encode().is_err());
}

#[test]
fn nested_types_and_enums_resolve_innermost_out() {
    // outer.first is the nested `item` (a u2), outer.kind = cat, is_cat present; then the
    // top-level `item` (a u1).
    let bytes = [0x34, 0x12, 1, 9, 0x77];
    let v = nested_scopes::NestedScopes::decode(&bytes).unwrap();
    assert_eq!(v.a.first.inner_value, 0x1234);
    assert_eq!(v.a.kind, nested_scopes::OuterAnimal::Cat);
    assert_eq!(
        v.a.is_cat,
        Some(9),
        "`outer::animal::cat` names the nested enum"
    );
    assert_eq!(v.b.top_value, 0x77);
    assert_eq!(v.encode().unwrap(), bytes);
    // The dynamic view uses the names as written.
    let root = nested_scopes::reflect_decode(&bytes).unwrap();
    let a = root.member("a").unwrap();
    let first = a.as_struct().unwrap().member("first").unwrap();
    assert_eq!(first.as_struct().unwrap().schema_type(), "item");
    match a.as_struct().unwrap().member("kind") {
        Some(Value::Enum(e)) => assert_eq!((e.enum_name, e.name), ("animal", Some("cat"))),
        other => panic!("{other:?}"),
    };
}

#[test]
fn terminators_padding_and_their_bytes_round_trip() {
    let bytes = b"abc|hi    ok\0xyzw\0v\0end.AZ;tail";
    let v = terminators::Terminators::decode(bytes).unwrap();
    assert_eq!(v.name, "abc");
    assert_eq!(v.padded, "hi", "pad-right is stripped");
    assert_eq!(
        v.fixed, "ok",
        "the value ends at the terminator inside the size"
    );
    assert_eq!(v.__tail_fixed.as_deref(), Some(&b"\0xyz"[..]));
    assert_eq!(v.words, ["w", "v"]);
    assert_eq!(v.kept, b"end.", "`include` keeps the terminator");
    // A user type in the bytes before its terminator; what it leaves is kept.
    assert_eq!(v.framed.a, b'A');
    assert_eq!(v.framed.__unread, b"Z");
    assert_eq!(
        v.rest, b"tail",
        "`eos-error: false`: the end of the input ends the value"
    );
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "terminators, bytes after them and padding are kept"
    );
    // A new value without kept tails gets the schema's terminator and padding.
    let mut w = v.clone();
    w.__tail_fixed = None;
    w.__tail_padded = None;
    w.fixed = "no".into();
    let out = w.encode().unwrap();
    assert_eq!(&out[4..16], b"hi    no\0\0\0\0");
    // A value containing its terminator cannot be written: a reader would stop early.
    let mut w = v.clone();
    w.name = "a|b".into();
    assert!(w.encode().is_err());
}

#[test]
fn process_zlib_xor_rol_read_and_write_back() {
    // A zlib stream of "hello" made by another compressor setting (level 1): the writer must
    // reuse these exact bytes, not recompress.
    let z = {
        use std::io::Write;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::new(1));
        e.write_all(b"hello").unwrap();
        e.finish().unwrap()
    };
    let mut bytes = vec![z.len() as u8];
    bytes.extend_from_slice(&z);
    // key 0x0f; point x = 0x0102, y = 0x0304 xored with the key; rol(3) of [0x01, 0x80].
    bytes.extend_from_slice(&[0x0f, 0x02 ^ 0x0f, 0x01 ^ 0x0f, 0x04 ^ 0x0f, 0x03 ^ 0x0f]);
    bytes.extend_from_slice(&[0x01u8.rotate_right(3), 0x80u8.rotate_right(3)]);
    let v = processed::Processed::decode(&bytes).unwrap();
    assert_eq!(v.packed, b"hello");
    assert_eq!((v.hidden.x, v.hidden.y), (0x0102, 0x0304));
    assert_eq!(v.spun, [0x01, 0x80]);
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "the stored bytes are reused while unchanged"
    );
    // A changed value is processed anew, and reads back.
    let mut w = v.clone();
    w.hidden.x = 7;
    let out = w.encode().unwrap();
    let back = processed::Processed::decode(&out).unwrap();
    assert_eq!(back.hidden.x, 7);
    assert_eq!(back.spun, [0x01, 0x80]);
    // The size of a processed field is derived: a new text is compressed anew and
    // `len_packed` written as the length of that stream.
    let mut w = v.clone();
    w.packed = b"other text".to_vec();
    let out = w.encode().unwrap();
    let z2 = statepack_runtime::cbtk_columns::deflate(b"other text", 6);
    assert_eq!(out[0] as usize, z2.len());
    assert_eq!(&out[1..1 + z2.len()], &z2[..]);
    let back = processed::Processed::decode(&out).unwrap();
    assert_eq!(back.packed, b"other text");
    assert_eq!(back, w);
    // The dynamic view shows the derived length: the kept stream's while it gives the value.
    use statepack_runtime::reflect::{Reflect, Value};
    assert!(matches!(v.member("len_packed"), Some(Value::Int(n)) if n == z.len() as i128));
    assert!(matches!(back.member("len_packed"), Some(Value::Int(n)) if n == z2.len() as i128));
}

#[test]
fn processed_sizes_are_derived_for_a_value_built_by_hand() {
    let v = processed::Processed {
        packed: b"a value built by hand, compressed by the writer".repeat(3),
        key: 0x21,
        hidden: processed::Point {
            x: 5,
            y: 6,
            ..Default::default()
        },
        spun: vec![1, 2],
        ..Default::default()
    };
    let out = v.encode().unwrap();
    let back = processed::Processed::decode(&out).unwrap();
    assert_eq!(back, v);
    assert_eq!(
        back.encode().unwrap(),
        out,
        "decode then encode is byte-identical"
    );
    // A stream longer than `len_packed` (a u1) can say is refused, naming the length field.
    let mut big = v.clone();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    big.packed = (0..4000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 56) as u8
        })
        .collect();
    let Err(e) = big.encode() else {
        panic!("4,000 random bytes fit a u1 length once compressed")
    };
    let e = e.to_string();
    assert!(e.contains("len_packed") && e.contains("u8"), "{e}");
}

#[test]
fn processed_sizes_with_an_offset_are_derived() {
    let v = processed_len::ProcessedLen {
        body: b"a chunk body, compressed by the writer".to_vec(),
        check: 0xdead_beef,
        tail: vec![1, 2, 3],
        ..Default::default()
    };
    let out = v.encode().unwrap();
    let z = statepack_runtime::cbtk_columns::deflate(&v.body, 6);
    // `len_chunk` counts the body and the check; `len_tail` two bytes fewer than the tail.
    assert_eq!(u16::from_be_bytes([out[0], out[1]]) as usize, z.len() + 4);
    assert_eq!(out[2 + z.len() + 4], 1);
    let back = processed_len::ProcessedLen::decode(&out).unwrap();
    assert_eq!(back, v);
    assert_eq!(back.encode().unwrap(), out);
    use statepack_runtime::reflect::{Reflect, Value};
    assert!(matches!(back.member("len_chunk"), Some(Value::Int(n)) if n == z.len() as i128 + 4));
    assert!(matches!(back.member("len_tail"), Some(Value::Int(1))));
    // A tail of one byte would need `len_tail` = -1: refused, naming it.
    let short = processed_len::ProcessedLen { tail: vec![9], ..v };
    let Err(e) = short.encode() else {
        panic!("a tail shorter than its offset is written")
    };
    let e = e.to_string();
    assert!(e.contains("len_tail") && e.contains("-1"), "{e}");
}

#[test]
fn little_endian_bits_and_enums_on_bit_fields() {
    // mode = 5 (run) in the low 3 bits, level = 0b10101 above it; then a byte; then a type
    // whose own meta switches back to big-endian bits: hi = 0xa, lo = 0x3.
    let bytes = [0b10101_101, 0x42, 0xa3];
    let v = bits_le_enum::BitsLeEnum::decode(&bytes).unwrap();
    assert_eq!(v.mode, bits_le_enum::Mode::Run);
    assert_eq!(v.level, 0b10101);
    assert_eq!(v.after, 0x42);
    assert_eq!((v.inner.hi, v.inner.lo), (0xa, 0x3));
    assert_eq!(v.encode().unwrap(), bytes);
    // An unlisted value in a bit-field enum is kept (Kaitai's open enums).
    let v = bits_le_enum::BitsLeEnum::decode(&[0b00000_111, 0, 0]).unwrap();
    assert_eq!(v.mode, bits_le_enum::Mode::Unlisted(7));
    assert_eq!(v.encode().unwrap(), [0b00000_111, 0, 0]);
    // ... and one that does not fit the bits is refused on write.
    let mut w = v.clone();
    w.mode = bits_le_enum::Mode::Unlisted(8);
    assert!(w.encode().is_err());
}

#[test]
fn bit_fields_that_fill_whole_bytes_keep_no_padding_member() {
    // `b3 b5` fill one byte and every type of the schema ends on a byte boundary, so the
    // reader is known to be on one before `after`: there are no padding bits to keep, and
    // the type is written as a plain struct literal, every member named.
    let v = bits_le_enum::BitsLeEnum {
        mode: bits_le_enum::Mode::Run,
        level: 0b10101,
        after: 0x42,
        inner: bits_le_enum::BeBits { hi: 0xa, lo: 0x3 },
    };
    let bytes = v.encode().unwrap();
    assert_eq!(bytes, [0b10101_101, 0x42, 0xa3]);
    assert_eq!(bits_le_enum::BitsLeEnum::decode(&bytes).unwrap(), v);
    // A type that ends inside a byte (Kaitai's rules allow it) keeps them: the phase after
    // it is not known statically.
    let b = bits_padding::BitsPadding::default();
    assert_eq!(b.__pad_byte, 0);
}

#[test]
fn switch_on_a_string() {
    let v = switch_str::SwitchStr::decode(b"cd\x01\x02").unwrap();
    assert_eq!(
        v.body,
        switch_str::SwitchStrBody::Two(switch_str::Two { y: 1, z: 2 })
    );
    assert_eq!(v.encode().unwrap(), b"cd\x01\x02");
    let v = switch_str::SwitchStr::decode(b"ab\x07").unwrap();
    assert!(matches!(
        v.body,
        switch_str::SwitchStrBody::One(switch_str::One { x: 7 })
    ));
    // No case named: nothing read (Kaitai's rule), and written back as nothing.
    let v = switch_str::SwitchStr::decode(b"zz").unwrap();
    assert_eq!(v.body, switch_str::SwitchStrBody::NoCase);
    assert_eq!(v.encode().unwrap(), b"zz");
    // A body that the tag does not select is refused on write.
    let mut w = v.clone();
    w.tag = "ab".into();
    w.body = switch_str::SwitchStrBody::Two(switch_str::Two { y: 1, z: 2 });
    assert!(w.encode().is_err());
}

#[test]
fn padding_bits_are_kept_under_kaitai_rules() {
    // flags = 0b101 then five non-zero padding bits; a byte; a sized type reading 3 of its 8
    // bits; the root ends after 2 bits of the last byte.
    let bytes = [0b101_11011, 0x42, 0b011_10101, 0b10_111111];
    let v = bits_padding::BitsPadding::decode(&bytes).unwrap();
    assert_eq!(
        (v.flags, v.byte, v.inner.v, v.last),
        (0b101, 0x42, 0b011, 0b10)
    );
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "every skipped bit is written back"
    );
}

#[test]
fn valid_on_list_elements_and_unnamed_fields() {
    let v = lists_valid::ListsValid::decode(&[0xee, 1, 2, 3]).unwrap();
    assert_eq!(
        v._unnamed0, 0xee,
        "an unnamed field is `_unnamed<index>`, as in Kaitai"
    );
    assert_eq!(v.small, [1, 2, 3]);
    let e = lists_valid::ListsValid::decode(&[0, 1, 20, 3]).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("small[1]") && text.contains("offset 2"),
        "{text}"
    );
    let mut w = v.clone();
    w.small[2] = 10;
    assert!(w.encode().is_err());
    let root = lists_valid::reflect_decode(&[0xee, 1, 2, 3]).unwrap();
    assert_eq!(root.member_names(), ["_unnamed0", "small"]);
}

#[test]
fn sized_switch_reads_the_case_in_its_size() {
    // code 1: `one` reads 1 of 3 bytes; the rest is kept and written back.
    let bytes = [1, 3, 7, 8, 9, 0xee];
    let v = switch_sized::SwitchSized::decode(&bytes).unwrap();
    let switch_sized::SwitchSizedBody::One(one) = &v.body else {
        panic!("{:?}", v.body)
    };
    assert_eq!((one.x, one.__unread.as_slice()), (7, &[8u8, 9][..]));
    assert_eq!(v.tail, 0xee);
    assert_eq!(v.encode().unwrap(), bytes);
    // No case: the bytes are kept raw, and the dynamic view shows them.
    let bytes = [5, 2, 0xaa, 0xbb, 0xee];
    let v = switch_sized::SwitchSized::decode(&bytes).unwrap();
    assert_eq!(
        v.body,
        switch_sized::SwitchSizedBody::NoCase(vec![0xaa, 0xbb])
    );
    assert_eq!(v.encode().unwrap(), bytes);
    let root = switch_sized::reflect_decode(&bytes).unwrap();
    assert!(matches!(root.member("body"), Some(Value::Bytes(b)) if b.as_ref() == [0xaa, 0xbb]));
    assert_eq!(
        int(root.member("len_body")),
        2,
        "the size is derived from the body"
    );
}

#[test]
fn expression_indexing_literals_methods_and_sizeof() {
    // n = 2 words (5, 3), raw "ABC", digits "0123", two blocks of 3 bytes.
    // Then two ops: code 1 (a block 4, 0x0605), code 2 (a word 0x0807).
    let bytes = [
        2, 5, 0, 3, 0, b'A', b'B', b'C', b'0', b'1', b'2', b'3', 7, 1, 0, 9, 2, 1, 1, 4, 5, 6, 2,
        7, 8, 40, 1, 2, 3,
    ];
    let v = expr_methods::ExprMethods::decode(&bytes).unwrap();
    assert_eq!(v.magic(), b"ABC");
    assert!(v.raw_is_magic(), "bytes compare with a byte-array literal");
    assert!(
        v.raw_before_magic(),
        "bytes order as unsigned bytes, element by element"
    );
    assert_eq!(v.second_word(), Ok(3));
    assert_eq!(v.first_word(), Ok(5));
    assert_eq!(v.last_word(), Ok(3));
    assert_eq!(v.min_word(), Ok(3));
    assert_eq!(v.max_word(), Ok(5));
    assert_eq!(v.raw_max(), Ok(0x43));
    assert_eq!(v.raw_at(), Ok(0x42));
    assert_eq!(v.raw_text().as_deref(), Ok("ABC"));
    assert_eq!(v.middle().as_deref(), Ok("12"));
    assert_eq!(v.as_hex(), Ok(0x123));
    assert_eq!(v.as_dec(), Ok(123));
    assert_eq!(
        v.list(),
        [10, 20, 1000],
        "a list literal with a value above 255 is a list of integers"
    );
    assert_eq!(v.list_pick(), Ok(1000));
    assert_eq!(v.names(), ["un", "deux"]);
    assert_eq!(v.block_size(), 3);
    assert_eq!(v.word_size(), 2);
    assert_eq!(v.block_b(), Ok(0x0102));
    assert_eq!(v.block_whole(), Ok(3));
    assert_eq!(v.blocks[1].whole(), 3);
    assert_eq!(
        v.first_op_block().map(|b| (b.a, b.b)),
        Ok((4, 0x0605)),
        "a value instance may be a user type"
    );
    assert_eq!(v.first_op_a(), Ok(4), "`.as<>` picks the switch case");
    assert_eq!(
        v.second_op_w(),
        Ok(0x0807),
        "a nested case type named by its path"
    );
    assert!(v
        .wrong_cast()
        .unwrap_err()
        .0
        .contains("does not hold a `block`"));
    assert_eq!(
        v.pick_bytes(),
        [0x5a, 0x5b],
        "`? :` between a field and a literal"
    );
    assert_eq!(v.pick_text(), "0123");
    assert_eq!(v.big_n(), Some(200));
    assert_eq!(
        v.pick_words(),
        [5, 3],
        "`? :` between a `u2` list field and an integer list literal"
    );
    assert_eq!(v.pick_words_last(), Ok(3));
    assert_eq!(v.big_n_plus(), Ok(201), "a conditional instance, present");
    assert_eq!(v.tail_plus(), Ok(41), "a conditional field, present");
    assert_eq!(
        v.tail_block_b(),
        Ok(0x0302),
        "a conditional user-type field, present"
    );
    assert_eq!(v.encode().unwrap(), bytes, "instances take no bytes");

    // A failing expression is an error of that instance, not a panic; the view shows null.
    let short = [
        0, b'x', b'y', b'z', b'1', b'g', b'2', b' ', 7, 1, 0, 9, 2, 1, 1, 4, 5, 6, 2, 7, 8,
    ];
    let w = expr_methods::ExprMethods::decode(&short).unwrap();
    assert!(w
        .first_word()
        .unwrap_err()
        .0
        .contains("outside a list of 0"));
    assert!(w.last_word().is_err());
    assert!(w.min_word().is_err());
    assert!(w.second_word().unwrap_err().0.contains("index 1"));
    assert!(w.as_dec().unwrap_err().0.contains("not an integer"));
    assert_eq!(w.list_pick(), Ok(10));
    assert!(w.raw_at().unwrap_err().0.contains("index -1"));
    assert_eq!(w.big_n(), None);
    assert_eq!(w.pick_words(), [1000, 2000]);
    assert_eq!(w.pick_words_last(), Ok(2000));
    assert!(w
        .big_n_plus()
        .unwrap_err()
        .0
        .contains("`big_n` has no value"));
    assert!(w.tail_plus().unwrap_err().0.contains("`tail` is absent"));
    assert!(w.tail_block_b().is_err());
    let root = expr_methods::reflect_decode(&short).unwrap();
    assert!(matches!(root.member("first_word"), Some(Value::Null)));
    assert_eq!(int(root.member("list_pick")), 10);
    let full = expr_methods::reflect_decode(&bytes).unwrap();
    assert_eq!(int(full.member("second_word")), 3);
    assert!(matches!(
        full.member("first_op_block"),
        Some(Value::Struct(_))
    ));
    assert!(matches!(full.member("wrong_cast"), Some(Value::Null)));
    let list = full.member("list");
    assert!(
        matches!(&list, Some(Value::List(l)) if l.len() == 3),
        "{list:?}"
    );
    assert_eq!(
        expr_methods::ExprMethods::decode(&bytes)
            .unwrap()
            .middle()
            .unwrap(),
        "12"
    );
}

#[test]
fn imported_types_and_enums_keep_their_own_byte_order() {
    // The imported root type is big-endian (its own meta), the importing schema little-endian.
    let bytes = [2, 0x01, 0x02, 9, 0x03, 0x00, 0xaa, 0xbb];
    let v = imports_main::ImportsMain::decode(&bytes).unwrap();
    assert_eq!(
        v.blob.data,
        [0xaa, 0xbb],
        "an imported root type with `params`"
    );
    assert_eq!(v.blob.len, 2);
    assert_eq!(
        v.head.value, 0x0102,
        "read with the imported schema's endian"
    );
    assert_eq!(v.head.kind, imports_main::ImportsLibKind::Large);
    assert_eq!(v.head.extra.flag, 9, "a nested type of the imported schema");
    assert_eq!(v.count, 3);
    assert!(
        v.is_large(),
        "`imports_lib::kind::large` names the imported enum"
    );
    assert_eq!(v.encode().unwrap(), bytes);
}

#[test]
fn a_missing_import_names_where_it_was_looked_for() {
    let text =
        "meta:\n  id: lost\n  imports:\n    - nowhere/thing\nseq:\n  - id: a\n    type: u1\n";
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run/lost.ksy");
    let err = statepack_codegen::generate_at(text, "lost.ksy", &dir).unwrap_err();
    let shown = statepack_codegen::render(&err);
    assert!(
        shown.contains("imported schema `nowhere/thing` not found"),
        "{shown}"
    );
    assert!(shown.contains("tests/run/nowhere/thing.ksy"), "{shown}");
}

#[test]
fn params_are_passed_on_read_and_checked_on_write() {
    // len 3, kind dog, a 3-byte chunk, then two 2-byte chunks with literal arguments.
    let bytes = [3, 2, 0xa, 0xb, 0xc, 1, 2, 3, 4];
    let v = params::Params::decode(&bytes).unwrap();
    assert_eq!(v.body.data, [0xa, 0xb, 0xc], "`size: size` uses the param");
    assert_eq!(v.body.size, 3);
    assert_eq!(v.body.who, params::Animal::Dog);
    assert!(v.body.is_dog());
    assert_eq!(v.body.twice(), 6);
    assert_eq!(v.body.named(), "tag!");
    assert_eq!(v.pairs[1].data, [3, 4]);
    assert_eq!(v.pairs[0].label, "p");
    assert_eq!(v.encode().unwrap(), bytes);

    // The writer derives `len` from nothing here (it is a plain field), so a value whose
    // param disagrees with what the parent passes is refused, naming the param.
    let mut bad = v.clone();
    bad.body.size = 4;
    let e = bad.encode().unwrap_err();
    assert!(e.to_string().contains("param `size`"), "{e}");
    assert!(e.to_string().contains("body"), "{e}");
}

#[test]
fn failing_expressions_in_seq_fields_are_decode_and_encode_errors() {
    // n 2, lens [9, 2], body 2 bytes, flag 1, opt 1, tail 1 byte, items until 2.
    // Then chunks sized by `lens[_index]`: 9 bytes, 2 bytes.
    let bytes = [
        2, 9, 2, 0xa, 0xb, 1, 1, 0xc, 5, 2, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xe, 0xf,
    ];
    let v = seq_exprs::SeqExprs::decode(&bytes).unwrap();
    assert_eq!(
        v.chunks,
        [vec![1, 2, 3, 4, 5, 6, 7, 8, 9], vec![0xe, 0xf]],
        "`_index` in a repeated field's size"
    );
    assert_eq!(v.body, [0xa, 0xb], "`size: lens[1]`");
    assert_eq!(v.tail, [0xc], "`size: opt` with `opt` present");
    assert_eq!(v.items, [5, 2], "`repeat-until: _ == lens.last`");
    assert_eq!(v.encode().unwrap(), bytes);

    // One length only: `lens[1]` does not exist.
    let e = seq_exprs::SeqExprs::decode(&[1, 9, 0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "body (byte offset 2): index 1 is outside a list of 1 element(s)"
    );
    // `flag` 0: `opt` is absent, so `tail` has no size.
    let e = seq_exprs::SeqExprs::decode(&[2, 9, 0, 0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "tail (byte offset 4): `opt` is absent (its `if` is false)"
    );

    // The writer evaluates the same expressions on the values it writes.
    let mut w = v.clone();
    w.lens = vec![9];
    let e = w.encode().unwrap_err();
    assert_eq!(
        e.to_string(),
        "body: index 1 is outside a list of 1 element(s)"
    );
    let mut w = v.clone();
    w.chunks[1] = vec![0xe];
    let e = w.encode().unwrap_err();
    assert!(e.to_string().starts_with("chunks[1]"), "{e}");
    let mut w = v.clone();
    w.items = vec![5];
    assert!(
        w.encode().is_err(),
        "`.last` of lens no longer ends the list"
    );
}

/// `misc_lang.ksy`: "PK", "AB", "NOP", cat, recs (1, [0, 0]) and (0xaa, [1, 2]), one chunk
/// "xy" before a `,` that its list does not consume (the field after it reads it).
const MISC_LANG: &[u8] = b"PKABNOP\x01\x01\x00\x00\xaa\x01\x02xy,";

#[test]
fn string_order_reverse_fstrings_sizeof_and_list_instances() {
    use misc_lang::*;
    let v = MiscLang::decode(MISC_LANG).unwrap();
    assert!(v.name_after_m(), "strings order by code point");
    assert_eq!(v.name_backwards(), "PON");
    assert_eq!(
        v.label(),
        "NOP#1",
        "an f-string interpolates a string and an integer"
    );
    assert_eq!(v.pair(), Ok(vec![1, 0xff]), "`[a, b].as<bytes>`");
    assert_eq!(
        v.all_recs().len(),
        2,
        "a value instance may be a list of structs"
    );
    assert_eq!(v.first_marker(), Ok(1));
    assert_eq!(
        v.marker_size(),
        1,
        "`x._sizeof` of a `u1` field, known statically"
    );
    assert_eq!(
        v.recs[1].rec_size(),
        3,
        "`_sizeof` is the type's fixed size"
    );
    assert_eq!(v.recs[1].body_size(), 2, "`x._sizeof` of a `size: 2` field");
    assert_eq!(
        v.chunks,
        [b"xy".to_vec(), Vec::new()],
        "an empty element that satisfies `repeat-until` ends the list"
    );
    assert_eq!(v.encode().unwrap(), MISC_LANG);
}

#[test]
fn valid_on_bytes_strings_and_in_enum() {
    use misc_lang::*;
    let fails = |at: usize, byte: u8, field: &str| {
        let mut b = MISC_LANG.to_vec();
        b[at] = byte;
        let e = MiscLang::decode(&b).unwrap_err();
        assert!(
            matches!(
                e.kind,
                statepack_runtime::io::DecodeErrorKind::NotValid { .. }
            ),
            "{e}"
        );
        assert!(e.to_string().contains(field), "{e}");
    };
    fails(1, b'J', "magic"); // eq on bytes
    fails(3, b'[', "tag"); // above max [0x41, 0x5a]
    fails(2, b'@', "tag"); // below min [0x41]
    fails(4, b'a', "name"); // above max "ZZZ"
    fails(7, 3, "kind"); // not listed by the enum
    let mut w = MiscLang::decode(MISC_LANG).unwrap();
    w.kind = Animal::Unlisted(3);
    assert!(w.encode().is_err(), "the writer checks `in-enum` too");
    let mut w = MiscLang::decode(MISC_LANG).unwrap();
    w.tag = b"A[".to_vec();
    assert!(w.encode().is_err(), "the writer checks a byte range");
}

#[test]
fn explicit_bit_order_per_field_and_enums_wider_than_the_field() {
    use misc_bits::*;
    // 101|00011, then 0x21 read least significant nibble first, then 1|1001100 (the root
    // ends inside that byte: the 7 bits after it are kept and written back).
    let bytes = [0b1010_0011, 0x21, 0b1100_1100];
    let v = MiscBits::decode(&bytes).unwrap();
    assert_eq!(
        (v.hi, v.lo),
        (5, 3),
        "`b3be`/`b5be` read most significant bits first"
    );
    assert_eq!(
        (v.l1, v.l2),
        (1, 2),
        "`b4le` reads least significant bits first"
    );
    assert_eq!(
        v.pet,
        Animal::Dog,
        "a 1-bit enum may list values it cannot hold"
    );
    assert_eq!(v.encode().unwrap(), bytes);
    let mut w = v.clone();
    w.pet = Animal::Horse;
    assert!(
        w.encode().is_err(),
        "horse = 4 does not fit one bit: refused, not wrapped"
    );
}

#[test]
fn switch_on_bytes_with_byte_array_case_keys() {
    use misc_switch::*;
    let bytes = b"I\x07Sab\x00I\x09";
    let v = MiscSwitch::decode(bytes).unwrap();
    assert_eq!(v.items.len(), 3);
    assert!(matches!(&v.items[0].body, ItemBody::IntVal(x) if x.value == 7));
    assert!(matches!(&v.items[1].body, ItemBody::StrVal(x) if x.value == "ab"));
    assert_eq!(v.encode().unwrap(), bytes);
    let mut w = v.clone();
    w.items[0].code = b"S".to_vec();
    assert!(
        w.encode().is_err(),
        "the case must agree with the switch value on write"
    );
    let v = MiscSwitch::decode(b"X").unwrap();
    assert!(
        matches!(v.items[0].body, ItemBody::NoCase),
        "no case: nothing read, as in Kaitai"
    );
}

#[test]
fn process_after_padding_and_terminator() {
    use misc_proc::*;
    // "abc" padded with 0x40; "de" cut at 0x40, then 0x2b padding; "fg@" (terminator
    // included) and two bytes after it, in a 5-byte field.
    let bytes = b"abc@@@de@+++fg@xy";
    let v = MiscProc::decode(bytes).unwrap();
    let xor = |s: &[u8]| s.iter().map(|b| b ^ 0x15).collect::<Vec<u8>>();
    assert_eq!(
        v.padded,
        xor(b"abc"),
        "padding is stripped before `process`"
    );
    assert_eq!(v.cut, xor(b"de"), "the terminator cuts before `process`");
    let rol1 = |s: &[u8]| s.iter().map(|b| b.rotate_left(1)).collect::<Vec<u8>>();
    assert_eq!(
        v.wrapped.value,
        rol1(b"fg@"),
        "an included terminator is processed too"
    );
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "terminator, padding and the rest are kept"
    );
    let mut w = v.clone();
    w.padded = xor(b"z");
    w.cut = xor(b"q");
    let out = w.encode().unwrap();
    assert_eq!(
        &out[..12],
        b"z@@@@@q@++++",
        "a changed value is processed back and padded"
    );
    let mut w = v.clone();
    w.padded = xor(b"toolong");
    assert!(
        w.encode().is_err(),
        "a value longer than the size is refused"
    );
}

#[test]
fn switch_of_number_types() {
    use misc_num_switch::*;
    // code 2: `len` is a u2le (3), three body bytes, `checked` the default u2be (0x1000).
    let bytes = [2, 3, 0, b'a', b'b', b'c', 0x10, 0x00];
    let v = MiscNumSwitch::decode(&bytes).unwrap();
    assert_eq!(v.len, MiscNumSwitchLen::U2le(3));
    assert_eq!(v.len.value(), Ok(3));
    assert_eq!(v.body, b"abc", "a number switch may give a size");
    assert_eq!(v.checked, MiscNumSwitchChecked::U2be(0x1000));
    assert_eq!(
        v.len_plus(),
        Ok(4),
        "in expressions the switch is its number"
    );
    assert_eq!(v.encode().unwrap(), bytes);
    let root = misc_num_switch::reflect_decode(&bytes).unwrap();
    assert!(
        matches!(root.member("len"), Some(Value::Int(3))),
        "the dynamic view shows the number"
    );
    // Code 4: a big-endian s4.
    let v = MiscNumSwitch::decode(&[4, 0xff, 0xff, 0xff, 0xff, 0, 1]).unwrap_err();
    assert!(
        v.to_string().contains("body"),
        "a size of -1 is refused: {v}"
    );
    // `valid` applies to the number read.
    let e = MiscNumSwitch::decode(&[2, 0, 0, 0x10, 0x01]).unwrap_err();
    assert!(
        matches!(
            e.kind,
            statepack_runtime::io::DecodeErrorKind::NotValid { .. }
        ),
        "{e}"
    );
    // The writer writes the width the switch value selects, and refuses another.
    let mut w = MiscNumSwitch::decode(&bytes).unwrap();
    w.len = MiscNumSwitchLen::U1(3);
    assert!(w.encode().is_err(), "code 2 selects u2le, not u1");
    // No case: the field has no value, so `size: len` cannot be read.
    let e = MiscNumSwitch::decode(&[3, 0, 0]).unwrap_err();
    assert!(e.to_string().contains("no switch case matched"), "{e}");
}

#[test]
fn a_root_type_with_params_takes_them_in_decode() {
    use misc_root_params::*;
    let v = MiscRootParams::decode(b"abc\x07", 3, true).unwrap();
    assert_eq!((v.body.as_slice(), v.trailer), (b"abc".as_slice(), Some(7)));
    assert_eq!(v.encode().unwrap(), b"abc\x07");
    let v = MiscRootParams::decode(b"ab", 2, false).unwrap();
    assert_eq!(v.trailer, None);
    let e = misc_root_params::reflect_decode(b"ab").err().unwrap();
    assert!(
        e.to_string().contains("takes params (len, has_trailer)"),
        "{e}"
    );
}

/// `positional.ksy`: `ofs_name` = 9; two numbers (the count comes from `header`, read at 12
/// before the seq needs it); a 6-byte `block` whose `inner` sits at 4 of its own substream;
/// `name` = "hi" at 9, `header.count` = 2 at 12, a gap byte at 13, `tail_word` in the last
/// two bytes (`_io.size - 2`).
const POSITIONAL: [u8; 16] = [
    9, 0x0a, 0x0b, 0x61, 0x62, 0x63, 0x64, 0x34, 0x12, b'h', b'i', 0, 2, 0x77, 0xcd, 0xab,
];

#[test]
fn positional_instances_read_at_their_position() {
    let v = positional::Positional::decode(&POSITIONAL[..9]).err();
    // Without the bytes after the seq, `header` (at 12) is beyond the stream.
    let e = v.expect("header is past the end");
    assert_eq!(e.path.to_string(), "header");
    // at the end of the input, naming the position wanted
    assert_eq!(e.offset, 9);
    assert!(e.to_string().contains("12 byte(s) needed"), "{e}");
    let mut r = statepack_runtime::io::ByteReader::new(&POSITIONAL);
    let v = positional::Positional::read_from(&mut r).unwrap();
    // The root ends after the furthest byte an instance read (`tail_word`).
    assert_eq!(r.offset(), 16);
    assert_eq!(v.header.count, 2);
    assert_eq!(v.numbers, vec![0x0a, 0x0b]);
    assert_eq!(v.name.get().unwrap(), "hi");
    assert_eq!(v.tail_word, 0xabcd);
    assert_eq!(
        *v.never.get().unwrap(),
        None,
        "`if` false: `pos` 100000 is never visited"
    );
    // Inside the sized `block`, `_io` is the block's substream: pos 4 is byte 7 of the input,
    // `_io.pos < 2` holds at its second byte and `_io.eof` is false before its third.
    assert_eq!(*v.block.inner.get().unwrap(), 0x1234);
    assert_eq!(v.block.rest_len, Some(0x62));
    assert_eq!(v.block.at_end, Some(0x63));
    // `block._io`: the block's substream when its seq had been read (3 of 6 bytes, not at eof).
    assert_eq!(v.block_io(), 306);
    assert_eq!(
        v.encode().unwrap(),
        POSITIONAL,
        "decode then encode is byte-identical"
    );
}

#[test]
fn positional_instances_are_laid_out_on_write() {
    let mut v = positional::Positional::decode(&POSITIONAL).unwrap();
    v.name.set("yo".into());
    v.tail_word = 0x0102;
    let out = v.encode().unwrap();
    let mut want = POSITIONAL;
    want[9] = b'y';
    want[10] = b'o';
    want[14] = 0x02;
    want[15] = 0x01;
    assert_eq!(
        out, want,
        "instances written at their positions, the gap byte kept"
    );
    // Moving `name` onto `header` (both at 12) is refused: their bytes differ.
    v.ofs_name = 12;
    let e = v.encode().unwrap_err().to_string();
    assert!(
        e.contains("`instances.name` overlaps `instances.header` at byte offset 12"),
        "{e}"
    );
    // An instance over bytes the seq wrote must agree with them.
    let mut w = positional::Positional::decode(&POSITIONAL).unwrap();
    *w.block.inner.get_mut().unwrap() = 0x5555;
    let e = w.encode().unwrap_err().to_string();
    assert!(
        e.contains("`types.block.instances.inner` overlaps the fields written in sequence at byte offset 7"),
        "{e}"
    );
}

#[test]
fn a_position_beyond_the_stream_is_an_error_with_path_and_offset() {
    let mut bytes = POSITIONAL;
    bytes[0] = 200;
    // Nothing reads `name` while decoding; asking for it reads it.
    let v = positional::Positional::decode(&bytes).unwrap();
    let e = v.name.get().unwrap_err();
    assert_eq!(e.path.to_string(), "name");
    assert_eq!(e.offset, 16);
    assert!(e.to_string().contains("200 byte(s) needed, 16 left"), "{e}");
}

#[test]
fn positional_instances_follow_a_chain_and_refuse_a_loop() {
    // head at 0 -> node at 2 -> node at 4 (next_at 0 ends the chain).
    let bytes = [2, 10, 4, 20, 0, 30];
    let v = positional_chain::PositionalChain::decode(&bytes).unwrap();
    let second = v.head.next.get().unwrap().as_deref().unwrap();
    assert_eq!((v.head.value, second.value), (10, 20));
    let third = second.next.get().unwrap().as_deref().unwrap();
    assert_eq!(third.value, 30);
    assert_eq!(v.encode().unwrap(), bytes);
    // A node that points at itself: read one access at a time, the chain ends in an error
    // at the nesting bound, not a hang or a stack overflow.
    let v = positional_chain::PositionalChain::decode(&[2, 10, 2, 20]).unwrap();
    let mut node = &v.head;
    let e = loop {
        match node.next.get() {
            Ok(Some(n)) => node = n,
            Ok(None) => panic!("the chain points back at itself"),
            Err(e) => break e,
        }
    };
    assert!(
        e.to_string()
            .contains("nest more than 3 deep at byte offset 2"),
        "{e}"
    );
    assert_eq!(e.path.to_string(), "next", "{e}");
    // The writer writes the nodes it can read (the one past the bound is left out, its
    // bytes kept by the root): byte-identical.
    assert_eq!(v.encode().unwrap(), [2, 10, 2, 20]);
}

#[test]
fn io_pos_counts_from_the_start_of_a_sized_substream_on_read_and_write() {
    // `inner` is the substream [1..3]: after `a`, `_io.pos` is 1 there (3 in the file).
    let v = io_sized::IoSized::decode(&[9, 1, 2]).unwrap();
    assert_eq!((v.inner.a, v.inner.b, v.rest), (1, Some(2), None));
    assert_eq!(v.encode().unwrap(), [9, 1, 2]);
    let v = io_sized::IoSized::decode(&[9, 1, 2, 7]).unwrap();
    assert_eq!(v.rest, Some(7), "`not _io.eof` in the root: one byte left");
    assert_eq!(v.encode().unwrap(), [9, 1, 2, 7]);
}

/// `run/context.ksy`: header (count 2, name_len 3), sizes [2, 1], two entries ("abc" + 1
/// byte, "def" + 1 byte), kind 1 with a 3-byte tag, the mediator's child of sizes[0] = 2
/// bytes, the orphan's byte, the holder's first lens[0] = 2 bytes, the picked case's
/// sizes[0] = 2 bytes.
fn context_bytes() -> Vec<u8> {
    let mut b = vec![2, 3, 2, 1];
    b.extend(b"abc\x10def\x11");
    b.extend([1, 7, 8, 9, 0x21, 0x22, 0x30, 0x41, 0x42, 0x51, 0x52]);
    b
}

#[test]
fn parent_and_root_paths_reach_the_enclosing_types_fields() {
    let bytes = context_bytes();
    let v = context::Context::decode(&bytes).unwrap();
    // `repeat-expr: _parent.header.count`, `size: _parent._parent.header.name_len`,
    // `size: _root.sizes[1]`.
    assert_eq!(v.index.entries.len(), 2);
    assert_eq!(v.index.entries[0].name, "abc");
    assert_eq!(v.index.entries[1].name, "def");
    assert_eq!(v.index.entries[1].extra, [0x11]);
    // A switch case type reads `_parent.header.name_len`.
    let context::ContextBody::Tagged(t) = &v.body else {
        panic!("kind 1 selects `tagged`: {:?}", v.body)
    };
    assert_eq!(t.tag, [7, 8, 9]);
    // `parent: _parent`: the mediator's child sees the root as its `_parent`.
    assert_eq!(v.mediator.child.data, [0x21, 0x22]);
    // `parent: false` on a type that needs no `_parent`.
    assert_eq!(v.orphan.byte, 0x30);
    // Params of a user type and of a list.
    assert_eq!(v.holder.head.count, 2);
    assert_eq!(v.holder.lens, [2, 1]);
    assert_eq!(v.holder.first, [0x41, 0x42]);
    assert_eq!(v.holder.total().unwrap(), 3);
    // A switch case type with params: `counted(sizes[0])`.
    let context::ContextPicked::Counted(c) = &v.picked else {
        panic!("kind 1 selects `counted`: {:?}", v.picked)
    };
    assert_eq!((c.n, &c.data[..]), (2, &[0x51, 0x52][..]));
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "decode then encode is the identity"
    );
}

/// `run/context_whole.ksy`: count 2, kind `large`, parts of 2 and 1 bytes (`size:
/// _parent.count - _parent.parts.size`, the list as read so far), the checker's tail of
/// `top.count` = 2 bytes (`top` is `_root`, given whole).
#[test]
fn root_given_whole_and_the_list_read_so_far() {
    let bytes = [2, 2, 0xa1, 0xa2, 0xb1, 0xc1, 0xc2];
    let v = context_whole::ContextWhole::decode(&bytes).unwrap();
    let lens: Vec<usize> = v.parts.iter().map(|p| p.data.len()).collect();
    assert_eq!(lens, [2, 1], "each element sees the elements before it");
    assert_eq!(v.parts[1].__ctx_parent_parts_size, 1);
    // The param `top` is the paths the checker uses of it.
    assert_eq!(v.check.tail, [0xc1, 0xc2]);
    assert_eq!(v.check.__ctx_arg_top_count, 2);
    assert!(v.check.is_large());
    assert_eq!(v.check.last_len(), 1);
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "decode then encode is the identity"
    );
    // The writer gives each element its own index: a value built in code, whose `__ctx_`
    // members are all 0, writes the same bytes; an element of the wrong length is refused
    // by its size check, naming it.
    let built = context_whole::ContextWhole {
        kind: context_whole::Kind::Large,
        parts: vec![
            context_whole::Part {
                data: vec![0xa1, 0xa2],
                ..Default::default()
            },
            context_whole::Part {
                data: vec![0xb1],
                ..Default::default()
            },
        ],
        check: context_whole::Checker {
            tail: vec![0xc1, 0xc2],
            ..Default::default()
        },
    };
    assert_eq!(built.encode().unwrap(), bytes);
    let mut bad = built.clone();
    bad.parts[1].data.push(0xb2);
    let e = bad.encode().unwrap_err().to_string();
    assert!(e.contains("parts[1].data"), "{e}");
}

/// `run/params_any_struct.ksy`: a `foo` (f = 1), a `bar` (b = 2), then two holders of
/// `struct[]` params given `[one, two, one]` and `[two, one]`, each reading as many bytes as
/// it holds values.
#[test]
fn struct_list_params_hold_values_of_several_types() {
    use params_any_struct::{AnyOfBarFoo, Bar, Foo, ParamsAnyStruct};
    use statepack_runtime::reflect::{Reflect, Value};
    let bytes = [1, 2, 0xd1, 0xd2, 0xd3, 0xe1, 0xe2];
    let v = ParamsAnyStruct::decode(&bytes).unwrap();
    let (foo, bar) = (
        AnyOfBarFoo::Foo(Foo { f: 1 }),
        AnyOfBarFoo::Bar(Bar { b: 2 }),
    );
    assert_eq!(v.direct.structs, [foo.clone(), bar.clone(), foo.clone()]);
    assert_eq!(v.direct.data, [0xd1, 0xd2, 0xd3]);
    assert_eq!(v.pair(), [bar.clone(), foo.clone()]);
    assert_eq!(v.through.data, [0xe1, 0xe2]);
    // The dynamic view shows each element as the value it holds.
    let Some(Value::List(items)) = v.direct.member("structs") else {
        panic!("structs: {:?}", v.direct.member("structs"))
    };
    let names: Vec<&str> = items
        .iter()
        .map(|x| x.as_struct().map_or("?", |s| s.schema_type()))
        .collect();
    assert_eq!(names, ["foo", "bar", "foo"]);
    assert_eq!(
        v.encode().unwrap(),
        bytes,
        "decode then encode is the identity"
    );
    // The writer gives the params again from the value written, and refuses a stored list
    // that differs.
    let mut bad = v.clone();
    bad.one.f = 9;
    let e = bad.encode().unwrap_err().to_string();
    assert!(e.contains("param `structs`"), "{e}");
}

#[test]
fn writer_gives_parent_paths_from_the_value_being_written() {
    let v = context::Context::decode(&context_bytes()).unwrap();
    // The writer computes `_parent.header.name_len` from the value being written: a changed
    // header with entries built for the old one is refused by the entries' own size check,
    // naming the field.
    let mut bad = v.clone();
    bad.header.name_len = 4;
    let e = bad.encode().unwrap_err().to_string();
    assert!(e.contains("index.entries[0].name"), "{e}");
    // Children consistent with the new header write the new layout; their `__ctx_` members
    // (still those of the old header) are not used on write.
    let mut good = v.clone();
    good.header.name_len = 2;
    for en in &mut good.index.entries {
        en.name.truncate(2);
    }
    if let context::ContextBody::Tagged(t) = &mut good.body {
        t.tag.truncate(2);
    }
    good.holder.head.name_len = 2;
    let out = good.encode().unwrap();
    let back = context::Context::decode(&out).unwrap();
    assert_eq!(back, good, "`PartialEq` leaves the `__ctx_` members out");
    assert_eq!(back.index.entries[1].name, "de");
    assert_eq!(back.index.__ctx_parent_header_name_len, 2, "filled on read");
    assert_eq!(good.index.__ctx_parent_header_name_len, 3, "left as it was");
}

/// `run/context_write.ksy`: header (count 2, name_len 3, flags 1), sizes [2, 1], two entries
/// (a 3-byte name, sizes[1] = 1 extra byte, a mark present because flags is 1), kind 1 with a
/// 3-byte tag, and a 3-byte tag stored XORed with 0x55.
fn context_write_bytes() -> Vec<u8> {
    let mut b = vec![2, 3, 1, 2, 1];
    b.extend(b"abc\x10\x20def\x11\x21");
    b.extend([1, 7, 8, 9, 1 ^ 0x55, 2 ^ 0x55, 3 ^ 0x55]);
    b
}

#[test]
#[allow(clippy::needless_update)] // every level as a user writes it, hidden members or not
fn values_built_plainly_write_their_parent_and_root_paths() {
    use context_write::*;
    let entry = |name: &str, extra: u8, mark: u8| Entry {
        name: name.into(),
        extra: vec![extra],
        deep: Deep {
            mark: Some(mark),
            ..Default::default()
        },
        ..Default::default()
    };
    let built = ContextWrite {
        header: Header {
            count: 2,
            name_len: 3,
            flags: 1,
            ..Default::default()
        },
        sizes: [2, 1],
        index: Index {
            entries: vec![entry("abc", 0x10, 0x20), entry("def", 0x11, 0x21)],
            ..Default::default()
        },
        kind: 1,
        body: ContextWriteBody::Tagged(Tagged {
            tag: vec![7, 8, 9],
            ..Default::default()
        }),
        packed: Tagged {
            tag: vec![1, 2, 3],
            ..Default::default()
        },
        ..Default::default()
    };
    // Every `__ctx_` member is 0 or empty here: the writer does not use them.
    assert_eq!(built.index.entries[0].deep.__ctx_root_header_flags, 0);
    let bytes = built.encode().unwrap();
    assert_eq!(bytes, context_write_bytes());
    let back = ContextWrite::decode(&bytes).unwrap();
    assert_eq!(back, built, "decode(encode(x)) == x");
    // On read the members hold the paths' values.
    assert_eq!(back.index.entries[1].deep.__ctx_root_header_flags, 1);
    assert_eq!(back.index.entries[1].__ctx_root_sizes, [2, 1]);
    assert_eq!(back.packed.__ctx_parent_header_name_len, 3);
    // The schema's rules still hold for the values given: a mark with flags 0 is refused.
    let mut off = built.clone();
    off.header.flags = 0;
    let e = off.encode().unwrap_err().to_string();
    assert!(e.contains("index.entries[0].deep.mark"), "{e}");
    off.index
        .entries
        .iter_mut()
        .for_each(|en| en.deep.mark = None);
    let bytes = off.encode().unwrap();
    assert_eq!(ContextWrite::decode(&bytes).unwrap(), off);
}

/// `run/context_measured.ksy`: a type measured by writing (a Latin-1 string) whose layout
/// depends on `_parent.n`, in a field whose size the parent derives from that measure
/// (`body`) and in one whose size it checks (`tail`).
#[test]
fn a_type_with_context_is_measured_with_the_context_it_is_written_with() {
    use context_measured::*;
    let body = Body {
        name: "ab".into(),
        data: vec![1, 2, 3],
        ..Default::default()
    };
    // Built plainly: the `__ctx_` copies stay 0, the writer measures with `n`.
    let mut v = ContextMeasured {
        n: 3,
        body: body.clone(),
        tail_len: 7,
        tail: body,
        ..Default::default()
    };
    let bytes = v.encode().unwrap();
    assert_eq!(
        bytes,
        [3, 6, b'a', b'b', 0, 1, 2, 3, 7, b'a', b'b', 0, 1, 2, 3]
    );
    assert_eq!(ContextMeasured::decode(&bytes).unwrap(), v);
    // A checked size that disagrees with what the value writes is refused by name.
    v.tail_len = 5;
    let e = v.encode().unwrap_err().to_string();
    assert!(
        e.starts_with("tail") && e.contains("encoded size 6 does not match the fixed size 4"),
        "{e}"
    );
    // Data that does not fit the context is the child's own error, at its path.
    v.tail_len = 7;
    v.body.data = vec![1, 2];
    let e = v.encode().unwrap_err().to_string();
    assert!(e.starts_with("body.data"), "{e}");
}

#[test]
fn parent_path_to_a_later_field_is_refused_naming_both_places() {
    let text = "meta:\n  id: later\nseq:\n  - id: child\n    type: child\n  - id: len\n    type: u1\ntypes:\n  child:\n    seq:\n      - id: data\n        size: _parent.len\n";
    let e = statepack_codegen::generate(text, "later.ksy").unwrap_err();
    let shown = statepack_codegen::render(&e);
    assert!(shown.contains("`_parent.len`"), "{shown}");
    assert!(shown.contains("later.ksy:6:5"), "the later field: {shown}");
    assert!(
        shown.contains("later.ksy:4:5"),
        "the reading field: {shown}"
    );
    assert!(shown.contains("is read after `child`"), "{shown}");
}

#[test]
fn parent_in_the_root_type_and_in_an_unread_type_are_refused() {
    let root = "meta:\n  id: r\nseq:\n  - id: a\n    size: _parent.x\n";
    let shown = statepack_codegen::render(&statepack_codegen::generate(root, "r.ksy").unwrap_err());
    assert!(shown.contains("the root type has no `_parent`"), "{shown}");
    let unread = "meta:\n  id: u\nseq:\n  - id: a\n    type: u1\ntypes:\n  lone:\n    seq:\n      - id: b\n        size: _parent.a\n";
    let shown =
        statepack_codegen::render(&statepack_codegen::generate(unread, "u.ksy").unwrap_err());
    assert!(
        shown.contains("the parent of `lone` is unknown, since no field reads it"),
        "{shown}"
    );
}

/// Bytes of `run/recursion.ksy` with `depth` levels of `tag` 1 before the leaf, whose tree
/// is a node with no children.
fn nested(depth: usize) -> Vec<u8> {
    let mut b = vec![1u8; depth];
    b.extend([0, 0x77, 0]);
    b
}

#[test]
fn recursive_root_type_is_boxed_and_sees_the_top_level_root() {
    let bytes = nested(3);
    let v = recursion::Recursion::decode(&bytes).unwrap();
    let mut cur = &v;
    let mut levels = 0;
    while let recursion::RecursionNext::Recursion(inner) = &cur.next {
        cur = inner;
        levels += 1;
    }
    assert_eq!(levels, 3);
    assert_eq!(cur.tag, 0);
    let recursion::RecursionNext::Leaf(leaf) = &cur.next else {
        panic!("tag 0 ends with a leaf")
    };
    assert_eq!(leaf.end, 0x77);
    assert!(leaf.tree.children.is_empty());
    // A tree holding a list of itself: 2 children, the first with 1 child.
    let mut t = vec![0u8, 0x10, 2, 1, 0, 0];
    let v2 = recursion::Recursion::decode(&t).unwrap();
    let recursion::RecursionNext::Leaf(l2) = &v2.next else {
        panic!("leaf")
    };
    assert_eq!(l2.tree.children.len(), 2);
    assert_eq!(l2.tree.children[0].children.len(), 1);
    assert_eq!(v2.encode().unwrap(), t);
    t.push(9);
    assert!(recursion::Recursion::decode(&t).is_err(), "trailing byte");
    // `_root.tag` is the top level's tag at every depth; `_parent.tag` the enclosing one.
    assert_eq!(v.top_tag(), 1);
    assert_eq!(cur.top_tag(), 1);
    assert_eq!(cur.parent_tag().unwrap(), Some(1));
    // At the top level `_parent` is absent.
    let top = recursion::Recursion::decode(&nested(0)).unwrap();
    assert_eq!(top.top_tag(), 0);
    assert!(top.parent_tag().is_err());
    assert_eq!(v.encode().unwrap(), bytes);
}

#[test]
fn recursion_deeper_than_the_bound_is_a_decode_error_not_a_stack_overflow() {
    // Every read of `next` (a field whose type may recurse, the leaf case too) is one level:
    // MAX_RECURSION of them are read, one more is refused.
    let depth = statepack_runtime::io::MAX_RECURSION as usize;
    assert!(recursion::Recursion::decode(&nested(depth - 1)).is_ok());
    let e = recursion::Recursion::decode(&nested(depth)).unwrap_err();
    let shown = e.to_string();
    assert!(
        shown.contains("recursive types nested deeper than 256 levels"),
        "{shown}"
    );
    assert!(
        shown.starts_with("next.next."),
        "the path names the nesting: {shown}"
    );
    assert_eq!(
        e.offset,
        depth as u64 + 1,
        "the offset where the level too deep starts (after its parents' tag bytes)"
    );
    // A million levels: an error, not a stack overflow.
    assert!(recursion::Recursion::decode(&nested(1_000_000)).is_err());
}

/// `add_key(k, up)`: adds `k` to every byte on read (subtracts when `up` is false).
pub struct AddKey(u8);
impl AddKey {
    /// The processor for `add_key(k, up)`.
    pub fn new(k: i128, up: bool) -> Self {
        let k = k.rem_euclid(256) as u8;
        Self(if up { k } else { k.wrapping_neg() })
    }
}
impl statepack_runtime::process::CustomProcessor for AddKey {
    fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
        Ok(stored.iter().map(|b| b.wrapping_add(self.0)).collect())
    }
    fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
        Ok(value.iter().map(|b| b.wrapping_sub(self.0)).collect())
    }
}

/// The module a dotted processor name (`codecs.framed`) is found in.
pub mod codecs {
    /// `codecs.framed`: the stored bytes between `[` and `]`.
    pub struct Framed;
    impl Framed {
        /// The processor (no arguments).
        pub fn new() -> Self {
            Framed
        }
    }
    impl statepack_runtime::process::CustomProcessor for Framed {
        fn decode(&self, stored: &[u8]) -> Result<Vec<u8>, String> {
            Ok([b"[", stored, b"]"].concat())
        }
        fn encode(&self, value: &[u8]) -> Result<Vec<u8>, String> {
            value
                .strip_prefix(b"[")
                .and_then(|v| v.strip_suffix(b"]"))
                .map(<[u8]>::to_vec)
                .ok_or_else(|| "not framed by [ and ]".to_owned())
        }
    }
}

#[test]
fn custom_processors_written_in_rust_read_and_write() {
    let bytes = [5u8, 1, 2, 3, b'a', b'b'];
    let v = custom_process::CustomProcess::decode(&bytes).unwrap();
    assert_eq!(v.shifted, [6, 7, 8]);
    assert_eq!(v.framed, *b"[ab]");
    assert_eq!(v.encode().unwrap(), bytes, "the stored bytes are kept");
    let mut changed = v.clone();
    changed.shifted = vec![10, 11, 12];
    changed.framed = b"[xy]".to_vec();
    assert_eq!(changed.encode().unwrap(), [5, 5, 6, 7, b'x', b'y']);
    // The processor's encoder refuses a value; the error names the field.
    let mut bad = v.clone();
    bad.framed = b"xy".to_vec();
    let e = bad.encode().unwrap_err().to_string();
    assert!(
        e.contains("framed") && e.contains("not framed by [ and ]"),
        "{e}"
    );
}

/// The opaque type of `run/opaque.ksy`: two bytes, kept as a pair.
#[derive(
    Debug,
    Clone,
    PartialEq,
    statepack_runtime::serde::Serialize,
    statepack_runtime::serde::Deserialize,
)]
#[serde(crate = "statepack_runtime::serde")]
pub struct PairOfBytes(pub u8, pub u8);
impl statepack_runtime::process::OpaqueType for PairOfBytes {
    const MIN_LEN: usize = 2;
    fn read_from<T: statepack_runtime::io::Tracer>(
        r: &mut statepack_runtime::io::ByteReader<'_, T>,
    ) -> Result<Self, statepack_runtime::io::DecodeError> {
        Ok(PairOfBytes(r.read_u8()?, r.read_u8()?))
    }
    fn write_to(
        &self,
        w: &mut statepack_runtime::io::ByteWriter,
    ) -> Result<(), statepack_runtime::io::EncodeError> {
        w.write_u8(self.0);
        w.write_u8(self.1);
        Ok(())
    }
    fn encoded_len(&self) -> usize {
        2
    }
}
impl statepack_runtime::reflect::ToValue for PairOfBytes {
    fn to_value(&self) -> Value<'_> {
        Value::Int(i128::from(self.0) << 8 | i128::from(self.1))
    }
}

#[test]
fn opaque_types_are_external_rust_types() {
    let bytes = [9u8, 1, 2, 3, 4];
    let v = opaque::Opaque::decode(&bytes).unwrap();
    assert_eq!(v.pair, PairOfBytes(1, 2));
    assert_eq!(v.sized_pair, PairOfBytes(3, 4));
    assert_eq!(v.encode().unwrap(), bytes);
    let e = opaque::Opaque::decode(&bytes[..4]).unwrap_err();
    assert!(e.to_string().starts_with("sized_pair"), "{e}");
}

/// Two documents: `II` (little-endian body) and `MM` (big-endian body), each with a `u2`, a
/// `u2be`, and a nested type (`s4`, `f4`) that inherits the decided order.
const ENDIAN_DOCS: [u8; 28] = [
    b'I', b'I', 0x02, 0x01, 0x03, 0x04, 0xfe, 0xff, 0xff, 0xff, 0x00, 0x00, 0xc0, 0x3f, //
    b'M', b'M', 0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe, 0x3f, 0xc0, 0x00, 0x00,
];

#[test]
fn meta_endian_switch_decides_the_byte_order_when_the_type_starts() {
    let v = endian_switch::EndianSwitch::decode(&ENDIAN_DOCS).unwrap();
    for d in &v.docs {
        assert_eq!(d.body.len, 0x0102);
        assert_eq!(
            d.body.fixed_be, 0x0304,
            "an explicit `u2be` keeps its order"
        );
        assert_eq!(d.body.inner.value, -2, "the nested type inherits the order");
        assert_eq!(d.body.inner.ratio, 1.5);
    }
    assert!(v.docs[0].body.inner.__is_le);
    assert!(!v.docs[1].body.inner.__is_le);
    // `pos: 2` of the body's stream (the whole input) is `02 01`, read in each body's order.
    assert_eq!(*v.docs[0].body.at_two.get().unwrap(), 0x0102);
    assert_eq!(*v.docs[1].body.at_two.get().unwrap(), 0x0201);
    assert_eq!(v.encode().unwrap(), ENDIAN_DOCS, "byte-identical");

    // The writer writes in the order the reader will decide.
    let mut w = v.clone();
    w.docs[1].body.inner.value = 0x0102_0304;
    w.docs[0].body.inner.value = 0x0102_0304;
    let out = w.encode().unwrap();
    assert_eq!(&out[6..10], &[4, 3, 2, 1]);
    assert_eq!(&out[20..24], &[1, 2, 3, 4]);
    // A nested value is written in the order its writer is given, whatever its `__is_le`
    // member holds (a value built with `..Default::default()` holds `false`).
    let mut w = v.clone();
    w.docs[1].body.inner.__is_le = true;
    w.docs[0].body.inner.__is_le = false;
    assert_eq!(w.encode().unwrap(), ENDIAN_DOCS);

    // No case names `XX` and there is no `_`: Kaitai's UndecidedEndiannessError.
    let mut bad = ENDIAN_DOCS;
    bad[14] = b'X';
    bad[15] = b'X';
    let e = endian_switch::EndianSwitch::decode(&bad).unwrap_err();
    assert_eq!(e.path.to_string(), "docs[1].body");
    assert_eq!(e.offset, 16);
    assert!(
        e.to_string().contains(
            "undecided byte order: `meta.endian` switch-on `_parent.indicator` is [88, 88]"
        ),
        "{e}"
    );
}

#[test]
fn meta_endian_switch_on_a_param_with_a_default_case() {
    for (flag, want) in [(1, 0x1234), (0, 0x3412), (7, 0x3412)] {
        let mut r = statepack_runtime::io::ByteReader::new(&[0x12, 0x34]);
        let v = endian_switch::Flagged::read_from(&mut r, flag).unwrap();
        assert_eq!(v.word, want, "flag {flag}");
        let mut w = statepack_runtime::io::ByteWriter::new();
        v.write_to(&mut w).unwrap();
        assert_eq!(w.into_bytes(), [0x12, 0x34]);
    }
}

/// Two 3-byte blocks stored XORed with `_io.pos` after their bytes (3, then 6), then a tag.
const IO_OTHER: [u8; 7] = [0x13, 0x23, 0x33, 0x46, 0x56, 0x66, 0x77];

#[test]
fn positional_instances_read_another_values_substream() {
    let v = io_other::IoOther::decode(&IO_OTHER).unwrap();
    // The key is the position after the stored bytes, as Kaitai evaluates it.
    assert_eq!(v.blocks[0].a, 0x2010);
    assert_eq!(v.blocks[1].a, 0x5040);
    assert_eq!(v.blocks[0].__unread, [0x30]);
    assert_eq!(v.peek.tag, 0x77);
    // `io: _parent.blocks[0]._io`, `pos: 2`: the byte the block leaves unread (processed).
    assert_eq!(v.peek.first_rest, 0x30);
    assert_eq!(v.peek.second_a, 0x5040);
    assert_eq!(v.encode().unwrap(), IO_OTHER, "byte-identical");

    // The instance's bytes belong to the block: one that disagrees is refused.
    let mut w = v.clone();
    w.peek.first_rest = 0x31;
    let e = w.encode().unwrap_err().to_string();
    assert!(
        e.contains("peek.first_rest")
            && e.contains("differs from the bytes of `_parent.blocks[0]` at byte offset 2"),
        "{e}"
    );
    // Changed together, the block and the instance agree, and the key is applied again.
    let mut w = v.clone();
    w.blocks[1].a = 0x0102;
    w.peek.__ctx_parent_blocks[1].a = 0x0102;
    w.peek.second_a = 0x0102;
    let out = w.encode().unwrap();
    assert_eq!(&out[3..5], &[0x02 ^ 6, 0x01 ^ 6]);
}

/// `o1` (2 bytes: `a` = 0 and one byte it leaves unread), `o2` (3), `o3` (1), the
/// holder's two bytes and `one`'s last byte.
const IO_VALUES: [u8; 9] = [0, 0x11, 5, 0x22, 0x33, 7, 0xaa, 0xbb, 0xcc];

#[test]
fn streams_are_values_params_and_choices() {
    use statepack_runtime::positional::Stream;
    let v = io_values::IoValues::decode(&IO_VALUES).unwrap();
    // `io[]`: `o1._io`, `o2._io` as their values left them, and the root's `_io` where
    // `h` starts (byte 6 of 9).
    let want = [
        Stream { pos: 1, size: 2 },
        Stream { pos: 1, size: 3 },
        Stream { pos: 6, size: 9 },
    ];
    assert_eq!(v.h.ss, want);
    assert_eq!(v.h.buf, [0xaa, 0xbb], "`ss[2].size - ss[2].pos - 1` bytes");
    assert!(!v.h.first_eof().unwrap());
    // `o1.a == 0`: `one` is given `o1._io` (one byte left there), else the root's `_io`.
    assert_eq!(v.one.s, Stream { pos: 1, size: 2 });
    assert_eq!(v.one.rest, [0xcc]);
    // A choice between a `t1` and a `t2`: its stream, and the value seen as `Reflect`.
    assert_eq!(v.any_io(), Stream { pos: 1, size: 2 });
    assert_eq!(v.any_size(), 2);
    assert_eq!(v.any().schema_type(), "t1");
    // `io:` of the chosen value, sized by the root's own `_io` (at its end: 9 == 9).
    assert_eq!(v.peek, [0x11]);
    assert_eq!(v.encode().unwrap(), IO_VALUES, "byte-identical");
    // With `o1.a` = 1 the root's stream is given, and `o2` is read from.
    let mut other = IO_VALUES;
    other[0] = 1;
    let w = io_values::IoValues::decode(&other).unwrap();
    assert_eq!(w.one.s, Stream { pos: 8, size: 9 });
    assert_eq!(w.peek, [0x22]);
    assert_eq!(w.any_io(), Stream { pos: 1, size: 1 });
    assert_eq!(w.encode().unwrap(), other);
    // The instance's bytes are `o2`'s: one that disagrees is refused by name.
    let mut x = w.clone();
    x.peek = vec![0x23];
    let e = x.encode().unwrap_err().to_string();
    assert!(e.contains("peek"), "{e}");
    // The interpreter reads the same values.
    let s = statepack_codegen::load_checked(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/run/io_values.ksy"
        ))
        .unwrap(),
        "io_values.ksy",
        std::path::Path::new("io_values.ksy"),
        &[],
    )
    .unwrap();
    let d = statepack_codegen::interp::decode(&s, &IO_VALUES).unwrap();
    assert_eq!(
        d.get("peek"),
        Some(&statepack_codegen::interp::DynValue::Bytes(vec![0x11]))
    );
    assert_eq!(
        d.get("any_io"),
        Some(&statepack_codegen::interp::DynValue::Io { pos: 1, size: 2 })
    );
}

#[test]
fn fixed_contents_in_expressions_and_list_casts() {
    let bytes = [0x43, 0x43, 0x09, 0x05];
    let v = contents_cast::ContentsCast::decode(&bytes).unwrap();
    assert_eq!(v.body, Some(vec![9]), "`if: magic.size == 2` holds");
    assert_eq!(v.given.nums, vec![7, 300], "`[7, 300].as<u2[]>`");
    assert_eq!(v.given.first, Some(5));
    assert_eq!(v.encode().unwrap(), bytes);
    let e = contents_cast::ContentsCast::decode(&[0x43, 0x44, 0x09, 0x05]).unwrap_err();
    assert!(e.to_string().contains("expected"), "{e}");
}

/// Every truncation of the goldens above, and every one of them with one byte replaced: no
/// panic, and whatever decodes writes back the bytes it read.
#[test]
fn switched_byte_order_and_foreign_streams_survive_damaged_input() {
    type Decode = fn(
        &[u8],
    ) -> Result<
        Box<dyn statepack_runtime::reflect::Reflect>,
        statepack_runtime::io::DecodeError,
    >;
    type Roundtrip = fn(&[u8]) -> Result<Vec<u8>, String>;
    let cases: [(&str, &[u8], Decode, Roundtrip); 3] = [
        (
            "endian_switch",
            &ENDIAN_DOCS,
            endian_switch::reflect_decode,
            endian_switch::reflect_roundtrip,
        ),
        (
            "io_other",
            &IO_OTHER,
            io_other::reflect_decode,
            io_other::reflect_roundtrip,
        ),
        (
            "contents_cast",
            &[0x43, 0x43, 0x09, 0x05],
            contents_cast::reflect_decode,
            contents_cast::reflect_roundtrip,
        ),
    ];
    for (name, golden, decode, roundtrip) in cases {
        let mut inputs: Vec<Vec<u8>> = (0..=golden.len()).map(|n| golden[..n].to_vec()).collect();
        for i in 0..golden.len() {
            for b in [0x00, 0x01, 0x49, 0x4d, 0x7f, 0xff] {
                let mut v = golden.to_vec();
                v[i] = b;
                inputs.push(v);
            }
        }
        for input in inputs {
            if decode(&input).is_err() {
                continue;
            }
            let written = roundtrip(&input).unwrap_or_else(|e| {
                panic!("{name}: {input:02x?} decodes but does not re-encode: {e}")
            });
            assert!(
                input.starts_with(&written),
                "{name}: {input:02x?} wrote {written:02x?}"
            );
        }
    }
}

/// Names that would clash in Rust are given distinct ones (docs/schema-language.md, "Rust
/// names"): the schema reads and writes with all of them, and the dynamic view and enum
/// names keep the names as written.
#[test]
fn clashing_rust_names_become_distinct() {
    use name_clashes::{Axis, FrameEnum, NameClashes, ResultType, SelfType, Vec3, Vec3Type};
    let bytes = [1u8, 2, 3, 4, 5, 6, 1, 1];
    let v = NameClashes::decode(&bytes).unwrap();
    assert_eq!(v.a, Vec3 { x: 1 });
    assert_eq!(v.b, Vec3Type { x: 0x0302 });
    assert_eq!(v.f.tick, 4);
    assert_eq!(v.r, ResultType { code: 5 });
    assert_eq!(v.s, SelfType { me: 6 });
    assert_eq!(v.axis, Axis::X_1);
    assert_eq!(v.kind, FrameEnum::Delta);
    assert!(v.is_x_1());
    assert_eq!(v.axis.name(), "x_1");
    assert_eq!(Axis::X1.name(), "x1");
    assert_eq!(v.encode().unwrap(), bytes);
    // `self` and `unlisted` as listed values; an unknown integer is still `Unlisted(n)`.
    let mut b = bytes;
    b[6] = 2;
    assert_eq!(NameClashes::decode(&b).unwrap().axis, Axis::Self_);
    b[6] = 3;
    let v = NameClashes::decode(&b).unwrap();
    assert_eq!(
        (v.axis, v.axis.listed_name()),
        (Axis::Unlisted_, Some("unlisted"))
    );
    assert!(v.is_unlisted());
    b[6] = 9;
    let v = NameClashes::decode(&b).unwrap();
    assert_eq!((v.axis, v.axis.listed_name()), (Axis::Unlisted(9), None));
    assert!(!v.is_unlisted());
    assert_eq!(v.encode().unwrap(), b);
    let root = name_clashes::reflect_decode(&bytes).unwrap();
    assert_eq!(
        root.member("b").unwrap().as_struct().unwrap().schema_type(),
        "vec_3"
    );
}

/// `to-string` becomes `Display`: on the root, on a nested type, with value instances in
/// the expression, and an expression that fails at run time written as `<to-string: …>`.
#[test]
fn to_string_is_display() {
    let mut bytes = vec![192u8, 168, 1, 20, 0x1f, 0x90, 2];
    bytes.extend_from_slice(b"administrator\0\x01");
    bytes.extend_from_slice(b"staff\0\x02");
    let v = described::Described::decode(&bytes).unwrap();
    assert_eq!(v.to_string(), "port 8080, 2 names");
    assert_eq!(v.addr.to_string(), "192.168.1.20");
    assert_eq!(v.names[0].to_string(), "user administrator 9");
    // `substring(0, 9)` of a 5-character string fails: the message, not a panic.
    let s = v.names[1].to_string();
    assert!(s.starts_with("<to-string: ") && s.ends_with('>'), "{s}");
    // Width and alignment apply.
    assert_eq!(format!("{:>14}|", v.addr), "  192.168.1.20|");
}

/// `valid: {expr: …}` on user-type fields (and on each element of a list of them): checked
/// after the value is read, before it is written, naming the field (and element) and the
/// byte where the value starts; the interpreter agrees.
#[test]
fn valid_on_user_types() {
    use valid_user::{Header, Item, ValidUser};
    let bytes = [2u8, 3, 0xaa, 0xbb, 0xcc, 7, 9];
    let v = ValidUser::decode(&bytes).unwrap();
    assert_eq!(v.head, Header { version: 2, len: 3 });
    assert_eq!(v.encode().unwrap(), bytes);
    let s = statepack_codegen::load_checked(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/run/valid_user.ksy"
        ))
        .unwrap(),
        "valid_user.ksy",
        Path::new("valid_user.ksy"),
        &[],
    )
    .unwrap();
    for (bad, path, offset) in [
        (vec![3u8, 3, 0xaa, 0xbb, 0xcc, 7, 9], "head", 0),
        (vec![2u8, 9, 0, 0, 0, 0, 0, 0, 0, 0, 7, 9], "head", 0),
        (vec![2u8, 3, 0xaa, 0xbb, 0xcc, 7, 0], "items[1]", 6),
    ] {
        let e = ValidUser::decode(&bad).unwrap_err();
        assert_eq!(
            (e.path.to_string().as_str(), e.offset),
            (path, offset),
            "{e}"
        );
        let i = statepack_codegen::interp::decode(&s, &bad).unwrap_err();
        assert_eq!(i.to_string(), e.to_string());
    }
    let mut w = v.clone();
    w.items[0] = Item { x: 0 };
    let e = w.encode().unwrap_err();
    assert_eq!(e.path.to_string(), "items[0]", "{e}");
}

/// A switch mixing number types and user types: each case is a variant holding its number
/// or its struct, read, written back byte for byte, and seen the same way by the
/// interpreter (`interp_formats`-style member comparison).
#[test]
fn switch_mixing_numbers_and_user_types() {
    use mixed_switch::{MixedSwitch, Point, TaggedBody};
    let mut bytes = vec![1u8, 0x78, 0x56, 0x34, 0x12];
    bytes.extend_from_slice(&[2, 0xfe, 0xff, 0x03, 0x00]);
    bytes.push(3);
    bytes.extend_from_slice(&1.5f64.to_le_bytes());
    bytes.extend_from_slice(&[4, 0xff, 0x9c]);
    bytes.push(9);
    let v = MixedSwitch::decode(&bytes).unwrap();
    let bodies: Vec<&TaggedBody> = v.values.iter().map(|t| &t.body).collect();
    assert_eq!(bodies[0], &TaggedBody::U4le(0x1234_5678));
    assert_eq!(bodies[1], &TaggedBody::Point(Point { x: -2, y: 3 }));
    assert_eq!(bodies[2], &TaggedBody::F8le(1.5));
    assert_eq!(bodies[3], &TaggedBody::S2be(-100));
    assert!(matches!(bodies[4], TaggedBody::Empty(_)));
    assert_eq!(v.encode().unwrap(), bytes);
    // A case that does not match the tag is refused on write.
    let mut w = v.clone();
    w.values[0].body = TaggedBody::F8le(2.0);
    assert!(w.encode().is_err());
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/run/mixed_switch.ksy"
    ))
    .unwrap();
    let s = statepack_codegen::load_checked(
        &text,
        "mixed_switch.ksy",
        Path::new("mixed_switch.ksy"),
        &[],
    )
    .unwrap();
    let dynv = statepack_codegen::interp::decode(&s, &bytes).unwrap();
    statepack_codegen::interp::compare(&dynv, &*mixed_switch::reflect_decode(&bytes).unwrap())
        .unwrap();
}

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/instance_no_pos.rs"]
mod instance_no_pos;

/// An instance without `pos` is read where the `seq` left the stream, and written there.
#[test]
fn instance_without_pos_reads_where_the_seq_ends() {
    use instance_no_pos::{InstanceNoPos, Trailer};
    let bytes = [2, 0xaa, 0xbb, b'E', b'N', b'D', 0x34, 0x12];
    let v = InstanceNoPos::decode(&bytes).unwrap();
    assert_eq!(v.body, [0xaa, 0xbb]);
    assert_eq!(v.trailer.get().unwrap().crc, 0x1234);
    assert_eq!(v.encode().unwrap(), bytes);
    // Built plainly: the trailer goes after the body, wherever that ends now.
    let built = InstanceNoPos {
        body: vec![1, 2, 3],
        trailer: Box::new(Trailer { crc: 7 }).into(),
        ..Default::default()
    };
    let out = built.encode().unwrap();
    assert_eq!(out, [3, 1, 2, 3, b'E', b'N', b'D', 7, 0]);
    assert_eq!(InstanceNoPos::decode(&out).unwrap(), built);
    // Cut inside the trailer: the error names it and where it starts.
    // Cut inside the trailer: read when asked for, the error names it.
    let cut = InstanceNoPos::decode(&bytes[..7]).unwrap();
    let e = cut.trailer.get().unwrap_err();
    assert_eq!(e.path.to_string(), "trailer.crc", "{e}");
    // A second instance without `pos` in one type is refused.
    let two = "meta:\n  id: two\nseq:\n  - id: a\n    type: u1\ninstances:\n  b:\n    type: u1\n  c:\n    type: u1\n";
    let shown =
        statepack_codegen::render(&statepack_codegen::generate(two, "two.ksy").unwrap_err());
    assert!(
        shown.contains("a second instance without `pos` in one type (the first is `b`)"),
        "{shown}"
    );
}

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/root_of_import.rs"]
mod root_of_import;

/// `_root` in an imported schema's types is that schema's root, not the importer's.
#[test]
fn root_in_an_imported_schema_is_its_own_root() {
    use root_of_import::RootOfImport;
    // The importer's `width` is 9; the library's root says 3.
    let bytes = [9, 2, 3, 1, 2, 3, 4, 5, 6];
    let v = RootOfImport::decode(&bytes).unwrap();
    assert_eq!(v.width, 9);
    assert_eq!(v.lib.width, 3);
    assert_eq!(v.lib.items.len(), 2);
    assert_eq!(v.lib.items[1].data, [4, 5, 6]);
    assert_eq!(v.encode().unwrap(), bytes);
    // Read directly by the importer, the library's type would see the importer's root.
    let direct = "meta:\n  id: direct\n  imports:\n    - imported/root_lib\nseq:\n  - id: width\n    type: u1\n  - id: one\n    type: root_lib::item\n";
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run/direct.ksy");
    let shown = statepack_codegen::render(
        &statepack_codegen::generate_at(direct, "direct.ksy", &path).unwrap_err(),
    );
    assert!(
        shown.contains("`_root.width` in `item` is the root of")
            && shown.contains("reads the type directly"),
        "{shown}"
    );
}

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[rustfmt::skip] // generated code, compared byte for byte with the generator's output
#[path = "run/unknown_encoding.rs"]
mod unknown_encoding;

/// An unknown encoding is a warning when generating, and an error only where the field is
/// read or written.
#[test]
fn unknown_encoding_fails_where_the_field_is_met() {
    use unknown_encoding::UnknownEncoding;
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run/unknown_encoding.ksy");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = statepack_codegen::load_schema_at(&text, "unknown_encoding.ksy", &path).unwrap();
    let shown = statepack_codegen::render(&s.warnings);
    assert!(
        shown.contains("unknown_encoding.ksy:17:15: warning: unknown encoding `x-legacy-charset`")
            && shown.ends_with("1 warning(s)\n"),
        "{shown}"
    );
    // Without the field the file reads and writes.
    let v = UnknownEncoding::decode(&[1, b'a', 0]).unwrap();
    assert_eq!(v.name, "a");
    assert_eq!(v.encode().unwrap(), [1, b'a', 0]);
    // With it, reading fails at the field.
    let e = UnknownEncoding::decode(&[1, b'a', 1, b'x', b'y']).unwrap_err();
    assert_eq!(e.path.to_string(), "legacy");
    assert_eq!(e.offset, 3);
    assert!(e.to_string().contains("unknown encoding"), "{e}");
    // And writing it fails naming the field.
    let w = UnknownEncoding {
        name: "a".into(),
        has_legacy: 1,
        legacy: Some("xy".into()),
        ..Default::default()
    };
    let e = w.encode().unwrap_err();
    assert_eq!(e.path.to_string(), "legacy", "{e}");
}

/// Types `gsm610` and `gsm_610`, an enum `gsm610`, a type named like the root, a switch whose
/// cases' enum would be named like a nested type and a column set named like a type all get
/// distinct Rust names (docs/schema-language.md, "Rust names"), read and write, and the
/// generated code and the interpreter keep the schema's names in JSON and messages.
#[test]
fn clashing_paths_become_distinct_rust_names() {
    use name_paths::{
        Chunk, ChunkBody, ChunkBodySwitch, Gsm610, Gsm610Enum, Gsm610Type, NamePaths,
        NamePathsType, SamplesColumns, SamplesColumns2,
    };
    let bytes = [7u8, 0x34, 0x12, 49, 1, 0xcd, 0xab, 9, 3];
    let v = NamePaths::decode(&bytes).unwrap();
    let want = NamePaths {
        a: Gsm610 { x: 7 },
        b: Gsm610Type { y: 0x1234 },
        codec: Gsm610Enum::FullRate,
        chunk: Chunk {
            tag: 1,
            body: ChunkBodySwitch::ChunkBody(ChunkBody { z: 0xabcd }),
        },
        inner: NamePathsType { w: 9 },
        cols: SamplesColumns { n: 3 },
    };
    assert_eq!(v, want);
    assert_eq!(v.codec.name(), "full_rate");
    assert_eq!(v.encode().unwrap(), bytes);
    // The other case of the switch: the type `gsm610` inside the renamed cases' enum.
    let mut w = want.clone();
    w.chunk = Chunk {
        tag: 2,
        body: ChunkBodySwitch::Gsm610(Gsm610 { x: 5 }),
    };
    let out = w.encode().unwrap();
    assert_eq!(out, [7, 0x34, 0x12, 49, 2, 5, 9, 3]);
    assert_eq!(NamePaths::decode(&out).unwrap(), w);
    // The column set whose struct name a type took.
    assert_eq!(SamplesColumns2::COLUMNS, &[(1u16, 2u8, "level")]);
    // The dynamic view names types as written.
    let root = name_paths::reflect_decode(&bytes).unwrap();
    for (member, ty) in [("a", "gsm610"), ("b", "gsm_610"), ("inner", "name_paths")] {
        let got = root
            .member(member)
            .unwrap()
            .as_struct()
            .unwrap()
            .schema_type();
        assert_eq!(got, ty, "{member}");
    }
    // The interpreter reads the same schema with the same resolved names.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/run/name_paths.ksy");
    let text = std::fs::read_to_string(&path).unwrap();
    let s = statepack_codegen::load_checked(&text, "name_paths.ksy", &path, &[])
        .unwrap_or_else(|d| panic!("{}", statepack_codegen::render(&d)));
    let dv = statepack_codegen::interp::decode(&s, &bytes).unwrap();
    let Some(statepack_codegen::interp::DynValue::Struct(b)) = dv.get("b") else {
        panic!("{dv:?}")
    };
    assert_eq!(
        b.get("y"),
        Some(&statepack_codegen::interp::DynValue::Int(0x1234))
    );
}

/// A root type named `default` becomes `DefaultType` (the generated code uses `Default`
/// itself), and `type: default` inside it names that type.
#[test]
fn a_root_with_a_reserved_rust_name_gets_another() {
    use default::DefaultType;
    let bytes = [1u8, 1, 0];
    let v = DefaultType::decode(&bytes).unwrap();
    let inner = v.next.as_deref().unwrap();
    assert_eq!(inner.more, 1);
    assert_eq!(
        inner.next.as_deref().map(|n| (n.more, n.next.is_none())),
        Some((0, true))
    );
    assert_eq!(v.encode().unwrap(), bytes);
    assert_eq!(default::SCHEMA_ID, "default");
    let root = default::reflect_decode(&bytes).unwrap();
    assert_eq!(root.schema_type(), "default");
}

/// A trailer (`tail_word`, at `_io.size - 2`) that shares a byte with another positional
/// instance keeps its place: the file is written back as it was read (an input the
/// `kaitai_lang` fuzz target found, where the writer had put the trailer after the other
/// instance and grown the file by a byte).
#[test]
fn a_trailer_sharing_bytes_with_an_instance_stays_where_it_was_read() {
    let input: &[u8] = &[
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x2d, 0x0c, 0x0d, 0x0e,
        0x0f, 0x10, 0x1e, 0x1f, 0x20,
    ];
    let v = positional::Positional::decode(input).unwrap();
    let written = v.encode().unwrap();
    assert!(
        input.starts_with(&written),
        "read {input:02x?}, wrote {written:02x?}"
    );
}
