//! Generated readers and writers, run: the small schemas in `tests/run/` are generated into
//! `tests/run/<stem>.rs` (checked in; refresh with
//! `cargo run -p statepack-codegen -- codegen/tests/run codegen/tests/run`), compiled here
//! and exercised on hand-made bytes. One test per language rule, with exact values.

use statepack_runtime::reflect::Value;
use std::path::Path;

#[allow(dead_code, clippy::all, unused_parens, unused_braces)]
#[path = "run/reflect_view.rs"]
mod reflect_view;

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
        let code = statepack_codegen::generate(&text, &format!("codegen/tests/run/{name}"))
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
    let bytes = [0x52, 0x56, 2, 0x85, 0x01, 1, 0xfd, 0xff, 0x02, 0x01, 9, 8, 0xee];
    let root = reflect_view::reflect_decode(&bytes).expect("decodes; the trailing byte is allowed");
    assert_eq!(root.schema_type(), "reflect_view");
    assert_eq!(
        root.member_names(),
        ["magic", "n", "items", "kind", "body", "extra", "raw"]
    );
    assert!(matches!(root.member("magic"), Some(Value::Bytes(b)) if b.as_ref() == b"RV"));
    // `n` is derived on write (the count of `items`), not a struct member: still answered.
    assert_eq!(int(root.member("n")), 2);
    let Some(Value::List(items)) = root.member("items") else { panic!("items is a list") };
    assert_eq!(items.len(), 2);
    let first = items[0].as_struct().unwrap();
    assert_eq!(first.schema_type(), "item");
    assert!(matches!(first.member("flag"), Some(Value::Bool(true))));
    assert_eq!(int(first.member("rest")), 5);
    assert!(matches!(items[1].as_struct().unwrap().member("flag"), Some(Value::Bool(false))));
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
    let Some(Value::List(raw)) = root.member("raw") else { panic!("raw is a list") };
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
